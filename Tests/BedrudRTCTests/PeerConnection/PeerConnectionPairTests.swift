import BedrudProtocol
import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

/// Two of our own PeerConnections on one loop: the publisher side offers (controlling,
/// DTLS server after the answer's `active`), the subscriber side answers. Candidates are
/// trickled both ways as LiveKit JSON.
final class PeerPair: @unchecked Sendable {
    // @unchecked: immutable after init; the logs are thread-safe.
    let loop = GLibLoop(name: "pair-ice")
    let offerer: PeerConnection
    let answerer: PeerConnection
    let offererEvents = AsyncLog<PeerConnectionEvent>()
    let answererEvents = AsyncLog<PeerConnectionEvent>()
    private var tasks: [Task<Void, Never>] = []

    init(configure: (inout PeerConnectionConfiguration) -> Void = { _ in }) throws {
        var a = InteropSession.loopbackConfiguration(name: "offerer")
        var b = InteropSession.loopbackConfiguration(name: "answerer")
        configure(&a)
        configure(&b)
        offerer = try PeerConnection(configuration: a, loop: loop)
        answerer = try PeerConnection(configuration: b, loop: loop)
        tasks.append(forward(offerer, log: offererEvents, to: answerer))
        tasks.append(forward(answerer, log: answererEvents, to: offerer))
    }

    private func forward(_ from: PeerConnection, log: AsyncLog<PeerConnectionEvent>, to: PeerConnection) -> Task<Void, Never> {
        let stream = from.events
        return Task {
            for await e in stream {
                log.append(e)
                if case .localCandidate(let c) = e { try? await to.addRemoteCandidate(json: c.json) }
                if case .localCandidatesComplete = e { try? await to.addRemoteCandidate(ICECandidateInit(candidate: "", sdpMid: "0", sdpMLineIndex: 0)) }
            }
            log.close()
        }
    }

    /// Offer/answer with a data section; returns the answer text.
    @discardableResult
    func negotiate(iceRestart: Bool = false) async throws -> String {
        let offer = try await offerer.createOffer(iceRestart: iceRestart)
        let tracks = try await answerer.setRemoteOffer(offer).tracks
        #expect(tracks.isEmpty)
        let answer = try await answerer.createAnswer()
        try await offerer.setRemoteAnswer(answer)
        return answer
    }

    func shutdown() async {
        await offerer.close()
        await answerer.close()
        for t in tasks { _ = await t.value }
        loop.shutdown()
    }

    static func run(configure: (inout PeerConnectionConfiguration) -> Void = { _ in }, _ body: (PeerPair) async throws -> Void) async throws {
        let p = try PeerPair(configure: configure)
        do {
            try await body(p)
        } catch {
            await p.shutdown()
            throw error
        }
        await p.shutdown()
    }
}

func isOpened(_ label: String) -> @Sendable (PeerConnectionEvent) -> Bool {
    { if case .dataChannelOpened(let c) = $0 { c.label == label } else { false } }
}

func isMessage(_ label: String, _ data: [UInt8]) -> @Sendable (PeerConnectionEvent) -> Bool {
    { if case .dataChannelMessage(let m) = $0 { m.label == label && m.data == data } else { false } }
}

@Suite("PeerConnection ↔ PeerConnection (publisher offers, subscriber answers)", .serialized)
struct PeerConnectionPairTests {
    @Test("Data channels over DTLS (we are the DTLS server) with messages both ways, LiveKit's two channel kinds")
    func dataChannels() async throws {
        try await PeerPair.run { p in
            await p.offerer.createDataChannel(label: "_reliable", reliability: .reliable)
            await p.offerer.createDataChannel(label: "_lossy", reliability: .lossy)
            let answer = try await p.negotiate()
            #expect(answer.contains("a=setup:active"))
            try await p.offerer.waitUntilConnected(timeoutSeconds: 20)
            try await p.answerer.waitUntilConnected(timeoutSeconds: 20)
            // Channels opened by the DTLS server use odd stream ids (RFC 8832 §6).
            let opened = try await p.answererEvents.first(where: isOpened("_reliable"), timeout: 20)
            if case .dataChannelOpened(let c) = opened { #expect(c.id % 2 == 1 && c.remotelyOpened && c.reliability == .reliable) }
            let lossy = try await p.answererEvents.first(where: isOpened("_lossy"), timeout: 20)
            if case .dataChannelOpened(let c) = lossy { #expect(c.reliability == .lossy) }
            _ = try await p.offererEvents.first(where: isOpened("_lossy"), timeout: 20, "DCEP ACK")

            #expect(await p.offerer.send(Array("chat".utf8), label: "_reliable", binary: false))
            #expect(await p.offerer.send([], label: "_reliable", binary: true))
            let big = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            #expect(await p.offerer.send(big, label: "_reliable"))
            _ = try await p.answererEvents.first(where: isMessage("_reliable", Array("chat".utf8)), timeout: 20)
            _ = try await p.answererEvents.first(where: isMessage("_reliable", []), timeout: 20, "empty message")
            _ = try await p.answererEvents.first(where: isMessage("_reliable", big), timeout: 20, "100 kB message")
            // The answerer writes back on the channel the offerer opened.
            #expect(await p.answerer.send([1, 2, 3], label: "_lossy"))
            _ = try await p.offererEvents.first(where: isMessage("_lossy", [1, 2, 3]), timeout: 20)
            #expect(await !p.offerer.send([0], label: "nope"))
            let s = await p.answerer.stats()
            #expect(s.state == .connected && s.srtpProfile == .aeadAES128GCM && s.selectedPair?.contains("127.0.0.1") == true)
        }
    }

    @Test("usrsctp runs without threads of its own: a quiet association slows its timer to 500 ms, a message brings it back to 20 ms and is delivered and acknowledged")
    func sctpTimersOnTheLoop() async throws {
        try await PeerPair.run { p in
            await p.offerer.createDataChannel(label: "_reliable")
            try await p.negotiate()
            try await p.answerer.waitUntilConnected(timeoutSeconds: 20)
            _ = try await p.offererEvents.first(where: isOpened("_reliable"), timeout: 20, "DCEP ACK")
            // usrsctp_init_nothreads: none of usrsctp's timer or raw-socket receive threads exist.
            let names = Self.threadNames()
            #expect(!names.contains("SCTP timer") && !names.contains { $0.hasPrefix("SCTP/IP") }, "threads: \(names)")
            #expect(names.contains("pair-ice"))
            #expect(await p.offerer.sctpTimerIntervalMs() == 20)
            // Quiet after 2 s without SCTP packets (the delayed SACK goes out within 200 ms).
            let deadline = ContinuousClock.now + .seconds(10)
            while await p.offerer.sctpTimerIntervalMs() != 500, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(await p.offerer.sctpTimerIntervalMs() == 500)
            #expect(await p.offerer.send(Array("after quiet".utf8), label: "_reliable", binary: false))
            #expect(await p.offerer.sctpTimerIntervalMs() == 20)
            _ = try await p.answererEvents.first(where: isMessage("_reliable", Array("after quiet".utf8)), timeout: 10)
            #expect(await p.answerer.send([7], label: "_reliable"))
            _ = try await p.offererEvents.first(where: isMessage("_reliable", [7]), timeout: 10)
            // Acknowledged (SACK, delayed by at most 200 ms + one 20 ms tick).
            #expect(await p.offerer.waitUntilDataSent(timeoutSeconds: 5))
        }
    }

    @Test("Waiting until sent data is acknowledged wakes on SCTP's sender-dry notification, not on a poll or the timeout")
    func dataSentWakesOnSenderDry() async throws {
        try await PeerPair.run { p in
            await p.offerer.createDataChannel(label: "_reliable")
            try await p.negotiate()
            try await p.answerer.waitUntilConnected(timeoutSeconds: 20)
            _ = try await p.offererEvents.first(where: isOpened("_reliable"), timeout: 20, "DCEP ACK")
            #expect(await p.offerer.waitUntilDataSent(timeoutSeconds: 20), "the DCEP OPEN is acknowledged")
            let before = await p.offerer.dataSentResumes()
            #expect(before.senderDryEvents >= 1, "usrsctp reports the association dry")
            // A 20 s safety net: without the wake-up a waiter that has to wait only returns
            // at it. 3 × 60 kB is several congestion windows, so the waiter finds data in
            // flight (a round that finds everything acknowledged already returns at once).
            let start = ContinuousClock.now
            for round in 0..<3 {
                for k in 0..<3 {
                    let message = [UInt8](repeating: UInt8(truncatingIfNeeded: round * 3 + k), count: 60_000)
                    #expect(await p.offerer.send(message, label: "_reliable"))
                }
                #expect(await p.offerer.waitUntilDataSent(timeoutSeconds: 20), "round \(round)")
            }
            let elapsed = ContinuousClock.now - start
            let after = await p.offerer.dataSentResumes()
            #expect(after.timeouts == before.timeouts, "no waiter waited for its timeout")
            #expect(after.wakeups > before.wakeups, "a waiter found data in flight and was woken")
            #expect(elapsed < .seconds(10), "\(elapsed)")
            let last = [UInt8](repeating: 8, count: 60_000)
            _ = try await p.answererEvents.first(where: isMessage("_reliable", last), timeout: 20, "the last message")
            print("data-sent wake-up: \(after.wakeups - before.wakeups) of 3 rounds woken, \(after.senderDryEvents - before.senderDryEvents) sender-dry events, \(elapsed)")
        }
    }

    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test("ICE-TCP only (RFC 6544) connects on loopback")
    func iceTCP() async throws {
        try await PeerPair.run(configure: { c in
            c.ice.udp = false
            c.ice.tcp = true
        }) { p in
            await p.offerer.createDataChannel(label: "_reliable")
            let answer = try await p.negotiate()
            #expect(answer.contains("tcptype"))
            #expect(!answer.contains(" UDP "))
            try await p.answerer.waitUntilConnected(timeoutSeconds: 30)
            _ = try await p.answererEvents.first(where: isOpened("_reliable"), timeout: 20)
            #expect(await p.offerer.send([42], label: "_reliable"))
            _ = try await p.answererEvents.first(where: isMessage("_reliable", [42]), timeout: 20)
            let pair = await p.answerer.stats().selectedPair ?? ""
            #expect(pair.contains("/tcp"), "selected pair \(pair)")
        }
    }

    @Test("ICE restart: new credentials, the same DTLS session keeps carrying data")
    func iceRestart() async throws {
        try await PeerPair.run { p in
            await p.offerer.createDataChannel(label: "_reliable")
            let first = try await p.negotiate()
            try await p.answerer.waitUntilConnected(timeoutSeconds: 20)
            _ = try await p.answererEvents.first(where: isOpened("_reliable"), timeout: 20)
            let second = try await p.negotiate(iceRestart: true)
            let ufrag = { (s: String) in try SessionDescription(parsing: s).media[0].iceUfrag }
            #expect(try ufrag(first) != ufrag(second))
            #expect(await p.offerer.send([7, 7], label: "_reliable"))
            _ = try await p.answererEvents.first(where: isMessage("_reliable", [7, 7]), timeout: 20)
            // The agents really went through checks again.
            let ready: @Sendable (PeerConnectionEvent) -> Bool = { $0 == .iceStateChanged(.completed) }
            try await waitUntil("both sides' channels open", timeout: 20) { p.answererEvents.count(where: ready) >= 2 && p.offererEvents.count(where: ready) >= 2 }
            #expect(await p.answerer.state == .connected)
        }
    }

    @Test("Calls out of order are refused with a clear error; close ends the event stream")
    func misuse() async throws {
        let loop = GLibLoop(name: "misuse")
        defer { loop.shutdown() }
        let pc = try PeerConnection(configuration: InteropSession.loopbackConfiguration(), loop: loop)
        await #expect(throws: PeerConnectionError.self) { try await pc.createAnswer() }
        await #expect(throws: PeerConnectionError.self) { try await pc.setRemoteAnswer(SDPFixtures.aiortcAnswer) }
        await #expect(throws: PeerConnectionError.self) { try await pc.setRemoteOffer("v=0\r\nbogus") }
        await #expect(throws: PeerConnectionError.self) { try await pc.addRemoteCandidate(json: "{}") }
        await #expect(throws: PeerConnectionError.self) { try await pc.addRemoteCandidate(json: #"{"candidate":"candidate:1 1 udp 1 x.local 9 typ host"}"#) }
        // Candidates before the offer are queued, not refused.
        try await pc.addRemoteCandidate(json: #"{"candidate":"candidate:1 1 udp 2130706431 127.0.0.1 9 typ host","sdpMid":"0"}"#)
        _ = try await pc.setRemoteOffer(SDPFixtures.aiortcOffer)
        await #expect(throws: PeerConnectionError.self) { try await pc.createOffer() }
        await pc.close()
        await #expect(throws: PeerConnectionError.self) { try await pc.createAnswer() }
        var sawClosed = false
        for await e in pc.events { if e == .closed { sawClosed = true } }
        #expect(sawClosed)
    }

    @Test("Unanswered peer: the connect timeout fails the connection with an ICE timeout")
    func connectTimeout() async throws {
        let loop = GLibLoop(name: "timeout")
        defer { loop.shutdown() }
        var cfg = InteropSession.loopbackConfiguration()
        cfg.connectTimeoutSeconds = 1
        let pc = try PeerConnection(configuration: cfg, loop: loop)
        // aiortc's offer points at a port nobody listens on any more.
        _ = try await pc.setRemoteOffer(SDPFixtures.aiortcOffer)
        _ = try await pc.createAnswer()
        do {
            try await pc.waitUntilConnected(timeoutSeconds: 20)
            Issue.record("connected to nobody")
        } catch let e as PeerConnectionError {
            #expect(e.isTimeout)
            #expect(e.description.contains("did not connect in time"))
        }
        #expect(await pc.state == .failed)
        await pc.close()
    }
}

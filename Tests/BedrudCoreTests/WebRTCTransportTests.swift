@testable import BedrudCore
import BedrudProtocol
import BedrudRTC
import Foundation
import Synchronization
import Testing
import TestSupport

/// ``WebRTCTransport`` against one of our own PeerConnections playing LiveKit's side
/// (it offers on the subscriber connection, as LiveKit does), through coturn on loopback.
@Suite(.serialized) struct WebRTCTransportTests {
    /// coturn with time-limited credentials (`use-auth-secret`) on a free port of
    /// 127.0.0.1, for one test (installed by scripts/bootstrap).
    final class Coturn: Sendable {
        let process: ChildProcess
        let port: UInt16

        init(secret: String) async throws {
            let exe = "/usr/bin/turnserver"
            guard FileManager.default.isExecutableFile(atPath: exe) else {
                throw TestSupportError("\(exe) is missing; run scripts/bootstrap (it installs coturn)")
            }
            port = try Self.freePort()
            let relayBase = Int.random(in: 20_000...28_000)
            process = try ChildProcess(URL(fileURLWithPath: exe), [
                "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
                "--min-port=\(relayBase)", "--max-port=\(relayBase + 200)", "--realm=bedrud.test",
                "--use-auth-secret", "--static-auth-secret=\(secret)", "--verbose",
                "--allow-loopback-peers", "--no-tls", "--no-dtls", "--no-cli", "--log-file=stdout", "--simple-log",
                "--pidfile=\(NSTemporaryDirectory())turn-\(port).pid", "--no-stun-backward-compatibility",
            ], mergeStderr: true)
            do {
                try await process.line(timeout: 20, "coturn listening") { $0.contains("Total General servers") }
            } catch {
                stop()
                throw error
            }
        }

        var url: String { "turn:127.0.0.1:\(port)?transport=udp" }

        func stop() { _ = process.stop(grace: 0) }

        /// ``stop()`` without blocking Swift's cooperative pool (it waits for the reap).
        func stopped() async { _ = try? await offPool { [process] in process.stop(grace: 0) } }

        /// Whether coturn allocated a relay for `username`.
        func allocated(for username: String) -> Bool {
            process.lines().contains { $0.contains("user <\(username)>: incoming packet ALLOCATE processed, success") }
        }

        /// A LiveKit ICE server with credentials for `name` valid until `expiry` (unix
        /// seconds): username `<expiry>:<name>`, password base64(HMAC-SHA1(secret, username)).
        static func server(_ url: String, secret: String, name: String, expiry: Int) async throws -> LiveKit.ICEServer {
            let username = "\(expiry):\(name)"
            let r = try await offPool { try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
                import base64, hashlib, hmac, sys
                print(base64.b64encode(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha1).digest()).decode())
                """, secret, username], timeout: 30) }
            let password = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            return .with { $0.urls = [url]; $0.username = username; $0.credential = password }
        }

        static func freePort() throws -> UInt16 {
            for _ in 0..<50 {
                let candidate = UInt16.random(in: 30_000...39_000)
                if isFree(candidate, SOCK_DGRAM) && isFree(candidate, SOCK_STREAM) { return candidate }
            }
            throw TestSupportError("no free port for coturn")
        }

        private static func isFree(_ port: UInt16, _ type: __socket_type) -> Bool {
            let fd = socket(AF_INET, Int32(type.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            return withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
        }
    }

    /// What the transport reported, in order.
    final class Events: Sendable {
        let all = Mutex<[TransportEvent]>([])
        func append(_ e: TransportEvent) { all.withLock { $0.append(e) } }
        func contains(_ p: (TransportEvent) -> Bool) -> Bool { all.withLock { $0.contains(where: p) } }
        /// The bot's publisher offers (SDP), in order.
        var offers: [String] { all.withLock { $0.compactMap { if case .offerCreated(let sdp) = $0 { sdp } else { nil } } } }
        var relayCandidates: Int {
            all.withLock { $0.filter { if case .localCandidate(let c, _) = $0 { c.candidate.contains("typ relay") } else { false } }.count }
        }
    }

    static func offer(_ sdp: String) -> LiveKit.SessionDescription { .with { $0.type = "offer"; $0.sdp = sdp } }

    /// A resume's `ice_servers` (fresh TURN credentials, another relay server) reach the
    /// subscriber connection through ``WebRTCTransport/updateICEServers(_:)``: after the
    /// join's credentials expired and their relay server went away, the ICE restart LiveKit
    /// starts after a resume allocates on the new server with the new username and carries
    /// data again. Without the forwarding, the restarted agent has only the dead relay.
    @Test func aResumesFreshTURNCredentialsReachTheRestartedConnection() async throws {
        let secret = "bedrud-turn-test-secret"
        let firstTurn = try await Coturn(secret: secret)
        defer { firstTurn.stop() }
        let expiry = Int(Date().timeIntervalSince1970) + 4
        let joinServers = [try await Coturn.server(firstTurn.url, secret: secret, name: "bot", expiry: expiry)]

        // LiveKit's side: host candidates on loopback, no TURN.
        let loop = GLibLoop(name: "sfu-ice")
        var c = PeerConnectionConfiguration()
        c.name = "sfu"
        c.ice.localAddresses = ["127.0.0.1"]
        let sfu = try PeerConnection(configuration: c, loop: loop)
        let sfuEvents = Mutex<[PeerConnectionEvent]>([])
        let transport = WebRTCTransport(router: nil, localAddresses: ["127.0.0.1"], relayOnly: true)
        let events = Events()
        let trickle = Task {
            for await e in sfu.events {
                sfuEvents.withLock { $0.append(e) }
                if case .localCandidate(let candidate) = e { await transport.addRemoteCandidate(candidate, target: .subscriber) }
            }
        }
        defer {
            trickle.cancel()
            loop.shutdown()
        }
        try await transport.create(TransportConfiguration(iceServers: joinServers, forceRelay: false, subscriberPrimary: true)) { e in
            events.append(e)
            if case .localCandidate(let candidate, .subscriber) = e { Task { try? await sfu.addRemoteCandidate(candidate) } }
        }

        await sfu.createDataChannel(label: "_reliable")
        try await sfu.setRemoteAnswer(try await transport.applyRemoteOffer(Self.offer(try await sfu.createOffer()), target: .subscriber))
        try await waitUntil("the subscriber connected", timeout: 30) { events.contains { if case .stateChanged(.subscriber, .connected) = $0 { true } else { false } } }
        try await waitUntil("the channel acknowledged", timeout: 20) {
            sfuEvents.withLock { $0.contains { if case .dataChannelOpened(let i) = $0 { i.label == "_reliable" } else { false } } }
        }
        #expect((await transport.stats()?.selectedPair ?? "").contains("relay"), "relay only")
        #expect(firstTurn.allocated(for: joinServers[0].username))

        // The join's credentials expire; their relay server goes away with the allocation.
        try await waitUntilWallClock(passes: Double(expiry))
        await firstTurn.stopped()
        let nextTurn = try await Coturn(secret: secret)
        defer { nextTurn.stop() }
        let relaysBefore = events.relayCandidates

        // The resume: ReconnectResponse.ice_servers names the new server, fresh credentials.
        let fresh = try await Coturn.server(nextTurn.url, secret: secret, name: "bot-resumed", expiry: Int(Date().timeIntervalSince1970) + 300)
        await transport.updateICEServers([fresh])
        // LiveKit restarts ICE after a resume: its offer with new ICE credentials.
        try await sfu.setRemoteAnswer(try await transport.applyRemoteOffer(Self.offer(try await sfu.createOffer(iceRestart: true)), target: .subscriber))

        try await waitUntil("coturn allocating for the fresh username", timeout: 20) { nextTurn.allocated(for: fresh.username) }
        try await waitUntil("the restarted agent's relay candidate", timeout: 20) { events.relayCandidates > relaysBefore }
        #expect(await sfu.send([4, 2], label: "_reliable"))
        try await waitUntil("data over the new relay", timeout: 30) {
            events.contains { if case .dataReceived(let d, reliable: true) = $0 { d == [4, 2] } else { false } }
        }
        let pair = await transport.stats()?.selectedPair ?? ""
        #expect(pair.contains("relay") && pair.contains("127.0.0.1"), "selected pair \(pair)")
        await transport.shutdown()
        await sfu.close()
    }

    /// Waits, as `smoke` does, until `done` holds for both connections' statistics: reads
    /// the change count, then the statistics, and waits for the next change (30 s safety
    /// net). Returns how many waits it took and the longest.
    static func watch(_ transport: WebRTCTransport, until done: (PeerConnectionStats?, PeerConnectionStats?) -> Bool) async throws -> (waits: Int, longest: Duration) {
        var waits = 0
        var longest = Duration.zero
        for _ in 0..<100 {
            let seen = transport.connectionChanges
            if done(await transport.stats(), await transport.publisherStats()) { return (waits, longest) }
            let t = ContinuousClock.now
            let now = await transport.waitForConnectionChange(after: seen, timeoutSeconds: 30)
            #expect(now > seen, "woken by a change, not the timeout")
            waits += 1
            longest = max(longest, ContinuousClock.now - t)
        }
        throw TestSupportError("100 connection changes without the awaited state")
    }

    /// Both connections' state changes (subscriber and publisher) wake a caller waiting for
    /// the next one, as the smoke test's ICE and DTLS stages do; so do the room's end and
    /// the waiting task's cancellation, and the timeout returns the count unchanged. Without
    /// the wake-ups each wait below lasts its 30 s timeout.
    @Test func connectionChangesWakeTheirWaiter() async throws {
        let transport = WebRTCTransport(router: nil, localAddresses: ["127.0.0.1"], connectTimeoutSeconds: 20, publishData: true)
        // Nothing changes before the connections exist: the wait ends at its timeout, unchanged.
        let g0 = transport.connectionChanges
        let t0 = ContinuousClock.now
        #expect(await transport.waitForConnectionChange(after: g0, timeoutSeconds: 0.2) == g0)
        #expect(ContinuousClock.now - t0 >= .milliseconds(200))

        // LiveKit's side: one connection offering (the subscriber's), one answering (the publisher's).
        let loop = GLibLoop(name: "sfu-changes")
        var c = PeerConnectionConfiguration()
        c.name = "sfu"
        c.ice.localAddresses = ["127.0.0.1"]
        let sfuSub = try PeerConnection(configuration: c, loop: loop)
        let sfuPub = try PeerConnection(configuration: c, loop: loop)
        let events = Events()
        let trickle = [(sfuSub, LiveKit.SignalTarget.subscriber), (sfuPub, .publisher)].map { sfu, target in
            Task { for await e in sfu.events { if case .localCandidate(let candidate) = e { await transport.addRemoteCandidate(candidate, target: target) } } }
        }
        defer {
            for t in trickle { t.cancel() }
            loop.shutdown()
        }
        let watcher = Task { try await Self.watch(transport) { $0?.state == .connected && $1?.state == .connected } }
        try await transport.create(TransportConfiguration(iceServers: [], forceRelay: false, subscriberPrimary: true)) { e in
            events.append(e)
            if case .localCandidate(let candidate, let target) = e { Task { try? await (target == .subscriber ? sfuSub : sfuPub).addRemoteCandidate(candidate) } }
        }
        await sfuSub.createDataChannel(label: "_reliable")
        try await sfuSub.setRemoteAnswer(try await transport.applyRemoteOffer(Self.offer(try await sfuSub.createOffer()), target: .subscriber))
        let offer = try await waitFor("the bot's publisher offer", timeout: 20) { events.offers.first }
        _ = try await sfuPub.setRemoteOffer(offer)
        let answer = try await sfuPub.createAnswer()
        try await transport.applyRemoteAnswer(.with { $0.type = "answer"; $0.sdp = answer }, target: .publisher)
        let connecting = try await watcher.value
        #expect(connecting.waits >= 2, "pair, DTLS and connected come as changes")
        #expect(connecting.longest < .seconds(10), "longest wait \(connecting.longest)")
        // A count already passed: at once.
        let g = transport.connectionChanges
        let tg = ContinuousClock.now
        #expect(await transport.waitForConnectionChange(after: g - 1, timeoutSeconds: 30) == g)
        #expect(ContinuousClock.now - tg < .seconds(10))

        // The subscriber fails (LiveKit's side closes DTLS): the next change says so.
        await sfuSub.close()
        let failing = try await Self.watch(transport) { sub, _ in sub?.state == .failed }
        #expect(failing.longest < .seconds(10), "longest wait \(failing.longest)")

        // The room's end (a room session calls cancelDataChannelWaits) wakes a waiter.
        let g1 = transport.connectionChanges
        let t1 = ContinuousClock.now
        async let ended = transport.waitForConnectionChange(after: g1, timeoutSeconds: 30)
        try await waitUntil("the wait is registered", timeout: 10, every: 0.01) { transport.connectionChangeWaiters == 1 }
        transport.cancelDataChannelWaits()
        #expect(await ended > g1)
        #expect(ContinuousClock.now - t1 < .seconds(10))

        // Cancelling the waiting task ends its wait at once (smoke waits on two transports
        // and cancels the other wait when one wakes).
        let g2 = transport.connectionChanges
        let t2 = ContinuousClock.now
        let cancelled = Task { await transport.waitForConnectionChange(after: g2, timeoutSeconds: 30) }
        try await waitUntil("the wait is registered", timeout: 10, every: 0.01) { transport.connectionChangeWaiters == 1 }
        cancelled.cancel()
        #expect(await cancelled.value == g2)
        #expect(ContinuousClock.now - t2 < .seconds(10))
        #expect(transport.connectionChangeWaiters == 0)

        await transport.shutdown()
        await sfuPub.close()
    }

    /// The same for the publisher connection (the bot's data channels): its ICE restart is
    /// the bot's own offer after a resume (``WebRTCTransport/restartICE(_:)``), and it too
    /// must gather on the resume's servers.
    @Test func aResumesFreshTURNCredentialsReachTheRestartedPublisher() async throws {
        let secret = "bedrud-turn-test-secret"
        let firstTurn = try await Coturn(secret: secret)
        defer { firstTurn.stop() }
        let expiry = Int(Date().timeIntervalSince1970) + 4
        let joinServers = [try await Coturn.server(firstTurn.url, secret: secret, name: "bot", expiry: expiry)]

        // LiveKit's side of the publisher connection: it answers the bot's offers.
        let loop = GLibLoop(name: "sfu-pub-ice")
        var c = PeerConnectionConfiguration()
        c.name = "sfu"
        c.ice.localAddresses = ["127.0.0.1"]
        let sfu = try PeerConnection(configuration: c, loop: loop)
        let sfuEvents = Mutex<[PeerConnectionEvent]>([])
        let transport = WebRTCTransport(router: nil, localAddresses: ["127.0.0.1"], publishData: true, relayOnly: true)
        let events = Events()
        let trickle = Task {
            for await e in sfu.events {
                sfuEvents.withLock { $0.append(e) }
                if case .localCandidate(let candidate) = e { await transport.addRemoteCandidate(candidate, target: .publisher) }
            }
        }
        defer {
            trickle.cancel()
            loop.shutdown()
        }
        try await transport.create(TransportConfiguration(iceServers: joinServers, forceRelay: false, subscriberPrimary: true)) { e in
            events.append(e)
            if case .localCandidate(let candidate, .publisher) = e { Task { try? await sfu.addRemoteCandidate(candidate) } }
        }
        func answerOffer(_ n: Int) async throws {
            let offer = try await waitFor("the bot's offer \(n)", timeout: 20) { events.offers.count >= n ? events.offers[n - 1] : nil }
            _ = try await sfu.setRemoteOffer(offer)
            let answer = try await sfu.createAnswer()
            try await transport.applyRemoteAnswer(.with { $0.type = "answer"; $0.sdp = answer }, target: .publisher)
        }
        try await answerOffer(1)
        #expect(await transport.waitForDataChannel("_reliable", timeoutSeconds: 30))
        #expect((await transport.publisherStats()?.selectedPair ?? "").contains("relay"), "relay only")
        #expect(firstTurn.allocated(for: joinServers[0].username))

        try await waitUntilWallClock(passes: Double(expiry))
        await firstTurn.stopped()
        let nextTurn = try await Coturn(secret: secret)
        defer { nextTurn.stop() }
        let relaysBefore = events.relayCandidates

        let fresh = try await Coturn.server(nextTurn.url, secret: secret, name: "bot-resumed", expiry: Int(Date().timeIntervalSince1970) + 300)
        await transport.updateICEServers([fresh])
        // After a resume with published tracks, the bot restarts the publisher's ICE itself.
        await transport.restartICE(.publisher)
        try await answerOffer(2)

        try await waitUntil("coturn allocating for the fresh username", timeout: 20) { nextTurn.allocated(for: fresh.username) }
        try await waitUntil("the restarted agent's relay candidate", timeout: 20) { events.relayCandidates > relaysBefore }
        #expect(await transport.sendData([4, 2], reliable: true))
        try await waitUntil("data over the new relay", timeout: 30) {
            sfuEvents.withLock { $0.contains { if case .dataChannelMessage(let m) = $0 { m.label == "_reliable" && m.data == [4, 2] } else { false } } }
        }
        let pair = await transport.publisherStats()?.selectedPair ?? ""
        #expect(pair.contains("relay") && pair.contains("127.0.0.1"), "selected pair \(pair)")
        await transport.shutdown()
        await sfu.close()
    }
}

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
        try await RelayRestartRoom.run(.subscriber) { room in
            let (sfu, transport, events) = (room.sfu, room.transport, room.events)
            await sfu.createDataChannel(label: "_reliable")
            try await sfu.setRemoteAnswer(try await transport.applyRemoteOffer(Self.offer(try await sfu.createOffer()), target: .subscriber))
            try await waitUntil("the subscriber connected", timeout: 30) { events.contains { if case .stateChanged(.subscriber, .connected) = $0 { true } else { false } } }
            try await waitUntil("the channel acknowledged", timeout: 20) {
                room.sfuEvents.contains { if case .dataChannelOpened(let i) = $0 { i.label == "_reliable" } else { false } }
            }
            #expect((await transport.stats()?.selectedPair ?? "").contains("relay"), "relay only")
            #expect(room.firstTurn.allocated(for: room.joinServer.username))

            let resume = try await room.expireAndResume()
            // LiveKit restarts ICE after a resume: its offer with new ICE credentials.
            try await sfu.setRemoteAnswer(try await transport.applyRemoteOffer(Self.offer(try await sfu.createOffer(iceRestart: true)), target: .subscriber))

            try await room.waitForNewRelay(resume)
            #expect(await sfu.send([4, 2], label: "_reliable"))
            try await waitUntil("data over the new relay", timeout: 30) {
                events.contains { if case .dataReceived(let d, reliable: true) = $0 { d == [4, 2] } else { false } }
            }
            let pair = await transport.stats()?.selectedPair ?? ""
            #expect(pair.contains("relay") && pair.contains("127.0.0.1"), "selected pair \(pair)")
        }
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
        try await RelayRestartRoom.run(.publisher) { room in
            let (sfu, transport, events) = (room.sfu, room.transport, room.events)
            // LiveKit's side of the publisher connection answers the bot's offers.
            func answerOffer(_ n: Int) async throws {
                let offer = try await waitFor("the bot's offer \(n)", timeout: 20) { events.offers.count >= n ? events.offers[n - 1] : nil }
                _ = try await sfu.setRemoteOffer(offer)
                let answer = try await sfu.createAnswer()
                try await transport.applyRemoteAnswer(.with { $0.type = "answer"; $0.sdp = answer }, target: .publisher)
            }
            try await answerOffer(1)
            #expect(await transport.waitForDataChannel("_reliable", timeoutSeconds: 30))
            #expect((await transport.publisherStats()?.selectedPair ?? "").contains("relay"), "relay only")
            #expect(room.firstTurn.allocated(for: room.joinServer.username))

            let resume = try await room.expireAndResume()
            // After a resume with published tracks, the bot restarts the publisher's ICE itself.
            await transport.restartICE(.publisher)
            try await answerOffer(2)

            try await room.waitForNewRelay(resume)
            #expect(await transport.sendData([4, 2], reliable: true))
            try await waitUntil("data over the new relay", timeout: 30) {
                room.sfuEvents.contains { if case .dataChannelMessage(let m) = $0 { m.label == "_reliable" && m.data == [4, 2] } else { false } }
            }
            let pair = await transport.publisherStats()?.selectedPair ?? ""
            #expect(pair.contains("relay") && pair.contains("127.0.0.1"), "selected pair \(pair)")
        }
    }
}

/// The room of both fresh-TURN tests: coturn with time-limited credentials that expire
/// 4 s after the join, the bot's ``WebRTCTransport`` relay-only through it, and one of our
/// PeerConnections playing LiveKit's side of the `target` connection on host candidates
/// of loopback (no TURN), candidates trickled both ways.
final class RelayRestartRoom: Sendable {
    static let secret = "bedrud-turn-test-secret"

    /// The relay server of the join, and its credentials (username `<expiry>:bot`).
    let firstTurn: TURNServer
    let joinServer: LiveKit.ICEServer
    let expiry: Int
    let sfu: PeerConnection
    /// What LiveKit's side reported, in order.
    let sfuEvents: SFUEvents
    let transport: WebRTCTransport
    let events: WebRTCTransportTests.Events
    private let loop: GLibLoop
    private let trickle: Task<Void, Never>
    /// Relay servers started after the join, stopped with the room.
    private let laterServers = Mutex<[TURNServer]>([])

    final class SFUEvents: Sendable {
        private let all = Mutex<[PeerConnectionEvent]>([])
        func append(_ e: PeerConnectionEvent) { all.withLock { $0.append(e) } }
        func contains(_ p: (PeerConnectionEvent) -> Bool) -> Bool { all.withLock { $0.contains(where: p) } }
    }

    /// What ``expireAndResume()`` left: the resume's relay server and its ICE server entry
    /// (fresh credentials), and how many relay candidates the bot had gathered before.
    struct Resume {
        let turn: TURNServer
        let server: LiveKit.ICEServer
        let relaysBefore: Int
    }

    /// Runs `body` in a new room, and closes the room however `body` ends.
    static func run(_ target: LiveKit.SignalTarget, _ body: (RelayRestartRoom) async throws -> Void) async throws {
        let room = try await RelayRestartRoom(target)
        do {
            try await body(room)
        } catch {
            await room.close()
            throw error
        }
        await room.close()
    }

    private init(_ target: LiveKit.SignalTarget) async throws {
        let firstTurn = try await TURNServer(auth: .secret(Self.secret))
        let expiry = Int(Date().timeIntervalSince1970) + 4
        let joinServer: LiveKit.ICEServer, sfu: PeerConnection
        let loop = GLibLoop(name: target == .publisher ? "sfu-pub-ice" : "sfu-ice")
        do {
            joinServer = try await Self.iceServer(firstTurn, name: "bot", expiry: expiry)
            var c = PeerConnectionConfiguration()
            c.name = "sfu"
            c.ice.localAddresses = ["127.0.0.1"]
            sfu = try PeerConnection(configuration: c, loop: loop)
        } catch {
            loop.shutdown()
            await firstTurn.stopped()
            throw error
        }
        let transport = WebRTCTransport(router: nil, localAddresses: ["127.0.0.1"], publishData: target == .publisher, relayOnly: true)
        let sfuEvents = SFUEvents(), events = WebRTCTransportTests.Events()
        self.firstTurn = firstTurn
        self.expiry = expiry
        self.joinServer = joinServer
        self.loop = loop
        self.sfu = sfu
        self.transport = transport
        self.sfuEvents = sfuEvents
        self.events = events
        trickle = Task {
            for await e in sfu.events {
                sfuEvents.append(e)
                if case .localCandidate(let candidate) = e { await transport.addRemoteCandidate(candidate, target: target) }
            }
        }
        do {
            try await transport.create(TransportConfiguration(iceServers: [joinServer], forceRelay: false, subscriberPrimary: true)) { e in
                events.append(e)
                if case .localCandidate(let candidate, let from) = e, from == target { Task { try? await sfu.addRemoteCandidate(candidate) } }
            }
        } catch {
            await close()
            throw error
        }
    }

    /// The join's credentials expire and their relay server goes away with the allocation;
    /// the resume's `ice_servers` (ReconnectResponse) name another server with fresh
    /// credentials, and they reach the transport. The ICE restart is the caller's.
    func expireAndResume() async throws -> Resume {
        try await waitUntilWallClock(passes: Double(expiry))
        await firstTurn.stopped()
        let next = try await TURNServer(auth: .secret(Self.secret))
        laterServers.withLock { $0.append(next) }
        let relaysBefore = events.relayCandidates
        let fresh = try await Self.iceServer(next, name: "bot-resumed", expiry: Int(Date().timeIntervalSince1970) + 300)
        await transport.updateICEServers([fresh])
        return Resume(turn: next, server: fresh, relaysBefore: relaysBefore)
    }

    /// After the ICE restart: the new server allocated for the fresh username, and the
    /// restarted agent gathered a relay candidate on it.
    func waitForNewRelay(_ resume: Resume) async throws {
        try await resume.turn.waitForAllocation(for: resume.server.username, timeout: 20)
        try await waitUntil("the restarted agent's relay candidate", timeout: 20) { events.relayCandidates > resume.relaysBefore }
    }

    private func close() async {
        await transport.shutdown()
        await sfu.close()
        trickle.cancel()
        loop.shutdown()
        await firstTurn.stopped()
        for server in laterServers.withLock({ $0 }) { await server.stopped() }
    }

    /// A LiveKit ICE server entry for `turn` with `name`'s credentials, valid until `expiry` (unix seconds).
    private static func iceServer(_ turn: TURNServer, name: String, expiry: Int) async throws -> LiveKit.ICEServer {
        let (username, password) = try await TURNServer.credentials(secret: secret, name: name, expiry: expiry)
        return .with { $0.urls = [turn.url()]; $0.username = username; $0.credential = password }
    }
}

import BedrudCore
import BedrudProtocol
import BedrudRTC
import Foundation
import Synchronization
import Testing
import TestSupport

/// `WebRTCTransport.updateICEServers`, the call that hands a resume's servers to the
/// transport's peer connections, with real ICE through coturn: the transport receives over
/// a relay only, as a subscriber answering an offer (here our own PeerConnection stands for
/// LiveKit's side); the relay's time-limited credentials expire and its server restarts,
/// taking the allocation with it; the transport is given fresh credentials, the offerer
/// restarts ICE (as LiveKit does after a resume), and the new agent allocates with the new
/// credentials and connects again. RoomManager → transport on a resume is
/// `RoomManagerResumeTests`; PeerConnection alone is `TURNCredentialRefreshTests`.
@Suite(.serialized) struct WebRTCTransportRelayTests {
    /// Transport events, kept for waiting on.
    final class Events: Sendable {
        let log = Mutex<[TransportEvent]>([])
        var connectedCount: Int {
            log.withLock { $0.filter { if case .stateChanged(.subscriber, .connected) = $0 { true } else { false } }.count }
        }
        var failed: Bool {
            log.withLock { $0.contains { if case .stateChanged(.subscriber, .failed) = $0 { true } else { false } } }
        }
    }

    @Test func freshCredentialsReachTheConnectionsForTheICERestart() async throws {
        let secret = "bedrud-transport-relay-secret"
        var turn = try await TURNServer(auth: .secret(secret))
        let port = turn.port
        defer { turn.stop() }
        let expiry = Int(Date().timeIntervalSince1970) + 4
        let first = try await TURNServer.credentials(secret: secret, name: "bot", expiry: expiry)

        // LiveKit's side: one of our own PeerConnections offering a data section on loopback.
        let loop = GLibLoop(name: "relay-sfu")
        defer { loop.shutdown() }
        var sfuConfig = PeerConnectionConfiguration()
        sfuConfig.ice.localAddresses = ["127.0.0.1"]
        sfuConfig.ice.tcp = false
        sfuConfig.name = "sfu"
        let sfu = try PeerConnection(configuration: sfuConfig, loop: loop)
        defer { Task { await sfu.close() } }
        await sfu.createDataChannel(label: "_reliable")

        // The bot's transport: relay only, with the first credentials.
        let transport = WebRTCTransport(router: nil, localAddresses: ["127.0.0.1"], relayOnly: true)
        defer { Task { await transport.shutdown() } }
        let events = Events()
        let server = LiveKit.ICEServer.with {
            $0.urls = [turn.url()]
            $0.username = first.username
            $0.credential = first.password
        }
        try await transport.create(TransportConfiguration(iceServers: [server], forceRelay: true, subscriberPrimary: true)) { e in
            events.log.withLock { $0.append(e) }
            if case .localCandidate(let c, .subscriber) = e { Task { try? await sfu.addRemoteCandidate(c) } }
        }
        let sfuEvents = sfu.events
        let forward = Task {
            for await e in sfuEvents {
                if case .localCandidate(let c) = e { await transport.addRemoteCandidate(c, target: .subscriber) }
            }
        }
        defer { forward.cancel() }
        func negotiate(iceRestart: Bool) async throws {
            let offer = try await sfu.createOffer(iceRestart: iceRestart)
            let answer = try await transport.applyRemoteOffer(LiveKit.SessionDescription.with { $0.type = "offer"; $0.sdp = offer }, target: .subscriber)
            try await sfu.setRemoteAnswer(answer)
        }
        try await negotiate(iceRestart: false)
        try await waitUntil("connected over the first relay", timeout: 30) { events.connectedCount >= 1 }
        #expect((await transport.stats()?.selectedPair ?? "").contains("relay"))

        // The credentials expire, and the relay server restarts on its port.
        try await waitUntilWallClock(passes: Double(expiry))
        await turn.stopped()
        turn = try await TURNServer(auth: .secret(secret), port: port)

        // A resume's servers: fresh credentials for the same relay address.
        let next = try await TURNServer.credentials(secret: secret, name: "bot-resumed", expiry: Int(Date().timeIntervalSince1970) + 300)
        await transport.updateICEServers([LiveKit.ICEServer.with {
            $0.urls = [turn.url()]
            $0.username = next.username
            $0.credential = next.password
        }])
        try await negotiate(iceRestart: true)
        try await turn.waitForAllocation(for: next.username, timeout: 30)
        #expect(!turn.triedAllocating(for: first.username), "the expired credentials were not used again")
        try await waitUntil("connected over the new relay", timeout: 60) { (await transport.stats()?.selectedPair ?? "").contains("relay") && !events.failed }
    }
}

import BedrudCore
import BedrudProtocol
import Foundation
import Testing
import TestSupport

/// What a resume hands the WebRTC layer, through the whole RoomManager: the signalling
/// connection drops, the resume is answered with a `reconnect` carrying fresh TURN
/// credentials (LiveKit >= 1.12), and those servers reach the transport before the ICE
/// restart that follows (WebRTCTransportTests shows them reaching the peer connection).
@Suite struct RoomManagerResumeTests {
    @Test func aReconnectResponsesICEServersReachTheTransport() async throws {
        let fresh = LiveKit.ICEServer.with {
            $0.urls = ["turn:127.0.0.1:3478?transport=udp"]
            $0.username = "1767225600:bot-resumed"
            $0.credential = "fresh-credential"
        }
        let reconnect = LiveKit.SignalResponse.Message.reconnect(.with { $0.iceServers = [fresh] })
        // The join's connection is dropped after a second; the resume is answered.
        let server = try HostileSignalServer(
            onJoin: .init(frames: [HostileSignalServer.frame(HostileSignalServer.join())], holdSeconds: 1),
            onResume: .init(frames: [HostileSignalServer.frame(reconnect)], holdSeconds: 30))
        defer { server.stop() }
        var options = RoomManagerOptions()
        options.state.maxJitterMs = 0
        let fake = FakeRoomTransport()
        let room = RoomManager(livekitHost: server.livekitHost, tls: .system, clientVersion: "test", options: options,
                               transport: fake, tokenProvider: { "fresh-token" })
        let drain = Task { for await _ in room.events {} }
        await room.connect(token: "t0k")
        do {
            try await waitUntil("the resume's servers at the transport", timeout: 20) { !fake.iceServerUpdates.isEmpty }
        } catch {
            Issue.record("\(error); upgrades \(server.upgrades.map(\.resume)), transport calls \(fake.calls), state \(await room.current.connectionState)")
        }
        #expect(server.upgrades.map(\.resume) == [false, true], "one join, one resume")
        #expect(fake.iceServerUpdates == [[fresh]])
        #expect(fake.calls.filter { $0 == .create }.count == 1, "a resume keeps the peer connections")
        await room.leave(timeout: 2)
        await drain.value
    }
}

import BedrudCore
import BedrudNet
import BedrudProtocol
import Foundation
import Testing
import TestSupport

/// The RoomManager against fake LiveKit servers that misbehave: every case ends in a
/// clean `disconnected(reason)` within a bounded time — no crash, no hang.
@Suite struct RoomManagerTests {
    static func acceptKey(_ head: String) -> String {
        let key = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) } ?? ""
        // In process: a Python child per upgrade took longer than the 700 ms first-message
        // deadline on a loaded machine, and a slow upgrade is not what these tests test.
        return WebSocketClient.acceptValue(for: key)
    }

    /// A server that upgrades properly and then sends `frames` (raw WebSocket frames).
    static func upgrading(then frames: [[UInt8]]) throws -> ScriptedServer {
        try ScriptedServer { c in
            guard let req = c.readRequest() else { return }
            c.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(acceptKey(req.head))\r\n\r\n")
            for f in frames { c.write(f) }
            c.hang(seconds: 3)
        }
    }

    static func show(_ reason: RoomDisconnectReason?) -> String {
        if case .network(let cause)? = reason { return "network(\(cause))" }
        return String(describing: reason)
    }

    static func binary(_ payload: [UInt8]) -> [UInt8] { WebSocketFrame(opcode: .binary, payload: payload).encode(maskKey: nil) }

    func run(_ server: ScriptedServer, within seconds: Double = 60) async throws -> (RoomDisconnectReason?, [RoomEvent]) {
        var options = RoomManagerOptions()
        options.waitForTransport = false
        options.signalConnectTimeout = 2
        options.state.reconnectDelaysMs = [0, 50, 50]
        options.state.firstMessageTimeoutMs = 700
        options.state.signalHandshakeTimeoutMs = 3000
        let room = RoomManager(livekitHost: server.baseURL + "/livekit", tls: .system, clientVersion: "test", options: options,
                               transport: nil, tokenProvider: { "fresh-token" })
        let collector = Task { var all: [RoomEvent] = []; for await e in room.events { all.append(e) }; return all }
        await room.connect(token: "t0k")
        let reason = await room.waitUntilFinished(timeout: seconds)
        if reason == nil { await room.leave(timeout: 1) }
        return (reason, await collector.value)
    }

    /// Junk (five binary frames of seeded random bytes) where the join response belongs.
    @Test(arguments: [1, 2, 3, 0xB0B] as [UInt64])
    func randomBytesInsteadOfJoin(seed: UInt64) async throws {
        var rng = SeededGenerator(seed: seed)
        let junk = (0..<5).map { _ in Self.binary(rng.bytes(40)) }
        let (reason, events) = try await run(try Self.upgrading(then: junk))
        // Undecodable messages are counted and dropped; a server that answers only with
        // bytes that are not LiveKit signalling is broken (bytes that happen to decode are
        // a first message that is not join): a protocol error, not a slow network.
        #expect(reason == .protocolError, "seed \(seed): \(String(describing: reason))")
        #expect(events.last == .disconnected(.protocolError), "seed \(seed): \(String(describing: events.last))")
    }

    @Test func aMessageThatIsNotJoin() async throws {
        var pong = LiveKit.SignalResponse()
        pong.message = .pongResp(LiveKit.Pong.with { $0.lastPingTimestamp = 1; $0.timestamp = 2 })
        let (reason, _) = try await run(try Self.upgrading(then: [Self.binary(pong.protobufBytes())]))
        #expect(reason == .protocolError, "\(Self.show(reason))")
    }

    @Test func textFrameWithInvalidUTF8() async throws {
        // The WebSocket layer drops the connection (close 1007); every retry meets the same.
        let (reason, _) = try await run(try Self.upgrading(then: [[0x81, 0x02, 0xC3, 0x28]]))
        #expect(reason == .network(.signalLost), "\(Self.show(reason))")
    }

    @Test func http200InsteadOf101() async throws {
        // An HTTP answer other than 101 is the server refusing the upgrade, with its status.
        let server = try ScriptedServer { c in _ = c.readRequest(); c.respond(body: "hello") }
        let (reason, _) = try await run(server)
        #expect(reason == .refused(status: 200), "\(String(describing: reason))")
    }

    @Test func closedMidHandshake() async throws {
        let server = try ScriptedServer { c in _ = c.readRequest(); c.write("HTTP/1.1 101 Swit") }
        let (reason, _) = try await run(server)
        #expect(reason == .network(.unreachable), "\(String(describing: reason))")
    }

    @Test func badTokenIsFinal() async throws {
        let server = try ScriptedServer { c in
            _ = c.readRequest()
            c.respond(status: 401, reason: "Unauthorized", body: "invalid authorization token: token is expired")
        }
        let (reason, _) = try await run(server)
        #expect(reason == .notAllowed)
        #expect(server.connectionCount <= 2)  // no retry storm on a refused token
    }

    @Test func roomNotFoundIsFinal() async throws {
        let server = try ScriptedServer { c in
            _ = c.readRequest()
            c.respond(status: 404, reason: "Not Found", body: "requested room does not exist")
        }
        let (reason, _) = try await run(server)
        #expect(reason == .roomNotFound)
    }

    @Test func signalURLs() throws {
        let u = try SignalURL.connect(livekitHost: "https://meet.example.com/livekit", mode: .join, client: .init(version: "1.2.3"))
        #expect(u.scheme == "wss" && u.path == "/livekit/rtc")
        let q = u.query ?? ""
        for part in ["auto_subscribe=1", "adaptive_stream=0", "protocol=16", "version=1.2.3", "os=linux"] { #expect(q.contains(part)) }
        #expect(!q.contains("access_token"))
        let r = try SignalURL.connect(livekitHost: "http://127.0.0.1:8090/livekit/", mode: .resume(participantSid: "PA_abc", reason: .signalDisconnected), client: .init(version: "1"))
        #expect(r.scheme == "ws" && r.path == "/livekit/rtc")
        #expect(r.query?.contains("reconnect=1&sid=PA_abc&reconnect_reason=1") == true)
        #expect(try SignalURL.base(livekitHost: "wss://lk.example.com/rtc").description == "wss://lk.example.com/rtc")
        #expect(try SignalURL.base(livekitHost: "lk.example.com").description == "wss://lk.example.com/rtc")
        #expect(SignalURL.validate(u).description.hasPrefix("https://meet.example.com/livekit/rtc/validate?"))
        #expect(throws: SignalURL.InvalidHost.self) { try SignalURL.base(livekitHost: "ftp://x") }
    }
}

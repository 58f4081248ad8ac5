import BedrudNet
import BedrudProtocol
import Foundation
import Testing
import TestSupport

/// The client against an independent server (Python `websockets`) and against
/// deliberately broken ones.
@Suite(.serialized) struct WebSocketClientTests {
    func connect(_ base: String, _ path: String, headers: HTTPHeaders = HTTPHeaders(), readTimeout: Double? = nil) async throws -> WebSocketClient {
        var o = WebSocketOptions()
        o.connectTimeout = 30  // generous: a loaded test machine, not a slow server
        o.readTimeout = readTimeout
        return try await WebSocketClient.connect(WebURL(base + path)!, headers: headers, options: o)
    }

    /// The next non-ping message, within `seconds`.
    func next(_ ws: WebSocketClient, within seconds: Double = 10) async throws -> WebSocketMessage? {
        try await withThrowingTaskGroup(of: WebSocketMessage?.self) { group in
            group.addTask {
                for try await m in ws.messages {
                    if case .ping = m { continue }
                    return m
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                throw TestSupportError("no message within \(seconds) s")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    @Test func echoTextAndBinary() async throws {
        let server = try await PythonServer.start(script: "scripts/ws_test_server.py")
        let ws = try await connect(server.url, "/echo")
        try await ws.send(text: "héllo ✓")
        #expect(try await next(ws) == .text("héllo ✓"))
        let blob = (0..<200_000).map { UInt8($0 & 0xFF) }
        try await ws.send(data: blob)
        #expect(try await next(ws) == .data(blob))
        await ws.close()
    }

    @Test func fragmentedAndLargeMessages() async throws {
        let server = try await PythonServer.start(script: "scripts/ws_test_server.py")
        do {
            let ws = try await connect(server.url, "/fragments")
            #expect(try await next(ws) == .text("frag-mented"))
            await ws.close()
            let big = try await connect(server.url, "/big")
            guard case .data(let d)? = try await next(big) else { Issue.record("no data"); return }
            #expect(d.count == 3 * 1024 * 1024)
            await big.close()
        } catch {
            Issue.record("\(error)\nserver log:\n\(server.log.suffix(3000))")
        }
        withExtendedLifetime(server) {}
    }

    @Test func answersServerPings() async throws {
        let server = try await PythonServer.start(script: "scripts/ws_test_server.py")
        let ws = try await connect(server.url, "/ping")
        #expect(try await next(ws) == .text("pong-ok"))
        await ws.close()
    }

    @Test func serverCloseCodeAndReason() async throws {
        let server = try await PythonServer.start(script: "scripts/ws_test_server.py")
        let ws = try await connect(server.url, "/close")
        #expect(try await next(ws) == .close(code: 4001, reason: "bye now"))
        #expect(try await next(ws) == nil)  // the stream ends
        await #expect(throws: NetworkError.self) { try await ws.send(text: "too late") }
    }

    @Test func customHeadersAndRefusedUpgrade() async throws {
        let server = try await PythonServer.start(script: "scripts/ws_test_server.py")
        do {
            _ = try await connect(server.url, "/auth")
            Issue.record("expected 401")
        } catch let e as WebSocketHandshakeError {
            #expect(e.status == 401)
            #expect(e.body == "invalid token")
        }
        var h = HTTPHeaders()
        h.set("Authorization", "Bearer secret")
        let ws = try await connect(server.url, "/auth", headers: h)
        try await ws.send(text: "ok")
        #expect(try await next(ws) == .text("ok"))
        await ws.close()
    }

    // MARK: - Broken servers

    static let upgradeOK = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %ACCEPT%\r\n\r\n"

    /// A raw server that completes the upgrade properly, then plays `after`.
    func rawServer(_ after: @escaping @Sendable (ScriptedConnection) -> Void) throws -> ScriptedServer {
        try ScriptedServer { c in
            guard let req = c.readRequest() else { return }
            let key = req.head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) } ?? ""
            c.write(Self.upgradeOK.replacingOccurrences(of: "%ACCEPT%", with: WebSocketTestAccept.value(key)))
            after(c)
        }
    }

    @Test func http200InsteadOf101() async throws {
        let s = try ScriptedServer { c in _ = c.readRequest(); c.respond(body: "hello") }
        await #expect(throws: WebSocketHandshakeError.self) { _ = try await connect(s.baseURL.replacingOccurrences(of: "http", with: "ws"), "/") }
    }

    @Test func closedMidHandshake() async throws {
        let s = try ScriptedServer { c in _ = c.readRequest(); c.write("HTTP/1.1 101 Switching") }
        do {
            _ = try await connect(s.baseURL.replacingOccurrences(of: "http", with: "ws"), "/")
            Issue.record("expected failure")
        } catch let e as NetworkError {
            #expect(e.code == .connectionClosed || e.code == .protocolViolation)
        }
    }

    @Test func wrongAcceptKey() async throws {
        let s = try ScriptedServer { c in
            _ = c.readRequest()
            c.write(Self.upgradeOK.replacingOccurrences(of: "%ACCEPT%", with: "bogus"))
        }
        await #expect(throws: NetworkError.self) { _ = try await connect(s.baseURL.replacingOccurrences(of: "http", with: "ws"), "/") }
    }

    /// Each of these ends the stream with a protocol error — no crash, no hang.
    static let badStreams: [[UInt8]] = [
        [0x81, 0x82, 1, 2, 3, 4, 0x41, 0x42],  // masked frame from the server
        [0x81, 0x02, 0xC3, 0x28],              // invalid UTF-8
        [0x82, 0x7F, 0, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF],  // oversized
        [0x82, 0x05, 1, 2],                    // truncated, then the server closes
    ]

    @Test(arguments: badStreams)
    func badFramesEndTheStreamCleanly(bytes: [UInt8]) async throws {
        let s = try rawServer { c in
            c.write(bytes)
            Thread.sleep(forTimeInterval: 0.3)
        }
        let ws = try await connect(s.baseURL.replacingOccurrences(of: "http", with: "ws"), "/")
        do {
            for try await _ in ws.messages {}
            Issue.record("the stream ended without an error")
        } catch let e as NetworkError {
            #expect(e.code == .protocolViolation || e.code == .connectionClosed, "\(e)")
        }
    }

    @Test func readTimeoutDetectsASilentServer() async throws {
        let s = try rawServer { c in c.hang(seconds: 20) }
        let ws = try await connect(s.baseURL.replacingOccurrences(of: "http", with: "ws"), "/", readTimeout: 0.5)
        let start = Date()
        do {
            for try await _ in ws.messages {}
            Issue.record("the stream ended without an error")
        } catch let e as NetworkError {
            #expect(e.code == .timedOut, "\(e)")
        }
        #expect(Date().timeIntervalSince(start) < 15)  // long before the server would hang up
    }

    @Test func abortEndsTheStream() async throws {
        let server = try await PythonServer.start(script: "scripts/ws_test_server.py")
        let ws = try await connect(server.url, "/echo")
        ws.abort()
        await #expect(throws: NetworkError.self) { for try await _ in ws.messages {} }
    }
}

/// Computes Sec-WebSocket-Accept independently of the client (via Python's hashlib).
enum WebSocketTestAccept {
    static func value(_ key: String) -> String {
        let r = try? Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c",
            "import base64,hashlib,sys;print(base64.b64encode(hashlib.sha1((sys.argv[1]+'258EAFA5-E914-47DA-95CA-C5AB0DC85B11').encode()).digest()).decode())", key])
        return r?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }
}

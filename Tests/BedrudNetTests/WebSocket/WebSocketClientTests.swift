import BedrudNet
import BedrudProtocol
import Foundation
import Synchronization
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

    /// Messages nobody reads are bounded: with `receiveQueueLimit` unread the read thread
    /// stops reading the socket (counted as a stall) and goes on when they are taken, so a
    /// slow reader still gets every message, in order.
    @Test func unreadMessagesHoldTheReaderBackAndNoneIsLost() async throws {
        let s = try rawServer { c in
            for i in 0..<50 { c.write(WebSocketFrame(opcode: .binary, payload: [UInt8(i)]).encode(maskKey: nil)) }
            c.hang(seconds: 10)
        }
        var o = WebSocketOptions()
        o.connectTimeout = 30
        o.receiveQueueLimit = 2
        let ws = try await WebSocketClient.connect(WebURL(s.baseURL.replacingOccurrences(of: "http", with: "ws") + "/")!, options: o)
        try await waitUntil("the read thread waits for the reader", timeout: 10) { ws.readerStalls > 0 }
        var got: [[UInt8]] = []
        for try await m in ws.messages {
            if case .data(let d) = m { got.append(d) }
            if got.count == 50 { break }
        }
        ws.abort()
        #expect(got == (0..<50).map { [UInt8($0)] })
        #expect(ws.readerStalls >= 1)
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

    /// A stream a server must not send, the error the client must end with, and the close
    /// code it must send back (RFC 6455 §5.1, §5.6, §7.4.1); nil: the server hangs up and the
    /// client cannot send one.
    struct BadStream: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var code: NetworkError.Code
        var detail: String
        var closeCode: UInt16?
        var testDescription: String { name }
    }

    static let badStreams: [BadStream] = [
        BadStream(name: "masked frame", bytes: [0x81, 0x82, 1, 2, 3, 4, 0x41, 0x42],
                  code: .protocolViolation, detail: "WebSocket: the server sent a masked frame", closeCode: 1002),
        BadStream(name: "invalid UTF-8", bytes: [0x81, 0x02, 0xC3, 0x28],
                  code: .protocolViolation, detail: "WebSocket: text message is not valid UTF-8", closeCode: 1007),
        BadStream(name: "oversized frame", bytes: [0x82, 0x7F, 0, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF],
                  code: .protocolViolation, detail: "WebSocket: frame of 2147483647 bytes exceeds the \(WebSocketOptions().maxMessageSize)-byte limit", closeCode: 1009),
        BadStream(name: "truncated, then closed", bytes: [0x82, 0x05, 1, 2],
                  code: .connectionClosed, detail: "no close frame", closeCode: nil),
    ]

    /// The close code in the first (masked) close frame among `bytes`, if it is complete.
    static func clientCloseCode(_ bytes: [UInt8]) -> UInt16? {
        var i = 0
        while i + 2 <= bytes.count {
            let opcode = bytes[i] & 0x0F, masked = bytes[i + 1] & 0x80 != 0, length = Int(bytes[i + 1] & 0x7F)
            guard length < 126 else { return nil }  // the client sends no long frames here
            let start = i + 2 + (masked ? 4 : 0)
            guard start + length <= bytes.count else { return nil }
            if opcode == 0x8 {
                guard length >= 2 else { return nil }
                let key = masked ? Array(bytes[(i + 2)..<(i + 6)]) : [0, 0, 0, 0]
                return UInt16(bytes[start] ^ key[0]) << 8 | UInt16(bytes[start + 1] ^ key[1])
            }
            i = start + length
        }
        return nil
    }

    @Test(arguments: badStreams)
    func badFramesEndTheStreamWithTheirOwnError(_ bad: BadStream) async throws {
        let received = Mutex<UInt16?>(nil)
        let s = try rawServer { c in
            c.write(bad.bytes)
            guard bad.closeCode != nil else { return c.close() }
            // Stay connected (so only the client's own check can end the stream) until the
            // client's close frame arrives.
            while Self.clientCloseCode(c.buffered) == nil, c.readMore() {}
            received.withLock { $0 = Self.clientCloseCode(c.buffered) }
        }
        let ws = try await connect(s.baseURL.replacingOccurrences(of: "http", with: "ws"), "/", readTimeout: 20)
        do {
            for try await _ in ws.messages {}
            Issue.record("the stream ended without an error")
        } catch let e as NetworkError {
            #expect(e.code == bad.code, "\(e)")
            #expect(e.detail == bad.detail, "\(e)")
        }
        if let want = bad.closeCode {
            try await waitUntil("the client's close frame", timeout: 20) { received.withLock { $0 } != nil }
            #expect(received.withLock { $0 } == want)
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

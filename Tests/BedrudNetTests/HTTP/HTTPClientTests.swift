import BedrudNet
import BedrudProtocol
import Foundation
import Testing
import TestSupport

@Suite struct HTTPClientTests {
    func client(read: Double = 5, request: Double = 10) -> HTTPClient {
        var o = HTTPClientOptions()
        o.readTimeout = read
        o.requestTimeout = request
        o.connectTimeout = 5
        return HTTPClient(options: o)
    }

    func get(_ server: ScriptedServer, _ path: String = "/", client c: HTTPClient? = nil) async throws -> HTTPResponse {
        try await (c ?? client()).send(HTTPRequest(url: WebURL(server.baseURL + path)!))
    }

    @Test func jsonBodyAndHeadersRoundTrip() async throws {
        let server = try ScriptedServer { c in
            guard let req = c.readRequest() else { return }
            let echo = String(decoding: req.body, as: UTF8.self)
            let auth = req.head.contains("Authorization: Bearer t0k") ? "yes" : "no"
            c.respond(headers: [("Content-Type", "application/json")], body: "{\"echo\":\(echo),\"auth\":\"\(auth)\"}")
        }
        var req = HTTPRequest(method: "POST", url: WebURL(server.baseURL + "/api/x")!, body: Array("{\"a\":1}".utf8))
        req.headers.set("Authorization", "Bearer t0k")
        req.headers.set("Content-Type", "application/json")
        let resp = try await client().send(req)
        #expect(resp.status == 200)
        #expect(resp.text == "{\"echo\":{\"a\":1},\"auth\":\"yes\"}")
        #expect(resp.headers["content-type"] == "application/json")
    }

    @Test func reusesKeepAliveConnections() async throws {
        let server = try ScriptedServer { c in
            while c.readRequest() != nil { c.respond(body: "ok") }
        }
        let http = client()
        for _ in 0..<5 { #expect(try await get(server, client: http).text == "ok") }
        #expect(server.connectionCount == 1)
    }

    @Test func survivesServerClosingAnIdleConnection() async throws {
        let server = try ScriptedServer { c in
            if c.readRequest() != nil { c.respond(body: "once") }  // then close
        }
        let http = client()
        #expect(try await get(server, client: http).text == "once")
        try await waitUntil("the server closed the first connection", timeout: 10) { server.closedCount == 1 }
        #expect(try await get(server, client: http).text == "once")
        #expect(server.connectionCount == 2)
    }

    @Test func chunkedResponses() async throws {
        let server = try ScriptedServer { c in
            guard c.readRequest() != nil else { return }
            c.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
            c.write("2\r\nde\r\n0\r\n\r\n")
        }
        #expect(try await get(server).text == "abcde")
    }

    @Test func followsSameOriginRedirectsOnly() async throws {
        let other = try ScriptedServer { c in _ = c.readRequest(); c.respond(body: "elsewhere") }
        let server = try ScriptedServer { c in
            while let req = c.readRequest() {
                if req.head.hasPrefix("GET /old") {
                    c.respond(status: 302, reason: "Found", headers: [("Location", "/new")], body: "")
                } else if req.head.hasPrefix("GET /away") {
                    c.respond(status: 302, reason: "Found", headers: [("Location", other.baseURL + "/")], body: "")
                } else {
                    c.respond(body: "new")
                }
            }
        }
        #expect(try await get(server, "/old").text == "new")
        await #expect(throws: NetworkError.self) { try await get(server, "/away") }
    }

    @Test func limitsResponseSize() async throws {
        let server = try ScriptedServer { c in
            _ = c.readRequest()
            c.respond(body: String(repeating: "x", count: 5000))
        }
        var o = HTTPClientOptions()
        o.maxResponseBytes = 1000
        do {
            _ = try await HTTPClient(options: o).send(HTTPRequest(url: WebURL(server.baseURL)!))
            Issue.record("expected an error")
        } catch let e as NetworkError {
            #expect(e.code == .responseTooLarge)
        }
    }

    // MARK: - Bad servers: each is a clear error within the timeout, never a hang.

    func expectFailure(_ code: NetworkError.Code, within seconds: Double, _ script: @escaping @Sendable (ScriptedConnection) -> Void) async throws {
        let server = try ScriptedServer(script: script)
        let start = Date()
        do {
            _ = try await get(server, client: client(read: 1, request: 3))
            Issue.record("expected \(code)")
        } catch let e as NetworkError {
            #expect(e.code == code, "\(e)")
            #expect(!e.description.isEmpty)
        }
        #expect(Date().timeIntervalSince(start) < seconds)
    }

    @Test func connectionReset() async throws {
        try await expectFailure(.connectionReset, within: 25) { c in _ = c.readRequest(); c.reset() }
    }

    @Test func closedWithoutAnswer() async throws {
        try await expectFailure(.connectionClosed, within: 25) { c in _ = c.readRequest() }
    }

    @Test func acceptsAndNeverAnswers() async throws {
        try await expectFailure(.timedOut, within: 25) { c in c.hang(seconds: 40) }
    }

    @Test func trickleNeverFinishing() async throws {
        // Sends a byte every 0.5 s: each read is on time, the whole request is not.
        try await expectFailure(.timedOut, within: 25) { c in
            _ = c.readRequest()
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
            for _ in 0..<80 { c.write("x"); Thread.sleep(forTimeInterval: 0.5) }
        }
    }

    @Test func notHTTP() async throws {
        try await expectFailure(.protocolViolation, within: 25) { c in _ = c.readRequest(); c.write("SSH-2.0-OpenSSH\r\n\r\n") }
    }

    @Test func refused() async throws {
        let server = try ScriptedServer { _ in }
        let url = server.baseURL
        server.stop()
        do {
            _ = try await client().send(HTTPRequest(url: WebURL(url)!))
            Issue.record("expected refusal")
        } catch let e as NetworkError {
            #expect(e.code == .connectionRefused)
            #expect(e.description.contains("refused"))
        }
    }

    @Test func cancellationStopsAHangingRequest() async throws {
        let server = try ScriptedServer { c in c.hang(seconds: 40) }
        let http = client(read: 60, request: 60)
        let task = Task { try await http.send(HTTPRequest(url: WebURL(server.baseURL)!)) }
        // Generous: on a loaded machine the request's thread may start late.
        try await waitUntil("the request reached the server", timeout: 30) { server.connectionCount >= 1 }
        let cancelled = Date()
        task.cancel()
        await #expect { try await task.value } throws: { ($0 as? NetworkError)?.code == .cancelled }
        // Long before the server (40 s) or the client's timeouts (60 s) would end it.
        #expect(Date().timeIntervalSince(cancelled) < 15)
    }

    @Test func multipartBodyShape() {
        var m = MultipartFormData(boundary: "XYZ")
        m.addFile(name: "file", filename: "a.png", contentType: "image/png", data: [1, 2, 3])
        let text = String(decoding: m.body, as: UTF8.self)
        #expect(text.hasPrefix("--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n"))
        #expect(text.hasSuffix("\r\n--XYZ--\r\n"))
        #expect(m.contentType == "multipart/form-data; boundary=XYZ")
    }
}

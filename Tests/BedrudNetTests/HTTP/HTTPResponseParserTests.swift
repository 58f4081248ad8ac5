import BedrudNet
import Testing
import TestSupport

@Suite struct HTTPResponseParserTests {
    /// Feeds `raw` in chunks of `chunk` bytes (0 = all at once) and returns the parser.
    func parse(_ raw: String, chunk: Int, eof: Bool = false) throws -> HTTPResponseParser {
        var p = HTTPResponseParser(maxBodyBytes: 1000)
        let bytes = Array(raw.utf8)
        if chunk == 0 {
            try p.feed(bytes)
        } else {
            var i = 0
            while i < bytes.count {
                try p.feed(Array(bytes[i..<min(i + chunk, bytes.count)]))
                i += chunk
            }
        }
        if eof { try p.finish() }
        return p
    }

    static let responses: [(String, String, Bool)] = [
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello", "hello", false),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: a\r\n\r\n", "hello world", false),
        ("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nNot Found", "Not Found", false),
        ("HTTP/1.0 200 OK\r\n\r\nuntil close", "until close", true),
        ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", "ok", false),
        ("HTTP/1.1 204 No Content\r\n\r\n", "", false),
    ]

    @Test(arguments: [0, 1, 2, 7])
    func sameResultWhateverTheSplit(chunk: Int) throws {
        for (raw, body, eof) in Self.responses {
            let p = try parse(raw, chunk: chunk, eof: eof)
            #expect(p.isComplete, "\(raw.debugDescription) chunk \(chunk)")
            #expect(String(decoding: p.body, as: UTF8.self) == body)
        }
    }

    @Test func headersAreCaseInsensitive() throws {
        let p = try parse("HTTP/1.1 200 OK\r\ncontent-TYPE: application/json\r\nContent-Length: 2\r\n\r\n{}", chunk: 3)
        #expect(p.head?.headers["Content-Type"] == "application/json")
        #expect(p.head?.status == 200)
    }

    @Test func rejectsGarbage() {
        #expect(throws: HTTPResponseParser.ParseError.self) { try parse("<html><body>hi</body></html>\r\n\r\n", chunk: 0) }
        #expect(throws: HTTPResponseParser.ParseError.self) { try parse("HTTP/1.1 2000 OK\r\n\r\n", chunk: 0) }
        #expect(throws: HTTPResponseParser.ParseError.self) { try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", chunk: 0) }
        #expect(throws: HTTPResponseParser.ParseError.self) { try parse("HTTP/1.1 200 OK\r\nContent-Length: -4\r\n\r\n", chunk: 0) }
        #expect(throws: HTTPResponseParser.ParseError.self) { try parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", chunk: 0) }
    }

    @Test func truncatedBodyIsAnErrorAtEOF() throws {
        var p = HTTPResponseParser()
        try p.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8))
        #expect(!p.isComplete)
        #expect(throws: HTTPResponseParser.ParseError.self) { try p.finish() }
        var empty = HTTPResponseParser()
        #expect(throws: HTTPResponseParser.ParseError.self) { try empty.finish() }
    }

    @Test func enforcesLimits() {
        var p = HTTPResponseParser(maxHeaderBytes: 100, maxBodyBytes: 10)
        #expect(throws: HTTPResponseParser.ParseError.self) {
            try p.feed(Array(("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 200)).utf8))
        }
        var q = HTTPResponseParser(maxBodyBytes: 10)
        #expect(throws: HTTPResponseParser.ParseError.self) {
            try q.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n01234567890".utf8))
        }
        var r = HTTPResponseParser(maxBodyBytes: 10)
        #expect(throws: HTTPResponseParser.ParseError.self) {
            try r.feed(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nff\r\n".utf8))
        }
    }

    @Test func randomBytesNeverCrash() {
        var rng = SeededGenerator(seed: 0xB0D)
        for _ in 0..<2000 {
            var p = HTTPResponseParser(maxHeaderBytes: 512, maxBodyBytes: 512)
            let prefix = Array(["HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", ""].randomElement(using: &rng)!.utf8)
            let junk = (0..<Int.random(in: 0..<300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = try? p.feed(prefix + junk)
            _ = try? p.finish()
        }
    }
}

/// A small seeded generator so random tests are repeatable.

/// Incremental HTTP/1.1 response parser: feed it bytes as they arrive, in any split,
/// and it produces the same response. Pure; bounded by `maxHeaderBytes` and
/// `maxBodyBytes`.
public struct HTTPResponseParser: Sendable {
    public struct Head: Sendable, Equatable {
        public var version: String
        public var status: Int
        public var reason: String
        public var headers: HTTPHeaders
    }

    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let message: String
        public let tooLarge: Bool
        public var description: String { message }
    }

    enum State: Sendable {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    public let maxHeaderBytes: Int
    public let maxBodyBytes: Int
    /// True for responses to HEAD requests, which have no body whatever the headers say.
    public let isHeadRequest: Bool

    public private(set) var head: Head?
    public private(set) var body: [UInt8] = []
    private var state: State = .head
    private var buffer: [UInt8] = []
    private var scanFrom = 0

    public init(maxHeaderBytes: Int = 64 * 1024, maxBodyBytes: Int = 16 * 1024 * 1024, isHeadRequest: Bool = false) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.isHeadRequest = isHeadRequest
    }

    public var isComplete: Bool { if case .done = state { return true } else { return false } }

    /// True when the body runs until the connection closes (no length, not chunked).
    public var readsUntilClose: Bool { if case .untilClose = state { return true } else { return false } }

    /// Bytes received after the end of the response (a pipelining server; unused by us).
    public var leftover: [UInt8] { isComplete ? buffer : [] }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        buffer.append(contentsOf: bytes)
        try process()
    }

    public mutating func feed(_ bytes: [UInt8]) throws(ParseError) {
        buffer.append(contentsOf: bytes)
        try process()
    }

    /// The connection reached end of stream. Completes an until-close body; anything
    /// else left unfinished is an error.
    public mutating func finish() throws(ParseError) {
        switch state {
        case .done: return
        case .untilClose:
            try appendBody(buffer[...])
            buffer.removeAll()
            state = .done
        case .head:
            throw ParseError(message: buffer.isEmpty ? "the server closed the connection without answering" : "the response ended inside its headers", tooLarge: false)
        default:
            throw ParseError(message: "the response body ended early", tooLarge: false)
        }
    }

    private mutating func appendBody(_ bytes: ArraySlice<UInt8>) throws(ParseError) {
        guard body.count + bytes.count <= maxBodyBytes else {
            throw ParseError(message: "body larger than \(maxBodyBytes) bytes", tooLarge: true)
        }
        body.append(contentsOf: bytes)
    }

    /// Index just past the next CRLF at or after `from`, if any.
    private func lineEnd(from: Int) -> Int? {
        var i = from
        while i + 1 < buffer.count {
            if buffer[i] == 13 && buffer[i + 1] == 10 { return i + 2 }
            i += 1
        }
        return nil
    }

    private mutating func process() throws(ParseError) {
        while true {
            switch state {
            case .done:
                return
            case .head:
                // Find the blank line that ends the head.
                var end: Int?
                var i = max(0, scanFrom - 3)
                while i + 3 < buffer.count {
                    if buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
                        end = i + 4
                        break
                    }
                    i += 1
                }
                guard let headEnd = end else {
                    scanFrom = buffer.count
                    if buffer.count > maxHeaderBytes {
                        throw ParseError(message: "response headers larger than \(maxHeaderBytes) bytes", tooLarge: true)
                    }
                    return
                }
                let parsed = try Self.parseHead(buffer[..<(headEnd - 4)])
                buffer.removeFirst(headEnd)
                scanFrom = 0
                if (100..<200).contains(parsed.status) && parsed.status != 101 {
                    continue  // 100 Continue and friends: the real response follows.
                }
                head = parsed
                state = try Self.bodyState(for: parsed, isHeadRequest: isHeadRequest)
            case .fixed(let remaining):
                let n = min(remaining, buffer.count)
                try appendBody(buffer[..<n])
                buffer.removeFirst(n)
                if remaining - n == 0 {
                    state = .done
                } else {
                    state = .fixed(remaining: remaining - n)
                    return
                }
            case .untilClose:
                try appendBody(buffer[...])
                buffer.removeAll()
                return
            case .chunkSize:
                guard let end = lineEnd(from: 0) else {
                    if buffer.count > 1024 { throw ParseError(message: "chunk size line too long", tooLarge: false) }
                    return
                }
                let line = buffer[..<(end - 2)]
                let sizeText = line.prefix { $0 != UInt8(ascii: ";") }  // drop chunk extensions
                let trimmed = String(decoding: sizeText, as: UTF8.self).trimmingWhitespace()
                guard !trimmed.isEmpty, trimmed.count <= 15, let size = Int(trimmed, radix: 16), size >= 0 else {
                    throw ParseError(message: "bad chunk size", tooLarge: false)
                }
                buffer.removeFirst(end)
                if size == 0 {
                    state = .trailers
                } else {
                    guard body.count + size <= maxBodyBytes else {
                        throw ParseError(message: "body larger than \(maxBodyBytes) bytes", tooLarge: true)
                    }
                    state = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                let n = min(remaining, buffer.count)
                try appendBody(buffer[..<n])
                buffer.removeFirst(n)
                if remaining - n == 0 {
                    state = .chunkDataEnd
                } else {
                    state = .chunkData(remaining: remaining - n)
                    return
                }
            case .chunkDataEnd:
                guard buffer.count >= 2 else { return }
                guard buffer[0] == 13 && buffer[1] == 10 else {
                    throw ParseError(message: "chunk not followed by CRLF", tooLarge: false)
                }
                buffer.removeFirst(2)
                state = .chunkSize
            case .trailers:
                guard let end = lineEnd(from: 0) else {
                    if buffer.count > maxHeaderBytes { throw ParseError(message: "trailers too large", tooLarge: true) }
                    return
                }
                let empty = end == 2
                buffer.removeFirst(end)
                if empty { state = .done }
            }
        }
    }

    static func parseHead(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> Head {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        guard let statusLine = lines.popFirst() else { throw ParseError(message: "empty response", tooLarge: false) }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]), status >= 100, status < 600 else {
            let shown = String(statusLine.prefix(40)).filter { $0.isASCII && !$0.isNewline }
            throw ParseError(message: "not an HTTP response (it starts with \"\(shown)\")", tooLarge: false)
        }
        var headers = HTTPHeaders()
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw ParseError(message: "malformed header line", tooLarge: false)
            }
            let name = line[..<colon]
            guard !name.isEmpty, !name.contains(" ") else { throw ParseError(message: "malformed header name", tooLarge: false) }
            headers.add(String(name), String(line[line.index(after: colon)...]).trimmingWhitespace())
        }
        return Head(version: String(parts[0]), status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers)
    }

    static func bodyState(for head: Head, isHeadRequest: Bool) throws(ParseError) -> State {
        if isHeadRequest || head.status == 204 || head.status == 304 || head.status == 101 { return .done }
        if let te = head.headers["Transfer-Encoding"], te.lowercased().contains("chunked") {
            return .chunkSize
        }
        let lengths = head.headers.values("Content-Length")
        if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }), let n = Int(first.trimmingWhitespace()), n >= 0 else {
                throw ParseError(message: "bad Content-Length", tooLarge: false)
            }
            return n == 0 ? .done : .fixed(remaining: n)
        }
        return .untilClose
    }
}

import BedrudProtocol
import BedrudRuntime
import Synchronization

/// Timeouts, limits and trust for an ``HTTPClient``.
public struct HTTPClientOptions: Sendable {
    /// Connecting (name resolution, TCP and TLS handshake).
    public var connectTimeout: Double = 10
    /// Longest wait for the next byte of a response.
    public var readTimeout: Double = 30
    /// The whole request, redirects included.
    public var requestTimeout: Double = 60
    public var maxResponseBytes: Int = 16 * 1024 * 1024
    public var maxRedirects: Int = 5
    public var userAgent: String = "bedrud-bot"
    public var tls: TLSConfiguration = .system
    /// Keep connections open for reuse.
    public var keepAlive: Bool = true

    public init() {}
}

/// An HTTP/1.1 client over ``TCPSocket`` and ``TLSStream``: keep-alive reuse,
/// same-origin redirects, response size limits, and every wait bounded.
///
/// Each request runs its blocking I/O on a thread of its own; cancelling the calling
/// task aborts it at once. Safe to share between tasks.
public final class HTTPClient: Sendable {
    public let options: HTTPClientOptions
    private let idle = Mutex<[String: [(stream: any ByteStream, since: UInt64)]]>([:])
    private static let maxIdlePerOrigin = 4
    private static let idleLifetimeNanos: UInt64 = 30_000_000_000
    private let logger = Logger("http")

    public init(options: HTTPClientOptions = HTTPClientOptions()) {
        self.options = options
    }

    deinit {
        for (_, list) in idle.withLock({ $0 }) { for c in list { c.stream.close() } }
    }

    /// Sends `request`, following same-origin redirects, and returns the final response
    /// whatever its status. Throws ``NetworkError`` for transport failures only.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let slot = CancellationSlot()
        return try await BlockingWork.run(name: "http", slot: slot) { [self] in
            try perform(request, slot: slot)
        }
    }

    /// Closes idle connections.
    public func closeIdleConnections() {
        let all = idle.withLock { d -> [String: [(stream: any ByteStream, since: UInt64)]] in
            let copy = d
            d.removeAll()
            return copy
        }
        for (_, list) in all { for c in list { c.stream.close() } }
    }

    // MARK: - Blocking core

    func perform(_ original: HTTPRequest, slot: CancellationSlot) throws -> HTTPResponse {
        let deadline = Deadline.after(seconds: options.requestTimeout)
        var request = original
        var redirects = 0
        while true {
            let response: HTTPResponse
            do {
                response = try performOnce(request, deadline: deadline, slot: slot)
            } catch where slot.isCancelled {
                // Cancelling shuts the socket, so the read fails as a closed connection:
                // say what happened instead.
                throw NetworkError(.cancelled, endpoint: request.url.origin)
            }
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["Location"] else {
                return response
            }
            guard redirects < options.maxRedirects else {
                throw NetworkError(.tooManyRedirects, endpoint: Redact.query(original.url.description))
            }
            guard let next = request.url.resolving(location), next.isSameOrigin(as: request.url) else {
                throw NetworkError(.redirectNotAllowed, endpoint: request.url.origin, detail: "to \(Redact.query(location))")
            }
            redirects += 1
            request.url = next
            if response.status == 303 || ((response.status == 301 || response.status == 302) && request.method == "POST") {
                request.method = "GET"
                request.body = nil
                request.headers.remove("Content-Type")
            }
        }
    }

    private func poolKey(_ url: WebURL) -> String { "\(url.scheme)://\(url.host):\(url.port)" }

    private func takeIdle(_ key: String) -> (any ByteStream)? {
        let now = MonotonicClock.nanos()
        var stale: [any ByteStream] = []
        let found = idle.withLock { d -> (any ByteStream)? in
            var list = d[key] ?? []
            defer { d[key] = list.isEmpty ? nil : list }
            while let c = list.popLast() {
                if now &- c.since > Self.idleLifetimeNanos || c.stream.isDeadWhenIdle {
                    stale.append(c.stream)
                    continue
                }
                return c.stream
            }
            return nil
        }
        for s in stale { s.close() }
        return found
    }

    private func putIdle(_ key: String, _ stream: any ByteStream) {
        let evicted = idle.withLock { d -> (any ByteStream)? in
            var list = d[key] ?? []
            list.append((stream, MonotonicClock.nanos()))
            let out = list.count > Self.maxIdlePerOrigin ? list.removeFirst().stream : nil
            d[key] = list
            return out
        }
        evicted?.close()
    }

    private func connect(_ url: WebURL, deadline: Deadline) throws -> any ByteStream {
        let connectBy = min(deadline, .after(seconds: options.connectTimeout))
        do {
            if url.isSecure {
                return try TLSStream.connect(host: url.host, port: url.port, configuration: options.tls, deadline: connectBy)
            }
            return try TCPSocket.connect(host: url.host, port: url.port, deadline: connectBy)
        } catch let e as NetworkError where e.code == .timedOut {
            throw NetworkError(.timedOut, endpoint: e.endpoint, detail: "\(e.detail) after \(Self.seconds(options.connectTimeout))")
        }
    }

    static func seconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : "\(s) s"
    }

    private func performOnce(_ request: HTTPRequest, deadline: Deadline, slot: CancellationSlot) throws -> HTTPResponse {
        let key = poolKey(request.url)
        // A reused connection may have been closed by the server in the meantime; if it
        // fails before any response byte arrives, retry once on a fresh connection.
        if options.keepAlive, let stream = takeIdle(key) {
            do {
                return try exchange(request, on: stream, key: key, deadline: deadline, slot: slot)
            } catch let e as ReuseFailure {
                logger.debug("stale keep-alive connection to \(key): \(e.underlying); reconnecting")
            }
        }
        if slot.isCancelled { throw NetworkError(.cancelled, endpoint: request.url.origin) }
        let stream = try connect(request.url, deadline: deadline)
        do {
            return try exchange(request, on: stream, key: key, deadline: deadline, slot: slot)
        } catch let e as ReuseFailure {
            throw e.underlying
        }
    }

    /// Thrown when a request failed before the server sent any byte back.
    struct ReuseFailure: Error { let underlying: NetworkError }

    private func exchange(
        _ request: HTTPRequest, on stream: any ByteStream, key: String, deadline: Deadline, slot: CancellationSlot
    ) throws -> HTTPResponse {
        slot.use(stream)
        defer { slot.use(nil) }
        var keep = false
        defer { if keep { putIdle(key, stream) } else { stream.close() } }
        do {
            var bytes = request.serializedHead(userAgent: options.userAgent, keepAlive: options.keepAlive)
            if let body = request.body { bytes += body }
            do {
                try stream.write(bytes, deadline: deadline)
            } catch let e as NetworkError where e.code == .connectionReset || e.code == .connectionClosed {
                throw ReuseFailure(underlying: e)
            }
            var parser = HTTPResponseParser(maxBodyBytes: options.maxResponseBytes, isHeadRequest: request.method == "HEAD")
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            var received = 0
            while !parser.isComplete {
                let readBy = min(deadline, .after(seconds: options.readTimeout))
                let n: Int
                do {
                    n = try buffer.withUnsafeMutableBytes { try stream.read(into: $0, deadline: readBy) }
                } catch let e as NetworkError {
                    if received == 0 && (e.code == .connectionReset || e.code == .connectionClosed) { throw ReuseFailure(underlying: e) }
                    if e.code == .timedOut {
                        let what = deadline.hasPassed ? "no complete response within \(Self.seconds(options.requestTimeout))" : "no data for \(Self.seconds(options.readTimeout))"
                        throw NetworkError(.timedOut, endpoint: e.endpoint, detail: what)
                    }
                    throw e
                }
                if n == 0 {
                    if received == 0 && !parser.readsUntilClose { throw ReuseFailure(underlying: NetworkError(.connectionClosed, endpoint: stream.endpoint, detail: "no response")) }
                    try parser.finish()
                    break
                }
                received += n
                try buffer.withUnsafeBytes { try parser.feed(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            }
            guard let head = parser.head else {
                throw NetworkError(.protocolViolation, endpoint: stream.endpoint, detail: "no response head")
            }
            let connection = head.headers["Connection"]?.lowercased() ?? ""
            keep = options.keepAlive && !parser.readsUntilClose && head.version == "HTTP/1.1" && !connection.contains("close")
                && parser.leftover.isEmpty
            return HTTPResponse(status: head.status, reason: head.reason, headers: head.headers, body: parser.body, url: request.url)
        } catch let e as HTTPResponseParser.ParseError {
            throw NetworkError(e.tooLarge ? .responseTooLarge : .protocolViolation, endpoint: stream.endpoint, detail: e.message)
        }
    }
}

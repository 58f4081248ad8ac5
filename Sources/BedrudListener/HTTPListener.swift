#if canImport(Glibc)
import Glibc
#endif
import BedrudNet
import CMicroHTTPD
import Synchronization

/// One request as the listener hands it over: the whole body, read within the limits.
public struct HTTPServerRequest: Sendable {
    public var method: String
    /// The path without the query, as sent (`/bedrud/webhook`).
    public var path: String
    /// Header names in lower case; a repeated header keeps its last value.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, path: String, headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// The answer to one request.
public struct HTTPServerResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    /// Extra headers, e.g. `Allow` on a 405.
    public var headers: [(String, String)]

    public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: [UInt8] = [], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    public init(status: Int, text: String, headers: [(String, String)] = []) {
        self.init(status: status, body: Array((text.hasSuffix("\n") || text.isEmpty ? text : text + "\n").utf8), headers: headers)
    }
}

/// An HTTP/1.1 listening port on GNU libmicrohttpd: one internal epoll thread, with the
/// library's own limits on connections (in all and per address), idle time and the memory
/// of a request's line and headers, and our cap on bodies. It is the only server code in
/// the project; our own HTTP/1.1 code is a client's.
///
/// Thread contract: `handler` runs on the library's thread, one request at a time; it must
/// answer quickly (hand long work to a task). `stop` may be called from any thread, once.
public final class HTTPListener: @unchecked Sendable {
    /// What one open port tolerates before it refuses.
    public struct Limits: Sendable {
        /// Largest request body; a longer `Content-Length` is answered 413 before its body
        /// is read, and a chunked body that grows past it closes the connection.
        public var maxBodyBytes = 64 * 1024
        public var maxConnections: UInt32 = 256
        public var maxConnectionsPerAddress: UInt32 = 64
        /// A connection that sends or reads nothing for this long is closed (slow clients).
        public var idleTimeoutSeconds: UInt32 = 10
        /// Memory for a request's line and headers; more is answered by the library (431).
        public var memoryPerConnection = 64 * 1024
        public init() {}
    }

    public typealias Handler = @Sendable (HTTPServerRequest) -> HTTPServerResponse

    /// The port it listens on (the kernel's choice when asked for port 0).
    public let port: UInt16
    /// The address as `host:port`, for logs.
    public let address: String
    let limits: Limits
    let handler: Handler
    /// The daemon's address as a bit pattern (0: stopped); OpaquePointer is not Sendable.
    private let daemon: Mutex<Int>
    /// Requests refused by the listener itself before the handler saw them (body too large).
    public let refusedTooLarge = Atomic<Int>(0)

    /// Binds `host:port` (an IPv4 or IPv6 literal or a name, resolved once) and starts.
    /// Throws ``NetworkError`` when the address cannot be resolved or bound.
    public init(host: String, port: UInt16, limits: Limits = Limits(), handler: @escaping Handler) throws {
        self.limits = limits
        self.handler = handler
        daemon = Mutex(0)
        let endpoint = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw NetworkError(.nameResolutionFailed, endpoint: endpoint, detail: String(cString: gai_strerror(rc)))
        }
        defer { freeaddrinfo(list) }
        let ipv6: Int32 = first.pointee.ai_family == AF_INET6 ? 1 : 0
        // The box outlives the daemon: it is released in `stop` after the daemon is gone.
        let box = ListenerBox()
        let boxPointer = Unmanaged.passRetained(box).toOpaque()
        let started = shim_MHD_start(first.pointee.ai_addr, ipv6, limits.maxConnections, limits.maxConnectionsPerAddress,
                                     limits.idleTimeoutSeconds, limits.memoryPerConnection, accessHandler, boxPointer, completedHandler)
        guard let started else {
            let e = errno
            Unmanaged<ListenerBox>.fromOpaque(boxPointer).release()
            throw NetworkError(.io, endpoint: endpoint, detail: e == 0 ? "cannot listen" : "cannot listen: \(String(cString: strerror(e)))")
        }
        let bound = shim_MHD_bound_port(started)
        self.port = bound == 0 ? port : bound
        self.address = host.contains(":") ? "[\(host)]:\(self.port)" : "\(host):\(self.port)"
        boxRef = boxPointer
        daemon.withLock { $0 = Int(bitPattern: UnsafeRawPointer(started)) }
        box.listener.withLock { $0 = self }
    }

    private var boxRef: UnsafeMutableRawPointer?

    deinit { stop() }

    /// Stops listening, closes every connection and waits for the library's thread to end.
    public func stop() {
        let bits = daemon.withLock { d -> Int in defer { d = 0 }; return d }
        guard let d = OpaquePointer(bitPattern: bits) else { return }
        MHD_stop_daemon(d)
        if let boxRef {
            Unmanaged<ListenerBox>.fromOpaque(boxRef).takeUnretainedValue().listener.withLock { $0 = nil }
            Unmanaged<ListenerBox>.fromOpaque(boxRef).release()
        }
    }

    // MARK: - One request, across the library's calls

    /// The body read so far, kept in the library's per-request slot.
    final class RequestState {
        var body: [UInt8] = []
        var tooLarge = false
    }

    func handle(_ connection: OpaquePointer, path: String, method: String, upload: UnsafePointer<CChar>?,
                uploadSize: UnsafeMutablePointer<Int>, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        // First call: only the headers are known.
        guard let raw = slot.pointee else {
            let state = RequestState()
            if let length = MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, "Content-Length").map({ String(cString: $0) }),
               let n = Int(length.filter { $0 != " " && $0 != "\t" }), n > limits.maxBodyBytes {
                state.tooLarge = true
            }
            slot.pointee = Unmanaged.passRetained(state).toOpaque()
            if state.tooLarge {
                refusedTooLarge.add(1, ordering: .relaxed)
                return Self.queue(connection, HTTPServerResponse(status: 413, text: "request body too large"))
            }
            return MHD_Result.YES
        }
        let state = Unmanaged<RequestState>.fromOpaque(raw).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            let n = uploadSize.pointee
            uploadSize.pointee = 0
            guard !state.tooLarge else { return MHD_Result.YES }
            if state.body.count + n > limits.maxBodyBytes {
                // A chunked body past the cap: the connection is closed, nothing is kept.
                state.tooLarge = true
                state.body = []
                refusedTooLarge.add(1, ordering: .relaxed)
                return MHD_Result.NO
            }
            if let upload { upload.withMemoryRebound(to: UInt8.self, capacity: n) { state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) } }
            return MHD_Result.YES
        }
        if state.tooLarge { return MHD_Result.YES }  // answered already
        var headers: [String: String] = [:]
        withUnsafeMutablePointer(to: &headers) { h in
            _ = MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, headerIterator, h)
        }
        let request = HTTPServerRequest(method: method, path: path, headers: headers, body: state.body)
        state.body = []
        return Self.queue(connection, handler(request))
    }

    /// `MHD_RESPMEM_MUST_COPY` (microhttpd.h:3464): the library copies the body.
    static let mustCopy = MHD_ResponseMemoryMode(rawValue: 2)!

    static func queue(_ connection: OpaquePointer, _ response: HTTPServerResponse) -> MHD_Result {
        let r = response.body.withUnsafeBytes { b in
            MHD_create_response_from_buffer(b.count, UnsafeMutableRawPointer(mutating: b.baseAddress), Self.mustCopy)
        }
        guard let r else { return MHD_Result.NO }
        defer { MHD_destroy_response(r) }
        _ = MHD_add_response_header(r, "Content-Type", response.contentType)
        for (name, value) in response.headers { _ = MHD_add_response_header(r, name, value) }
        return MHD_queue_response(connection, UInt32(response.status), r)
    }
}

/// The listener as the C callbacks reach it; nil once stopped.
final class ListenerBox: Sendable {
    let listener = Mutex<HTTPListener?>(nil)
}

private let headerIterator: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return MHD_Result.YES }
    let headers = cls.assumingMemoryBound(to: [String: String].self)
    headers.pointee[String(cString: key).lowercased()] = value.map { String(cString: $0) } ?? ""
    return MHD_Result.YES
}

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, upload, uploadSize, slot in
    guard let cls, let connection, let uploadSize, let slot else { return MHD_Result.NO }
    guard let listener = Unmanaged<ListenerBox>.fromOpaque(cls).takeUnretainedValue().listener.withLock({ $0 }) else { return MHD_Result.NO }
    let path = url.map { String(cString: $0) } ?? "/"
    let verb = method.map { String(cString: $0) } ?? ""
    return listener.handle(connection, path: path, method: verb, upload: upload, uploadSize: uploadSize, slot: slot)
}

private let completedHandler: MHD_RequestCompletedCallback = { _, _, slot, _ in
    guard let slot, let raw = slot.pointee else { return }
    Unmanaged<HTTPListener.RequestState>.fromOpaque(raw).release()
    slot.pointee = nil
}

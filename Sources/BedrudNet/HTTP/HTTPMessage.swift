import BedrudProtocol

/// HTTP header fields in order, with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.map { "\($0.name.lowercased()):\($0.value)" } == b.fields.map { "\($0.name.lowercased()):\($0.value)" }
    }

    public subscript(name: String) -> String? {
        let n = name.lowercased()
        return fields.first { $0.name.lowercased() == n }?.value
    }

    public func values(_ name: String) -> [String] {
        let n = name.lowercased()
        return fields.filter { $0.name.lowercased() == n }.map(\.value)
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every field called `name` with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name, value))
    }

    public mutating func remove(_ name: String) {
        let n = name.lowercased()
        fields.removeAll { $0.name.lowercased() == n }
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

/// An HTTP/1.1 request to send. The client adds `Host`, `Content-Length`,
/// `Connection` and `User-Agent` itself.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: WebURL
    public var headers: HTTPHeaders
    public var body: [UInt8]?

    public init(method: String = "GET", url: WebURL, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The request head (request line + headers + blank line) as bytes.
    func serializedHead(userAgent: String, keepAlive: Bool) -> [UInt8] {
        var h = headers
        if !h.contains("Host") { h.set("Host", url.authority) }
        if !h.contains("User-Agent") { h.set("User-Agent", userAgent) }
        if !h.contains("Accept") { h.set("Accept", "*/*") }
        if let body {
            h.set("Content-Length", String(body.count))
        } else if ["POST", "PUT", "PATCH"].contains(method) {
            h.set("Content-Length", "0")
        }
        if !h.contains("Connection") { h.set("Connection", keepAlive ? "keep-alive" : "close") }
        var text = "\(method) \(url.requestTarget) HTTP/1.1\r\n"
        for f in h.fields { text += "\(f.name): \(f.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }
}

/// A complete HTTP response.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var reason: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The URL that produced this response, after redirects.
    public var url: WebURL

    public init(status: Int, reason: String = "", headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], url: WebURL) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.url = url
    }

    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The body as UTF-8 text (invalid sequences repaired).
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// An absolute http, https, ws or wss URL, parsed strictly and without Foundation.
///
/// Hosts are lowercased; IPv6 literals are kept without brackets in `host` and get them
/// back in `authority`. `path` always starts with `/`; `query` excludes the `?`.
public struct WebURL: Sendable, Hashable, CustomStringConvertible {
    public var scheme: String
    public var host: String
    /// The explicit port, if the URL had one.
    public var explicitPort: UInt16?
    public var path: String
    public var query: String?

    public init(scheme: String, host: String, port: UInt16? = nil, path: String = "/", query: String? = nil) {
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.explicitPort = port
        self.path = path.isEmpty ? "/" : path
        self.query = query
    }

    /// Parses `text`; returns nil unless it is an absolute URL with scheme http, https,
    /// ws or wss and a non-empty host. A fragment is dropped; userinfo is rejected.
    public init?(_ text: String) {
        var s = Substring(text)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        guard let colon = s.firstIndex(of: ":"), s[colon...].hasPrefix("://") else { return nil }
        let scheme = s[..<colon].lowercased()
        guard ["http", "https", "ws", "wss"].contains(scheme) else { return nil }
        var rest = s[s.index(colon, offsetBy: 3)...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var tail = rest[authorityEnd...]
        guard !authority.contains("@") else { return nil }
        var host: Substring
        var portText: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { return nil }
                portText = after.dropFirst()
            }
            guard host.contains(":") else { return nil }
        } else {
            if let colon = authority.lastIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.contains(":") else { return nil }
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || "-._:%".contains($0) }) else { return nil }
        var port: UInt16?
        if let p = portText {
            guard !p.isEmpty, p.allSatisfy(\.isASCII), let v = UInt16(p), v > 0 else { return nil }
            port = v
        }
        var query: String?
        if let q = tail.firstIndex(of: "?") {
            query = String(tail[tail.index(after: q)...])
            tail = tail[..<q]
        }
        guard tail.allSatisfy({ !$0.isWhitespace }) else { return nil }
        self.init(scheme: scheme, host: String(host), port: port, path: tail.isEmpty ? "/" : String(tail), query: query)
    }

    public var isSecure: Bool { scheme == "https" || scheme == "wss" }

    /// The explicit port, or 443/80 by scheme.
    public var port: UInt16 { explicitPort ?? (isSecure ? 443 : 80) }

    /// `host[:port]` with IPv6 brackets; the port only when it is not the scheme default.
    public var authority: String {
        let h = host.contains(":") ? "[\(host)]" : host
        guard let p = explicitPort, p != (isSecure ? 443 : 80) else { return h }
        return "\(h):\(p)"
    }

    /// `scheme://authority` — the origin, for same-origin checks and base URLs.
    public var origin: String { "\(scheme)://\(authority)" }

    /// Path plus `?query`, as sent in an HTTP request line.
    public var requestTarget: String {
        guard let q = query, !q.isEmpty else { return path }
        return "\(path)?\(q)"
    }

    public var description: String { origin + requestTarget }

    /// True when scheme, host and port are the same.
    public func isSameOrigin(as other: WebURL) -> Bool {
        scheme == other.scheme && host == other.host && port == other.port
    }

    /// Resolves a `Location`-style reference: absolute URL, `//host/...`, `/path` or a relative path.
    public func resolving(_ reference: String) -> WebURL? {
        if let abs = WebURL(reference) { return abs }
        if reference.hasPrefix("//") { return WebURL("\(scheme):\(reference)") }
        var copy = self
        var ref = Substring(reference)
        copy.query = nil
        if let q = ref.firstIndex(of: "?") {
            copy.query = String(ref[ref.index(after: q)...])
            ref = ref[..<q]
        }
        if ref.hasPrefix("/") {
            copy.path = String(ref)
        } else if !ref.isEmpty {
            let dir = path.hasSuffix("/") ? path : String(path[...(path.lastIndex(of: "/") ?? path.startIndex)])
            copy.path = dir + ref
        }
        return copy
    }

    /// Appends a path component: `https://h/livekit` + `rtc` → `https://h/livekit/rtc`.
    public func appendingPath(_ component: String) -> WebURL {
        var copy = self
        let c = component.hasPrefix("/") ? String(component.dropFirst()) : component
        copy.path = (path.hasSuffix("/") ? path : path + "/") + c
        return copy
    }
}

/// Percent-encoding for query components (RFC 3986 unreserved characters stay as they are).
public enum PercentEncoding {
    public static func encodeQueryComponent(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                let hex = String(b, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }

    /// Builds `k=v&k2=v2`, encoding each part.
    public static func query(_ items: [(String, String)]) -> String {
        items.map { "\(encodeQueryComponent($0.0))=\(encodeQueryComponent($0.1))" }.joined(separator: "&")
    }
}

extension String {
    /// The string without leading and trailing whitespace (spaces, tabs, newlines).
    public func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}

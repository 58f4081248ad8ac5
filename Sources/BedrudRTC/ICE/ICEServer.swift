/// A STUN or TURN server as the JoinResponse lists it (`ICEServer{urls, username, credential}`).
///
/// `credential` is a secret: it never appears in ``description``, logs or errors.
public struct ICEServer: Sendable, Equatable, CustomStringConvertible {
    public var urls: [String]
    public var username: String?
    public var credential: String?

    public init(urls: [String], username: String? = nil, credential: String? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }

    public var description: String { "ICEServer(\(urls.joined(separator: ", ")))" }
}

/// One parsed `stun:`, `stuns:`, `turn:` or `turns:` URL (RFC 7064, RFC 7065).
public struct ICEServerURL: Sendable, Equatable, CustomStringConvertible {
    public enum Scheme: String, Sendable { case stun, stuns, turn, turns }
    public enum Transport: String, Sendable { case udp, tcp }

    public var scheme: Scheme
    /// Host name or IP address (IPv6 without brackets).
    public var host: String
    public var port: UInt16
    public var transport: Transport

    /// Parses e.g. `turn:203.0.113.7:3478?transport=udp` or `turns:turn.example.com:443?transport=tcp`.
    public init(parsing text: String) throws(ICEServerURLError) {
        guard text.utf8.count <= 512, let colon = text.firstIndex(of: ":") else { throw ICEServerURLError(url: text) }
        guard let scheme = Scheme(rawValue: text[..<colon].lowercased()) else { throw ICEServerURLError(url: text) }
        var rest = text[text.index(after: colon)...]
        var transport: Transport = (scheme == .turns || scheme == .stuns) ? .tcp : .udp
        if let q = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: q)...]
            rest = rest[..<q]
            for part in query.split(separator: "&") {
                let kv = part.split(separator: "=", maxSplits: 1)
                guard kv.count == 2 else { throw ICEServerURLError(url: text) }
                if kv[0].lowercased() == "transport" {
                    guard let t = Transport(rawValue: kv[1].lowercased()) else { throw ICEServerURLError(url: text) }
                    transport = t
                }
            }
        }
        if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw ICEServerURLError(url: text) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw ICEServerURLError(url: text) }
        } else if let c = rest.lastIndex(of: ":") {
            host = rest[..<c]
            portText = rest[rest.index(after: c)...]
        } else {
            host = rest
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" && $0 != "@" }) else {
            throw ICEServerURLError(url: text)
        }
        var port: UInt16 = (scheme == .turns || scheme == .stuns) ? 5349 : 3478
        if let portText {
            guard let p = UInt16(portText), p > 0 else { throw ICEServerURLError(url: text) }
            port = p
        }
        self.scheme = scheme
        self.host = String(host)
        self.port = port
        self.transport = transport
    }

    public var isTURN: Bool { scheme == .turn || scheme == .turns }

    public var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "\(scheme.rawValue):\(h):\(port)?transport=\(transport.rawValue)"
    }
}

/// An ICE server URL that could not be parsed.
public struct ICEServerURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL as given (URLs carry no secrets; credentials are separate fields).
    public let url: String
    public var description: String { "ICE server URL \"\(url.prefix(120))\" is not a valid stun:/turn:/turns: URL; it is ignored." }
}

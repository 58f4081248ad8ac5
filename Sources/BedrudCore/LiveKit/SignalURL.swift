import BedrudProtocol

/// Builds LiveKit's signalling URLs from Bedrud's `livekitHost` (livekit-protocol.md §1.1–§1.2).
///
/// `http→ws`, `https→wss`; the host's path is kept (Bedrud's embedded mode serves
/// LiveKit under `/livekit`) and `rtc` appended. The token travels in the
/// `Authorization` header, never in the URL, so it stays out of proxy logs.
public enum SignalURL {
    /// Client facts announced in the query.
    public struct ClientInfo: Sendable {
        public var version: String
        public var os: String
        public var osVersion: String
        public var deviceModel: String
        public init(version: String, os: String = "linux", osVersion: String = "", deviceModel: String = "bedrud-bot") {
            self.version = version
            self.os = os
            self.osVersion = osVersion
            self.deviceModel = deviceModel
        }
    }

    public struct InvalidHost: Error, CustomStringConvertible, Sendable {
        public let host: String
        public var description: String { "The server's LiveKit address '\(Redact.query(host))' is not an http(s) or ws(s) URL." }
    }

    /// `ws(s)://host[:port]/<prefix>/rtc` with no query.
    public static func base(livekitHost: String) throws -> WebURL {
        var text = livekitHost.trimmingWhitespace()
        if !text.contains("://") { text = "wss://" + text }
        guard var url = WebURL(text) else { throw InvalidHost(host: livekitHost) }
        switch url.scheme {
        case "http": url.scheme = "ws"
        case "https": url.scheme = "wss"
        case "ws", "wss": break
        default: throw InvalidHost(host: livekitHost)
        }
        url.query = nil
        // Someone may have typed the full signalling path already.
        var path = url.path
        while path.hasSuffix("/") && path.count > 1 { path.removeLast() }
        for suffix in ["/validate", "/rtc"] where path.hasSuffix(suffix) { path.removeLast(suffix.count) }
        url.path = path.isEmpty ? "/" : path
        return url.appendingPath("rtc")
    }

    /// The `/rtc` URL for a join or a resume, with the v0 options a recorder wants:
    /// protocol 16, auto-subscribe, no adaptive stream. No `sdk` is named: we are none of
    /// LiveKit's SDKs, and the server's defaults for an unknown client (no SCTP
    /// zero-checksum, no codec changes) suit us.
    public static func connect(livekitHost: String, mode: SignalConnectRequest.Mode, client: ClientInfo) throws -> WebURL {
        var url = try base(livekitHost: livekitHost)
        var items: [(String, String)] = [
            ("auto_subscribe", "1"),
            ("adaptive_stream", "0"),
            ("protocol", String(LiveKit.clientProtocol)),
            ("client_protocol", "0"),
            ("version", client.version),
            ("os", client.os),
        ]
        if !client.osVersion.isEmpty { items.append(("os_version", client.osVersion)) }
        if !client.deviceModel.isEmpty { items.append(("device_model", client.deviceModel)) }
        if case .resume(let sid, let reason) = mode {
            items.append(("reconnect", "1"))
            items.append(("sid", sid))
            items.append(("reconnect_reason", String(reason.rawValue)))
        }
        url.query = PercentEncoding.query(items)
        return url
    }

    /// The matching `/rtc/validate` URL (plain HTTP), same query.
    public static func validate(_ signal: WebURL) -> WebURL {
        var u = signal.appendingPath("validate")
        u.scheme = signal.scheme == "wss" ? "https" : "http"
        return u
    }
}

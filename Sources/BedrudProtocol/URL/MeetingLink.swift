/// What a user typed to say which room to join: a meeting link or a bare room name.
///
/// Accepts every link shape Bedrud's apps accept (`/m/<room>` from the web app and
/// `/c/<room>` from the mobile apps), with or without a scheme (https assumed), with
/// ports, subdomains, trailing path parts, query strings and surrounding whitespace.
public enum MeetingTarget: Sendable, Equatable {
    /// A link: the server's origin (scheme, host, port; no path) and the room name.
    case link(server: WebURL, room: String)
    /// A room name on the configured server.
    case roomName(String)

    /// Parses user input. Returns nil for empty input or a link that names no room.
    public init?(_ input: String) {
        var text = Substring(input)
        while let f = text.first, f.isWhitespace { text.removeFirst() }
        while let l = text.last, l.isWhitespace { text.removeLast() }
        guard !text.isEmpty else { return nil }

        let looksLikeLink = text.contains("/") || text.contains("://")
        guard looksLikeLink else {
            // A bare room name: Bedrud trims and lowercases on join; keep the user's text.
            guard !text.contains(where: { $0.isWhitespace }) else { return nil }
            self = .roomName(String(text))
            return
        }
        let withScheme = text.contains("://") ? String(text) : "https://" + text
        guard let url = WebURL(withScheme), !url.host.isEmpty, url.scheme == "http" || url.scheme == "https" else { return nil }
        let parts = url.path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0] == "m" || parts[0] == "c" else { return nil }
        let room = Self.percentDecode(String(parts[1]))
        guard !room.isEmpty else { return nil }
        self = .link(server: WebURL(scheme: url.scheme, host: url.host, port: url.explicitPort), room: room)
    }

    public var roomName: String {
        switch self {
        case .link(_, let room), .roomName(let room): room
        }
    }

    static func percentDecode(_ s: String) -> String {
        guard s.contains("%") else { return s }
        var bytes: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%"), it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

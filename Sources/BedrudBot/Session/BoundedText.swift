/// A text from outside (a name, an identity, a chat's id, a reason or a detail a server
/// gave) as an event keeps it: at most ``limitBytes`` of UTF-8. A longer text is cut at a
/// Unicode scalar boundary and ended with `…`; docs/EVENTS.md says so. A real name is far
/// shorter; a megabyte name would otherwise be a megabyte on every line that names its
/// owner. The text is cut when the event is built, and again when a line is read back,
/// so a ``TranscriptEvent`` never holds more.
///
/// Encoded and decoded as a plain JSON string; compared, hashed and printed as its text.
struct BoundedText: Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible, EmptyValue {
    /// 16 KiB.
    static let limitBytes = 16 << 10

    let text: String

    init(_ text: String) { self.text = BoundedText.cut(text, toBytes: Self.limitBytes) }
    init(stringLiteral text: String) { self.init(text) }

    var description: String { text }
    var isEmpty: Bool { text.isEmpty }
    static var emptyValue: BoundedText { BoundedText("") }

    init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(text)
    }

    /// `text` if it has at most `limit` bytes of UTF-8, else its longest prefix of whole
    /// scalars that leaves room for `…`, with `…`.
    static func cut(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var scalars = String.UnicodeScalarView()
        var bytes = 0
        for u in text.unicodeScalars {
            bytes += UTF8.width(u)
            if bytes > limit - 3 { break }  // room for "…"
            scalars.append(u)
        }
        return String(scalars) + "…"
    }
}

/// A message's text as an event keeps it (a chat, a server's notice, a warning: an event's
/// `message`): at most ``limitBytes`` of UTF-8, cut as ``BoundedText`` cuts. Bedrud's web
/// client sends chats longer than 60,000 bytes in chunks, and ``ChatAssembler`` already
/// refuses a message over 2,000,000 UTF-16 code units (at most 6 MB of UTF-8), so a
/// reassembled chat is kept whole; only texts repeated on many lines (names, identities)
/// are held to ``BoundedText/limitBytes``.
struct BoundedMessage: Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible, EmptyValue {
    /// 8 MiB.
    static let limitBytes = 8 << 20

    let text: String

    init(_ text: String) { self.text = BoundedText.cut(text, toBytes: Self.limitBytes) }
    init(stringLiteral text: String) { self.init(text) }

    var description: String { text }
    var isEmpty: Bool { text.isEmpty }
    static var emptyValue: BoundedMessage { BoundedMessage("") }

    init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(text)
    }
}

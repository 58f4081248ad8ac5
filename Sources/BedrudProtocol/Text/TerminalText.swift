/// Makes text from other people safe to show on a terminal or write into a text file.
///
/// Display names, chat, metadata, disconnect reasons and server error texts come from
/// whoever is in the meeting or runs the server. Written raw, an escape sequence in a
/// name (`ESC ] 0 ; … BEL`, `ESC [ 2 J`) retitles or clears the operator's terminal, a
/// newline in a chat message forges a line of its own, and a bidi override reverses
/// what follows it. Every such string goes through ``sanitize(_:keepingLineBreaks:)``
/// before it is printed, logged or written to `transcript.vtt`; JSON outputs keep the
/// original text (JSON escapes it).
///
/// What becomes a visible escape:
/// - C0 controls and DEL: `\n`, `\r`, `\t` by name, the rest as `\xHH` (ESC is `\x1b`);
/// - C1 controls (U+0080–U+009F, e.g. the 8-bit CSI U+009B): `\u{9b}`;
/// - bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the
///   line and paragraph separators U+2028/U+2029: `\u{202e}`.
///
/// Everything else is kept, letters of every script and the joiners and marks that
/// Persian and Arabic text needs (ZWNJ U+200C, RLM U+200F) included. Pure; no allocation
/// when the text is already clean.
public enum TerminalText {
    /// The text with every unsafe scalar replaced by a visible escape.
    /// - Parameter keepingLineBreaks: keep `\n` and `\t` as they are (for multi-line
    ///   output the program itself built); a `\r` is still escaped, since it lets the
    ///   rest of a line overwrite its start.
    public static func sanitize(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0, keepingLineBreaks: keepingLineBreaks) }) else { return text }
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            if isUnsafe(s, keepingLineBreaks: keepingLineBreaks) {
                out.append(contentsOf: escape(s).unicodeScalars)
            } else {
                out.append(s)
            }
        }
        return String(out)
    }

    /// A value to quote in a message (`got '…'`): sanitised, and cut to `limit`
    /// characters with a note of how long it really was, so a 1 MB value never becomes a
    /// 1 MB line of standard error.
    /// `limit` counts Unicode scalars, not Characters: one Character can hold any number
    /// of combining marks, so a cut by Characters is no bound at all.
    public static func quoted(_ value: some StringProtocol, limit: Int = 80) -> String {
        let scalars = value.unicodeScalars
        guard let end = scalars.index(scalars.startIndex, offsetBy: limit, limitedBy: scalars.endIndex), end < scalars.endIndex else {
            return sanitize(String(value))
        }
        return sanitize(String(String.UnicodeScalarView(scalars[..<end]))) + "… (\(value.utf8.count) bytes in all)"
    }

    /// Text from someone else, made fit for one line of a terminal or a text file:
    /// sanitised like ``sanitize(_:keepingLineBreaks:)``, and when it has more than
    /// `limit` Unicode scalars, cut there and ended with `…`. A 1 MiB display name
    /// becomes a short one instead of a megabyte on every line that names it.
    public static func line(_ text: some StringProtocol, limit: Int) -> String {
        let scalars = text.unicodeScalars
        guard let end = scalars.index(scalars.startIndex, offsetBy: limit, limitedBy: scalars.endIndex), end < scalars.endIndex else {
            return sanitize(String(text))
        }
        return sanitize(String(String.UnicodeScalarView(scalars[..<end]))) + "…"
    }

    /// JSON text made safe for a terminal without changing what it means: C1 controls,
    /// bidi overrides and separators (which JSON encoders leave raw) become `\uXXXX`
    /// escapes, which decode to the very same string. Control characters below U+0020
    /// are already escaped by every JSON encoder; line breaks between values are kept.
    public static func escapingJSON(_ json: String) -> String {
        guard !isClean(json, keepingLineBreaks: true) else { return json }
        var out = String.UnicodeScalarView()
        for s in json.unicodeScalars {
            if isUnsafe(s, keepingLineBreaks: true) {
                out.append(contentsOf: ("\\u" + hex(s.value, digits: 4)).unicodeScalars)
            } else {
                out.append(s)
            }
        }
        return String(out)
    }

    /// True when ``sanitize(_:keepingLineBreaks:)`` would change nothing.
    public static func isClean(_ text: String, keepingLineBreaks: Bool = false) -> Bool {
        !text.unicodeScalars.contains { isUnsafe($0, keepingLineBreaks: keepingLineBreaks) }
    }

    @inline(__always)
    static func isUnsafe(_ s: Unicode.Scalar, keepingLineBreaks: Bool) -> Bool {
        let v = s.value
        if v < 0x20 { return !(keepingLineBreaks && (v == 0x0A || v == 0x09)) }
        if v < 0x7F { return false }
        if v <= 0x9F { return true }  // DEL and C1
        return (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) || v == 0x2028 || v == 0x2029
    }

    static func escape(_ s: Unicode.Scalar) -> String {
        switch s.value {
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x09: return "\\t"
        case let v where v < 0x80: return "\\x" + hex(v, digits: 2)
        case let v: return "\\u{" + hex(v, digits: 1) + "}"
        }
    }

    static func hex(_ v: UInt32, digits: Int) -> String {
        let h = String(v, radix: 16)
        return String(repeating: "0", count: max(0, digits - h.count)) + h
    }
}

/// Escaping for text that goes into `report.html`. Every string that came from the
/// network or a file (names, chat, reasons, file names, the room) passes through one of
/// these before it reaches the page; nothing else is interpolated raw. ``escape(_:)`` is
/// also the escaper of `smoke --junit`'s XML (``SmokeReport``): one set of rules for both.
enum HTMLText {
    /// Text content and attribute values (double- or single-quoted), in HTML and in XML 1.0:
    /// `& < > " '` become entities (`&#39;`, which both know); C0/C1 controls other than
    /// tab and line feed (which HTML and XML forbid, or a terminal would act on if the file
    /// were `cat`; a carriage return among them) and the noncharacters U+FFFE and U+FFFF
    /// (not characters in XML) become U+FFFD.
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count + 8)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(u)
            default:
                if u.value < 0x20 || (0x7F...0x9F).contains(u.value) || u.value == 0xFFFE || u.value == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out
    }

    /// A remote string as isolated text: escaped and wrapped in `<bdi>` so a name in a
    /// right-to-left script, or one with bidi overrides, cannot reorder the text around it.
    static func remote(_ s: String) -> String { "<bdi>" + escape(s) + "</bdi>" }

    /// JSON for a `<script type="application/json">` block: `<`, `>` and `&` as `\u003c`…
    /// (so neither `</script>` nor `<!--` can end or change the block) and U+2028/U+2029
    /// as escapes (line terminators to older JavaScript parsers). JSON only has these
    /// characters inside strings, where the escapes mean the same characters.
    static func scriptJSON(_ json: String) -> String {
        var out = ""
        out.reserveCapacity(json.utf8.count)
        for u in json.unicodeScalars {
            switch u.value {
            case 0x3C: out += "\\u003c"
            case 0x3E: out += "\\u003e"
            case 0x26: out += "\\u0026"
            case 0x2028: out += "\\u2028"
            case 0x2029: out += "\\u2029"
            default: out.unicodeScalars.append(u)
            }
        }
        return out
    }

    /// A relative path inside the session folder for `src`/`href`: each segment
    /// percent-encoded (RFC 3986 unreserved characters kept), so a file name cannot end the
    /// attribute, start a scheme (`javascript:`) or leave the folder. Nil for an absolute
    /// path, a scheme, an empty segment, `.` or `..`.
    static func relativeURL(_ path: String) -> String? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.isEmpty, !path.hasPrefix("/") else { return nil }
        var parts: [String] = []
        for seg in segments {
            guard !seg.isEmpty, seg != ".", seg != ".." else { return nil }
            var enc = ""
            for b in seg.utf8 {
                switch b {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    enc.unicodeScalars.append(Unicode.Scalar(b))
                default:
                    let hex = Array("0123456789ABCDEF".unicodeScalars)
                    enc += "%"
                    enc.unicodeScalars.append(hex[Int(b >> 4)])
                    enc.unicodeScalars.append(hex[Int(b & 15)])
                }
            }
            parts.append(enc)
        }
        // "a:b" stays "a%3Ab"; a first segment with a colon cannot read as a scheme.
        return parts.joined(separator: "/")
    }
}

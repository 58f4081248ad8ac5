/// The JSON `null` in a `[String: Any]` document written by ``JSONWriter`` (what
/// Foundation's `NSNull` was for `JSONSerialization`).
public struct JSONNull: Sendable, Equatable {
    public init() {}
}

/// Writes `[String: Any]` documents as compact JSON with sorted keys, byte for byte as
/// Foundation's `JSONSerialization` with `.sortedKeys` wrote them on Linux, without
/// importing Foundation (see ``OSThread``): the lines of `events.jsonl` and `join --json`
/// keep their exact text. `FoundationFreeTests` compares the two; Codable values come in
/// through ``JSONTreeEncoder``.
///
/// Values: `String`, `Substring`, `Bool`, every fixed-width integer, `Double`, `Float`,
/// arrays, `[String: Any]`, ``JSONNull``, ``JSONValue`` and optionals (nil is `null`).
public enum JSONWriter {
    /// The JSON text of `object`, or nil if it holds a value JSON cannot express (NaN, an
    /// infinity, a type not listed above), as `JSONSerialization` threw then.
    /// - Parameter escapingSlashes: writes `/` as `\/` (JSONSerialization's default).
    public static func serialize(_ object: Any, escapingSlashes: Bool = true) -> String? {
        var out = ""
        guard write(object, into: &out, escapingSlashes: escapingSlashes) else { return nil }
        return out
    }

    private static func write(_ value: Any, into out: inout String, escapingSlashes: Bool) -> Bool {
        switch value {
        case let s as String: writeString(s, into: &out, escapingSlashes: escapingSlashes)
        case let s as Substring: writeString(String(s), into: &out, escapingSlashes: escapingSlashes)
        case let b as Bool: out += b ? "true" : "false"
        case let i as any BinaryInteger: out += String(describing: i)
        case let d as Double:
            guard d.isFinite else { return false }
            out += trimmed(d.description)
        case let f as Float:
            guard f.isFinite else { return false }
            out += trimmed(f.description)
        case is JSONNull: out += "null"
        case let v as JSONValue: return write(v.anyValue, into: &out, escapingSlashes: escapingSlashes)
        case let o as [String: Any]:
            out += "{"
            var first = true
            for key in o.keys.sorted(by: KeyOrder.less) {
                if !first { out += "," }
                first = false
                writeString(key, into: &out, escapingSlashes: escapingSlashes)
                out += ":"
                guard write(o[key]!, into: &out, escapingSlashes: escapingSlashes) else { return false }
            }
            out += "}"
        case let a as [Any]:
            out += "["
            for (n, element) in a.enumerated() {
                if n > 0 { out += "," }
                guard write(element, into: &out, escapingSlashes: escapingSlashes) else { return false }
            }
            out += "]"
        default:
            let mirror = Mirror(reflecting: value)
            guard mirror.displayStyle == .optional else { return false }
            guard let wrapped = mirror.children.first?.value else {
                out += "null"
                return true
            }
            return write(wrapped, into: &out, escapingSlashes: escapingSlashes)
        }
        return true
    }

    /// `3.0` → `3`, as JSONSerialization wrote whole numbers; `1e+16` and `0.1` stay.
    private static func trimmed(_ description: String) -> String {
        description.hasSuffix(".0") ? String(description.dropLast(2)) : description
    }

    static func writeString(_ s: String, into out: inout String, escapingSlashes: Bool) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += escapingSlashes ? "\\/" : "/"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{8}": out += "\\b"
            case "\u{c}": out += "\\f"
            case _ where u.value < 0x20:
                let hex = Array("0123456789abcdef".unicodeScalars)
                out += "\\u00"
                out.unicodeScalars.append(hex[Int(u.value >> 4)])
                out.unicodeScalars.append(hex[Int(u.value & 0xF)])
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }

    /// The key order of `JSONSerialization`'s `.sortedKeys` on Linux: ICU root collation
    /// with numeric, case-insensitive and forced ordering. Primary: punctuation (in the
    /// root collation's order) before digits before letters, digit runs by value, letters
    /// without case; then, at the first letter or digit run that differs only in case or
    /// leading zeros, lowercase or fewer zeros first; then code points. Exact for ASCII keys (all the bot writes); other characters
    /// sort after the letters by code point, where ICU would interleave them.
    enum KeyOrder {
        private static let punctuation = Array(" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$".unicodeScalars)

        private enum Element {
            case punctuation(Int)
            case digits(value: Substring.UnicodeScalarView, length: Int)
            case letter(UInt32, upper: Bool)
            case other(UInt32)
        }

        private static func elements(_ s: String) -> [Element] {
            var out: [Element] = []
            let scalars = s.unicodeScalars
            var i = scalars.startIndex
            while i < scalars.endIndex {
                let u = scalars[i]
                if ("0" ... "9").contains(u) {
                    var j = i
                    while j < scalars.endIndex, ("0" ... "9").contains(scalars[j]) { j = scalars.index(after: j) }
                    let run = Substring(s.unicodeScalars[i ..< j]).unicodeScalars
                    let length = run.count
                    let value = run.drop { $0 == "0" }
                    out.append(.digits(value: value.isEmpty ? run.suffix(1) : value, length: length))
                    i = j
                    continue
                }
                if ("a" ... "z").contains(u) {
                    out.append(.letter(u.value, upper: false))
                } else if ("A" ... "Z").contains(u) {
                    out.append(.letter(u.value + 32, upper: true))
                } else if let rank = punctuation.firstIndex(of: u) {
                    out.append(.punctuation(rank))
                } else if u.value < 0x20 || u.value == 0x7F {
                    out.append(.punctuation(-1))
                } else {
                    out.append(.other(u.value))
                }
                i = scalars.index(after: i)
            }
            return out
        }

        /// -1, 0, 1 on the primary level.
        private static func primary(_ a: Element, _ b: Element) -> Int {
            func rank(_ e: Element) -> Int {
                switch e {
                case .punctuation: 0
                case .digits: 1
                case .letter: 2
                case .other: 3
                }
            }
            let ra = rank(a), rb = rank(b)
            if ra != rb { return ra < rb ? -1 : 1 }
            switch (a, b) {
            case let (.punctuation(x), .punctuation(y)): return x == y ? 0 : (x < y ? -1 : 1)
            case let (.letter(x, _), .letter(y, _)), let (.other(x), .other(y)): return x == y ? 0 : (x < y ? -1 : 1)
            case let (.digits(x, _), .digits(y, _)):
                if x.count != y.count { return x.count < y.count ? -1 : 1 }
                for (p, q) in zip(x, y) where p != q { return p.value < q.value ? -1 : 1 }
                return 0
            default: return 0
            }
        }

        static func less(_ a: String, _ b: String) -> Bool {
            let ea = elements(a), eb = elements(b)
            for (x, y) in zip(ea, eb) {
                let c = primary(x, y)
                if c != 0 { return c < 0 }
            }
            if ea.count != eb.count { return ea.count < eb.count }
            // Same primaries, so the elements pair up kind by kind.
            // Then left to right: the first letter that differs in case (lowercase first) or
            // digit run that differs in leading zeros (fewer first) decides.
            for (x, y) in zip(ea, eb) {
                if case let .letter(_, p) = x, case let .letter(_, q) = y, p != q { return !p }
                if case let .digits(_, p) = x, case let .digits(_, q) = y, p != q { return p < q }
            }
            return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
        }
    }
}

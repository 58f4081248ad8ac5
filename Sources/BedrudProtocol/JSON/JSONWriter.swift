/// The one JSON writer of the bot: an `Encodable` value in, JSON text out, sorted keys,
/// without importing Foundation (see ``OSThread``). Its output is byte for byte what the
/// Foundation writers it replaced wrote on Linux, so `events.jsonl`, `summary.json`,
/// `--json` answers and stored sessions keep their exact text (`JSONWriterTests`
/// compares them):
///
/// - numbers: integers as integers, `Double` and `Float` by their shortest `description`
///   with a trailing `.0` dropped (`3`, `4.5`, `1e-07`, `1e+16`); NaN and the infinities
///   are an error;
/// - strings: `"` `\` and C0 controls escaped (`\n`, `\u001f`), `/` only with
///   `escapingSlashes`, everything else as it is;
/// - `nil` written by `encodeNil` is `null`; a nil optional a synthesized `encode` skips
///   (`encodeIfPresent`) is left out;
/// - keys sorted by ``KeyOrder``; a key written twice keeps its last value.
///
/// Values are gathered into a small tree first (an object's keys can only be sorted once
/// all are known), then written out in one pass.
public enum JSONWriter {
    /// How an object's keys are sorted.
    public enum KeyOrder: Sendable {
        /// `JSONSerialization`'s `.sortedKeys` on Linux (ICU collation: `a_1` before `a1`,
        /// `b9` before `b10`, case ignored first): the order of `events.jsonl` lines.
        case collated
        /// `JSONEncoder`'s `.sortedKeys`: by code point (`A` before `_x` before `a`):
        /// `summary.json`, `--json` answers and stored sessions.
        case codePoints
    }

    /// How a value is written.
    public struct Style: Sendable {
        /// Several lines, two spaces per level, `"key" : value`, as `JSONEncoder`'s
        /// `.prettyPrinted` (an empty object or array is `{` and `}` with a blank line
        /// between); otherwise one line with no spaces.
        public var pretty: Bool
        /// `/` written as `\/` (what `JSONEncoder` does unless told `.withoutEscapingSlashes`).
        public var escapingSlashes: Bool
        public var keyOrder: KeyOrder

        public init(pretty: Bool = false, escapingSlashes: Bool = false, keyOrder: KeyOrder = .codePoints) {
            (self.pretty, self.escapingSlashes, self.keyOrder) = (pretty, escapingSlashes, keyOrder)
        }

        /// One line, keys by ``KeyOrder/collated``, `/` as it is: a line of `events.jsonl`.
        public static let eventLine = Style(keyOrder: .collated)
    }

    /// The JSON text of `value`.
    /// - Throws: `EncodingError.invalidValue` for a value JSON cannot express (NaN, an
    ///   infinity), or whatever `value`'s own `encode(to:)` throws.
    public static func string<T: Encodable>(_ value: T, style: Style = Style()) throws -> String {
        let root = Node()
        try root.put(value, codingPath: [])
        var out = ""
        write(root, into: &out, style: style, depth: 0)
        return out
    }

    // MARK: - The tree

    /// One value being built: a scalar, an object or an array. Containers share it, so a
    /// value may open its keyed container more than once (a payload's keys beside `type`),
    /// as `JSONEncoder` allows.
    final class Node {
        enum Scalar {
            case null
            case bool(Bool)
            /// The number's JSON text.
            case number(String)
            case string(String)
        }

        var scalar: Scalar?
        var object: [String: Node]?
        var array: [Node]?

        func put<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
            switch value {
            case let v as String: scalar = .string(v)
            case let v as Bool: scalar = .bool(v)
            case let v as Double: try set(v, codingPath: codingPath)
            case let v as Float: try set(v, codingPath: codingPath)
            case let v as any BinaryInteger: scalar = .number(String(describing: v))
            default: try value.encode(to: FrontEnd(node: self, codingPath: codingPath))
            }
        }

        func set<F: BinaryFloatingPoint & CustomStringConvertible>(_ v: F, codingPath: [any CodingKey]) throws {
            guard v.isFinite else {
                throw EncodingError.invalidValue(v, .init(codingPath: codingPath, debugDescription: "\(v) is not expressible in JSON"))
            }
            let text = v.description
            // `3.0` → `3`, as both Foundation writers wrote whole numbers; `1e+16`, `0.1` stay.
            scalar = .number(text.hasSuffix(".0") ? String(text.dropLast(2)) : text)
        }
    }

    // MARK: - Text

    private static func write(_ node: Node, into out: inout String, style: Style, depth: Int) {
        if let object = node.object {
            guard !object.isEmpty else {
                out += style.pretty ? "{\n\n" + indent(depth) + "}" : "{}"
                return
            }
            let collated = style.keyOrder == .collated && !object.keys.allSatisfy(KeyOrder.isPlain)
            let members = collated ? object.sorted { KeyOrder.less($0.key, $1.key) }
                : object.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            out += "{"
            for (n, (key, child)) in members.enumerated() {
                if n > 0 { out += "," }
                if style.pretty { out += "\n" + indent(depth + 1) }
                writeString(key, into: &out, escapingSlashes: style.escapingSlashes)
                out += style.pretty ? " : " : ":"
                write(child, into: &out, style: style, depth: depth + 1)
            }
            if style.pretty { out += "\n" + indent(depth) }
            out += "}"
        } else if let array = node.array {
            guard !array.isEmpty else {
                out += style.pretty ? "[\n\n" + indent(depth) + "]" : "[]"
                return
            }
            out += "["
            for (n, element) in array.enumerated() {
                if n > 0 { out += "," }
                if style.pretty { out += "\n" + indent(depth + 1) }
                write(element, into: &out, style: style, depth: depth + 1)
            }
            if style.pretty { out += "\n" + indent(depth) }
            out += "]"
        } else {
            switch node.scalar {
            case nil: out += "{}"  // a value that encoded nothing, as JSONEncoder writes it
            case .null: out += "null"
            case .bool(let b): out += b ? "true" : "false"
            case .number(let text): out += text
            case .string(let s): writeString(s, into: &out, escapingSlashes: style.escapingSlashes)
            }
        }
    }

    private static func indent(_ depth: Int) -> String { String(repeating: "  ", count: depth) }

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
}

extension JSONWriter.KeyOrder {
    /// ``collated``: ICU root collation with numeric, case-insensitive and forced ordering.
    /// Primary: punctuation (in the root collation's order) before digits before letters,
    /// digit runs by value, letters without case; then, at the first letter or digit run
    /// that differs only in case or leading zeros, lowercase or fewer zeros first; then
    /// code points. Exact for ASCII keys (all the bot writes); other characters sort after
    /// the letters by code point, where ICU would interleave them.
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

    /// Whether `key` has only lowercase ASCII letters and `_` (every key of `events.jsonl`):
    /// keys like these are in ``collated`` order when sorted by code point (`_` sorts
    /// before the letters in both), so the writer sorts them the cheap way.
    static func isPlain(_ key: String) -> Bool {
        key.utf8.allSatisfy { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || $0 == UInt8(ascii: "_") }
    }

    /// Whether `a` comes before `b` in the ``collated`` order.
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

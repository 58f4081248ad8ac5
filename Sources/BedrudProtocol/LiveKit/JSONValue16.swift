/// A JSON value (RFC 8259) whose strings are kept as UTF-16 code units, exactly as a
/// JavaScript sender had them.
///
/// Why not `JSONDecoder`: Bedrud's web client cuts long chat text with `String.slice`,
/// which counts UTF-16 code units (chatDataChannel.ts `splitUtf8ByMaxBytes`), so a chunk
/// may end in the first half of a surrogate pair and the next begin with the second.
/// `JSON.stringify` writes such a lone half as `\ud83d`; `JSONDecoder` refuses the whole
/// packet. Here each half survives until the parts are joined (``ChatAssembler``).
///
/// Bounded: nesting deeper than `maxDepth` is an error, never a deep recursion.
public indirect enum JSONValue16: Sendable, Equatable {
    case string([UInt16])
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue16])
    /// Members in the order written; a repeated key keeps its last value (as `JSON.parse`).
    case object([(String, JSONValue16)])

    public static func == (a: JSONValue16, b: JSONValue16) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// Parses one JSON text; nil when it is not valid JSON (lone surrogate escapes and
    /// surrogates are allowed, as in JavaScript) or nests deeper than `maxDepth`.
    public init?(parsing bytes: [UInt8], maxDepth: Int = 32) {
        var p = Parser(bytes: bytes, maxDepth: maxDepth)
        guard let v = p.value(depth: 0) else { return nil }
        p.skipSpace()
        guard p.i == bytes.count else { return nil }
        self = v
    }

    /// The member `key` of an object (the last one written), else nil.
    public subscript(key: String) -> JSONValue16? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.0 == key }?.1
    }

    /// The UTF-16 code units of a string value.
    public var utf16: [UInt16]? { if case .string(let s) = self { s } else { nil } }
    /// A string value as Swift text (a lone surrogate becomes U+FFFD).
    public var string: String? { utf16.map { String(decoding: $0, as: UTF16.self) } }
    public var number: Double? { if case .number(let n) = self { n } else { nil } }
    public var bool: Bool? { if case .bool(let b) = self { b } else { nil } }

    /// A number that is a whole value JavaScript can hold exactly (|n| ≤ 2^53), as Int.
    public var integer: Int? {
        guard let n = number, n.isFinite, n == n.rounded(), abs(n) <= 9_007_199_254_740_992 else { return nil }
        return Int(n)
    }

    private struct Parser {
        let bytes: [UInt8]
        let maxDepth: Int
        var i = 0

        init(bytes: [UInt8], maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let n = word.utf8CodeUnitCount
            guard i + n <= bytes.count else { return false }
            for k in 0..<n where bytes[i + k] != word.utf8Start[k] { return false }
            i += n
            return true
        }

        mutating func value(depth: Int) -> JSONValue16? {
            guard depth <= maxDepth else { return nil }
            skipSpace()
            guard i < bytes.count else { return nil }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1
                var members: [(String, JSONValue16)] = []
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
                while true {
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let key = string() else { return nil }
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
                    i += 1
                    guard let v = value(depth: depth + 1) else { return nil }
                    members.append((String(decoding: key, as: UTF16.self), v))
                    skipSpace()
                    guard i < bytes.count else { return nil }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
                    return nil
                }
            case UInt8(ascii: "["):
                i += 1
                var items: [JSONValue16] = []
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                while true {
                    guard let v = value(depth: depth + 1) else { return nil }
                    items.append(v)
                    skipSpace()
                    guard i < bytes.count else { return nil }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                    return nil
                }
            case UInt8(ascii: "\""):
                return string().map { .string($0) }
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default: return number()
            }
        }

        /// RFC 8259 §6: `-? int frac? exp?`.
        mutating func number() -> JSONValue16? {
            let start = i
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            func digits(_ p: inout Parser) -> Int {
                let s = p.i
                while p.i < p.bytes.count, p.bytes[p.i] >= 0x30, p.bytes[p.i] <= 0x39 { p.i += 1 }
                return p.i - s
            }
            guard i < bytes.count else { return nil }
            if bytes[i] == 0x30 { i += 1 } else if digits(&self) == 0 { return nil }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard digits(&self) > 0 else { return nil }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard digits(&self) > 0 else { return nil }
            }
            guard let d = Double(String(decoding: bytes[start..<i], as: UTF8.self)) else { return nil }
            return .number(d)
        }

        /// Appends raw UTF-8 text as UTF-16; false when it is not valid UTF-8.
        func appendUTF8(_ range: Range<Int>, to out: inout [UInt16]) -> Bool {
            guard !range.isEmpty else { return true }
            let failed = transcode(bytes[range].makeIterator(), from: UTF8.self, to: UTF16.self, stoppingOnError: true) { out.append($0) }
            return !failed
        }

        /// A string literal at `i` (which is `"`), as UTF-16 code units. The raw text must be
        /// UTF-8 without control characters; escapes may name lone surrogates.
        mutating func string() -> [UInt16]? {
            i += 1
            var out: [UInt16] = []
            var runStart = i
            while i < bytes.count {
                let b = bytes[i]
                if b == UInt8(ascii: "\"") {
                    guard appendUTF8(runStart..<i, to: &out) else { return nil }
                    i += 1
                    return out
                }
                if b < 0x20 { return nil }
                if b == UInt8(ascii: "\\") {
                    guard appendUTF8(runStart..<i, to: &out) else { return nil }
                    i += 1
                    guard i < bytes.count else { return nil }
                    switch bytes[i] {
                    case UInt8(ascii: "\""): out.append(0x22)
                    case UInt8(ascii: "\\"): out.append(0x5C)
                    case UInt8(ascii: "/"): out.append(0x2F)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        guard i + 4 < bytes.count else { return nil }
                        var v: UInt16 = 0
                        for k in 1...4 {
                            let c = bytes[i + k]
                            let d: UInt8
                            switch c {
                            case 0x30...0x39: d = c - 0x30
                            case 0x41...0x46: d = c - 0x41 + 10
                            case 0x61...0x66: d = c - 0x61 + 10
                            default: return nil
                            }
                            v = v << 4 | UInt16(d)
                        }
                        out.append(v)
                        i += 4
                    default: return nil
                    }
                    i += 1
                    runStart = i
                    continue
                }
                i += 1
            }
            return nil
        }
    }
}

/// The syntax of bedrud-bot's configuration file: line-based `key = value`, no YAML,
/// no JSON. Pure: it parses text; reading the file is the caller's business.
///
/// ```
/// # a comment
/// default_instance = work
///
/// [network]
/// connect_timeout = 10s          # trailing comments after whitespace
///
/// [instance work]
/// url = https://meet.example.com
/// email = "recorder@example.com"
/// password_file = ${CREDENTIALS_DIRECTORY}/bedrud-password
/// ```
///
/// Values: unquoted text runs to the end of the line or to ` #`; `"double quoted"`
/// supports `\"`, `\\`, `\n`, `\t`, `\$`; `'single quoted'` is taken literally.
/// `${NAME}` (and `${NAME:-fallback}`) expands environment variables in unquoted and
/// double-quoted values; `$$` is a literal `$` in unquoted text.
public enum ConfigSyntax {
    /// One `key = value` line, after unquoting and expansion.
    public struct Entry: Sendable, Equatable {
        /// The section: "" for keys before any header, `network` for `[network]`,
        /// `instance` for `[instance NAME]`.
        public var section: String
        /// The name in `[instance NAME]`; nil for plain sections.
        public var sectionName: String?
        public var key: String
        public var value: String
        public var line: Int
    }

    /// A section header as written, with its line.
    public struct Header: Sendable, Equatable {
        public var section: String
        public var name: String?
        public var line: Int
    }

    public struct Document: Sendable, Equatable {
        public var entries: [Entry] = []
        public var headers: [Header] = []
        public init() {}
    }

    /// A syntax error at a line: `file:line: message`.
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var message: String
        public var description: String { "\(file):\(line): \(message)" }
    }

    /// Sections that take a name: `[instance NAME]`.
    public static let namedSections: Set<String> = ["instance"]

    /// The largest config file read, in bytes. A real one is a few kilobytes; anything
    /// near this is a mistake (a log, a recording), refused before it is parsed.
    public static let maxFileBytes = 1 << 20

    /// The file's bytes as text: UTF-8, or an error at the line and column (counted in
    /// characters, from 1) of the first byte that is not, with the byte itself. A byte
    /// order mark at the start is skipped.
    public static func decode(_ bytes: [UInt8], file: String) throws(Error) -> String {
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        if let text = String(validating: body, as: UTF8.self) { return text }
        let bad = firstInvalidUTF8(body)
        let lineStart = body[..<bad].lastIndex(of: 0x0A).map { $0 + 1 } ?? body.startIndex
        let line = 1 + body[..<bad].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        // Every byte before `bad` is valid UTF-8, so the column counts its scalars.
        let column = 1 + body[lineStart..<bad].reduce(0) { $0 + (($1 & 0xC0) == 0x80 ? 0 : 1) }
        throw Error(file: file, line: line, message: "column \(column): byte 0x\(String(body[bad], radix: 16, uppercase: true)) is not UTF-8 text; save the file as UTF-8")
    }

    /// Index of the first byte of `bytes` that does not begin (or continue) a well-formed
    /// UTF-8 sequence (RFC 3629 §4: no overlong forms, no surrogates, nothing above
    /// U+10FFFF); `endIndex` when all of it is well formed.
    static func firstInvalidUTF8(_ bytes: ArraySlice<UInt8>) -> Int {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF  // the allowed range of the second byte
            switch b {
            case 0x00...0x7F: i += 1; continue
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return i
            }
            for k in 1..<length {
                guard i + k < bytes.endIndex else { return i }
                let c = bytes[i + k]
                let (lo, hi) = k == 1 ? (low, high) : (UInt8(0x80), UInt8(0xBF))
                guard (lo...hi).contains(c) else { return i }
            }
            i += length
        }
        return bytes.endIndex
    }

    /// Parses `text`. `file` only labels errors. `environment` supplies `${NAME}` values.
    /// Lines end with LF or CRLF (a file saved on Windows, a Kubernetes ConfigMap); a
    /// carriage return anywhere else is an error at its line.
    public static func parse(_ text: String, file: String, environment: [String: String]) throws(Error) -> Document {
        var doc = Document()
        var section = ""
        var sectionName: String?
        var lineNumber = 0
        // Split on scalars, not Characters: "\r\n" is one Character, so a CRLF file split
        // on Character "\n" would be one long line.
        for rawLine in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var scalars = rawLine
            if scalars.last == "\r" { scalars.removeLast() }
            if scalars.contains("\r") {
                throw Error(file: file, line: lineNumber, message: "a carriage return (CR) inside the line; lines must end with LF or CRLF (an old Mac file? convert it)")
            }
            let line = Substring(scalars)
            let trimmed = line.trimmed()
            if trimmed.isEmpty || trimmed.first == "#" { continue }
            if trimmed.first == "[" {
                let header = try parseHeader(trimmed, file: file, line: lineNumber)
                section = header.section
                sectionName = header.name
                doc.headers.append(header)
                continue
            }
            guard let eq = trimmed.firstIndex(of: "=") else {
                throw Error(file: file, line: lineNumber, message: "expected 'key = value' or a [section] header, got '\(TerminalText.quoted(trimmed, limit: 40))'")
            }
            let key = trimmed[..<eq].trimmed()
            guard !key.isEmpty else {
                throw Error(file: file, line: lineNumber, message: "missing key before '='")
            }
            guard key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") }) else {
                throw Error(file: file, line: lineNumber, message: "invalid key '\(TerminalText.quoted(key, limit: 40))': use letters, digits and '_'")
            }
            let value = try parseValue(trimmed[trimmed.index(after: eq)...], file: file, line: lineNumber, environment: environment)
            doc.entries.append(Entry(section: section, sectionName: sectionName, key: key.lowercased().replacingDashes(), value: value, line: lineNumber))
        }
        return doc
    }

    static func parseHeader(_ text: Substring, file: String, line: Int) throws(Error) -> Header {
        var body = text
        // A header may carry a trailing comment: [network]  # timeouts
        if let close = body.firstIndex(of: "]") {
            let after = body[body.index(after: close)...].trimmed()
            guard after.isEmpty || after.first == "#" else {
                throw Error(file: file, line: line, message: "unexpected text after section header: '\(TerminalText.quoted(after, limit: 30))'")
            }
            body = body[body.startIndex...close]
        } else {
            throw Error(file: file, line: line, message: "section header is missing its closing ']'")
        }
        let inner = body.dropFirst().dropLast().trimmed()
        guard !inner.isEmpty else {
            throw Error(file: file, line: line, message: "empty section header '[]'; expected [section] or [instance NAME]")
        }
        let words = inner.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let section = words[0].lowercased()
        guard section.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            throw Error(file: file, line: line, message: "invalid section name '\(TerminalText.quoted(words[0], limit: 40))'")
        }
        if namedSections.contains(section) {
            guard words.count == 2 else {
                throw Error(file: file, line: line, message: words.count < 2
                    ? "section [\(TerminalText.quoted(section, limit: 40))] needs a name, like [\(TerminalText.quoted(section, limit: 40)) work]"
                    : "section name must be one word, like [\(TerminalText.quoted(section, limit: 40)) work]")
            }
            var name = String(words[1])
            if name.count >= 2, let f = name.first, f == "\"" || f == "'", name.last == f {
                name = String(name.dropFirst().dropLast())
            }
            guard InstanceName.isValid(name) else {
                throw Error(file: file, line: line, message: "invalid \(section) name '\(TerminalText.quoted(name, limit: 40))': use letters, digits, '-', '_' and '.'")
            }
            return Header(section: section, name: name, line: line)
        }
        guard words.count == 1 else {
            throw Error(file: file, line: line, message: "section [\(TerminalText.quoted(section, limit: 40))] does not take a name")
        }
        return Header(section: section, name: nil, line: line)
    }

    static func parseValue(_ text: Substring, file: String, line: Int, environment: [String: String]) throws(Error) -> String {
        let v = text.trimmed()
        guard let first = v.first else { return "" }
        if first == "\"" || first == "'" {
            var out = ""
            var i = v.index(after: v.startIndex)
            var closed = false
            while i < v.endIndex {
                let c = v[i]
                if c == first {
                    closed = true
                    i = v.index(after: i)
                    break
                }
                if first == "\"" && c == "\\" {
                    let n = v.index(after: i)
                    guard n < v.endIndex else { break }
                    switch v[n] {
                    case "n": out.append("\n")
                    case "t": out.append("\t")
                    case "\"", "\\", "$": out.append(v[n])
                    default:
                        throw Error(file: file, line: line, message: "unknown escape '\\\(TerminalText.quoted(String(v[n]), limit: 4))' in quoted value")
                    }
                    i = v.index(after: n)
                    continue
                }
                if first == "\"" && c == "$" {
                    let (expanded, next) = try expand(v, at: i, file: file, line: line, environment: environment)
                    out += expanded
                    i = next
                    continue
                }
                out.append(c)
                i = v.index(after: i)
            }
            guard closed else {
                throw Error(file: file, line: line, message: "unterminated quoted value (missing closing \(first))")
            }
            let rest = v[i...].trimmed()
            guard rest.isEmpty || rest.first == "#" else {
                throw Error(file: file, line: line, message: "unexpected text after closing quote: '\(TerminalText.quoted(rest, limit: 30))'")
            }
            return out
        }
        // Unquoted: ends at ' #' (a comment), trailing whitespace trimmed.
        var out = ""
        var i = v.startIndex
        var previousWasSpace = false
        while i < v.endIndex {
            let c = v[i]
            if c == "#" && previousWasSpace { break }
            if c == "$" {
                let n = v.index(after: i)
                if n < v.endIndex && v[n] == "$" {
                    out.append("$")
                    i = v.index(after: n)
                    previousWasSpace = false
                    continue
                }
                let (expanded, next) = try expand(v, at: i, file: file, line: line, environment: environment)
                out += expanded
                i = next
                previousWasSpace = false
                continue
            }
            out.append(c)
            previousWasSpace = c == " " || c == "\t"
            i = v.index(after: i)
        }
        return String(Substring(out).trimmed())
    }

    /// Expands `${NAME}` or `${NAME:-fallback}` starting at the `$` at `i`. A `$` not
    /// followed by `{` is kept literally.
    static func expand(_ v: Substring, at i: Substring.Index, file: String, line: Int, environment: [String: String]) throws(Error) -> (String, Substring.Index) {
        let n = v.index(after: i)
        guard n < v.endIndex, v[n] == "{" else { return ("$", n) }
        guard let close = v[n...].firstIndex(of: "}") else {
            throw Error(file: file, line: line, message: "unterminated '${' in value")
        }
        let inner = v[v.index(after: n)..<close]
        var name = inner
        var fallback: Substring?
        if let sep = inner.firstIndex(of: ":"), inner[sep...].hasPrefix(":-") {
            name = inner[..<sep]
            fallback = inner[inner.index(sep, offsetBy: 2)...]
        }
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            throw Error(file: file, line: line, message: "invalid environment variable name '${\(TerminalText.quoted(inner, limit: 40))}'")
        }
        if let value = environment[String(name)], !value.isEmpty {
            return (value, v.index(after: close))
        }
        if let fallback { return (String(fallback), v.index(after: close)) }
        throw Error(file: file, line: line, message: "environment variable \(TerminalText.quoted(name, limit: 40)) is not set (write ${\(TerminalText.quoted(name, limit: 40)):-default} to give a fallback)")
    }
}

/// Valid names for `[instance NAME]`: letters, digits, `-`, `_`, `.`, 1–64 characters.
public enum InstanceName {
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }
    }
}

extension Substring {
    func trimmed() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return s
    }

    func replacingDashes() -> String { String(map { $0 == "-" ? "_" : $0 }) }
}

extension String {
    func replacingDashes() -> String { String(map { $0 == "-" ? "_" : $0 }) }
}

#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// printf-style formatting through the C library's `vsnprintf`: the same text as
    /// Foundation's `String(format:)` for the conversions the bot uses (`%d`, `%ld`,
    /// `%02d`, `%.1f`, `%5.2f`, `%s` with a C string...), without importing Foundation
    /// (see ``OSThread``). There is no `%@`: pass Swift strings already padded, or use
    /// ``String/padded(toLength:)``.
    public init(cFormat format: String, _ arguments: any CVarArg...) {
        self = withVaList(arguments) { list in
            var small = [CChar](repeating: 0, count: 128)
            let n = Int(vsnprintf(&small, small.count, format, list))
            if n < 0 { return "" }
            if n < small.count { return String(cString: small) }
            return withVaList(arguments) { again in
                var big = [CChar](repeating: 0, count: n + 1)
                _ = vsnprintf(&big, big.count, format, again)
                return String(cString: big)
            }
        }
    }

    /// This string cut or padded with spaces to `length` characters (what
    /// `padding(toLength:withPad:" ", startingAt: 0)` did for the bot's ASCII labels).
    public func padded(toLength length: Int) -> String {
        let n = count
        if n >= length { return String(prefix(length)) }
        return self + String(repeating: " ", count: length - n)
    }

    /// Every occurrence of `target` replaced by `replacement`, matched on Unicode scalars
    /// (as Foundation's `replacingOccurrences(of:with:)` matches UTF-16 units), so a
    /// combining mark after `target` does not hide it, as it would from the standard
    /// library's `replacing(_:with:)`, which matches whole characters.
    public func replacingScalars(_ target: String, with replacement: String) -> String {
        let t = Array(target.unicodeScalars)
        guard !t.isEmpty else { return self }
        let s = Array(unicodeScalars)
        guard s.count >= t.count else { return self }
        var out = String.UnicodeScalarView()
        var i = 0
        while i < s.count {
            if i + t.count <= s.count, s[i] == t[0], s[i ..< i + t.count].elementsEqual(t) {
                out.append(contentsOf: replacement.unicodeScalars)
                i += t.count
            } else {
                out.append(s[i])
                i += 1
            }
        }
        return String(out)
    }
}

extension StringProtocol {
    /// Without leading and trailing white space: what Foundation's
    /// `trimmingCharacters(in: .whitespacesAndNewlines)` (or `.whitespaces` when
    /// `newlines` is false) returned. Works on Unicode scalars, as CharacterSet does.
    public func trimmingWhitespaceScalars(newlines: Bool = true) -> String {
        func isSpace(_ u: Unicode.Scalar) -> Bool {
            if u == "\t" || u.properties.generalCategory == .spaceSeparator { return true }
            guard newlines else { return false }
            return ("\n" ... "\r").contains(u) || u == "\u{85}" || u == "\u{2028}" || u == "\u{2029}"
        }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
              let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(String.UnicodeScalarView(scalars[first ... last]))
    }
}

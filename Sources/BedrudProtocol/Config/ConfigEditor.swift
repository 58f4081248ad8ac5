/// Edits a config file's text the way `git config` does: only the lines it must change
/// are touched; comments, blank lines and the order of everything else stay as written.
/// Pure: text in, text out.
public struct ConfigEditor: Sendable {
    public private(set) var lines: [String]

    public init(text: String) {
        var l = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if l.last == "" { l.removeLast() }
        lines = l
    }

    public var text: String { lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n" }

    /// Index range of the section `[section name]` (header line through the line before
    /// the next header), or nil. Section "" is the part before the first header.
    func sectionRange(_ section: String, name: String?) -> Range<Int>? {
        var start: Int?
        if section.isEmpty { start = 0 }
        for (i, line) in lines.enumerated() {
            let t = Substring(line).trimmed()
            guard t.first == "[" else { continue }
            if let s = start { return s..<i }
            if let h = try? ConfigSyntax.parseHeader(t, file: "", line: 0), h.section == section, h.name == name {
                start = i
            }
        }
        return start.map { $0..<lines.count }
    }

    static func keyOf(_ line: String) -> String? {
        let t = Substring(line).trimmed()
        guard !t.isEmpty, t.first != "#", t.first != "[", let eq = t.firstIndex(of: "=") else { return nil }
        return t[..<eq].trimmed().lowercased().replacingDashes()
    }

    public func hasSection(_ section: String, name: String?) -> Bool {
        sectionRange(section, name: name) != nil && !(section.isEmpty)
    }

    /// Sets `key = value` in the section, replacing the existing line for the key or
    /// adding one after the section's last setting. Creates the section at the end of
    /// the file if needed (the unnamed top section is created at the top).
    public mutating func set(_ key: String, _ value: String, section: String = "", name: String? = nil) {
        let line = "\(key) = \(Self.quoteIfNeeded(value))"
        if let r = sectionRange(section, name: name) {
            if let i = r.first(where: { Self.keyOf(lines[$0]) == key }) {
                lines[i] = line
                return
            }
            // After the last non-blank line of the section.
            var insertAt = r.lowerBound + (section.isEmpty ? 0 : 1)
            for i in r where !Substring(lines[i]).trimmed().isEmpty { insertAt = i + 1 }
            if section.isEmpty && r.isEmpty { insertAt = 0 }
            lines.insert(line, at: insertAt)
            return
        }
        if section.isEmpty {
            lines.insert(contentsOf: [line, ""], at: 0)
            return
        }
        appendSection(section, name: name, settings: [(key, value)])
    }

    /// Removes `key` from the section. Returns false if it was not there.
    @discardableResult
    public mutating func remove(_ key: String, section: String = "", name: String? = nil) -> Bool {
        guard let r = sectionRange(section, name: name), let i = r.first(where: { Self.keyOf(lines[$0]) == key }) else { return false }
        lines.remove(at: i)
        return true
    }

    /// Appends `[section name]` with the settings, separated by a blank line.
    public mutating func appendSection(_ section: String, name: String?, settings: [(String, String)], comment: String? = nil) {
        if let last = lines.last, !Substring(last).trimmed().isEmpty { lines.append("") }
        if let comment { lines.append("# \(comment)") }
        lines.append(name.map { "[\(section) \($0)]" } ?? "[\(section)]")
        for (k, v) in settings { lines.append("\(k) = \(Self.quoteIfNeeded(v))") }
    }

    /// Deletes the whole section: the comment lines directly above its header, the
    /// header, and every line up to the next header, except comment lines directly
    /// above the next header (they belong to it). Returns false if there was no such section.
    @discardableResult
    public mutating func removeSection(_ section: String, name: String?) -> Bool {
        guard !section.isEmpty, let r = sectionRange(section, name: name) else { return false }
        var start = r.lowerBound
        while start > 0, Substring(lines[start - 1]).trimmed().first == "#" { start -= 1 }
        var end = r.upperBound
        if end < lines.count {
            while end - 1 > r.lowerBound, Substring(lines[end - 1]).trimmed().first == "#" { end -= 1 }
        }
        lines.removeSubrange(start..<end)
        // Collapse a double blank line left behind.
        if start > 0, start < lines.count,
           Substring(lines[start - 1]).trimmed().isEmpty, Substring(lines[start]).trimmed().isEmpty {
            lines.remove(at: start)
        }
        while let l = lines.last, Substring(l).trimmed().isEmpty { lines.removeLast() }
        return true
    }

    /// Quotes a value when writing it bare would change its meaning.
    public static func quoteIfNeeded(_ v: String) -> String {
        let needs = v.isEmpty || v.first == " " || v.last == " " || v.contains("#") || v.contains("\"") || v.contains("'")
            || v.contains("$") || v.contains("\\") || v.contains("\n") || v.contains("\t")
        guard needs else { return v }
        var out = "\""
        for c in v {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "$": out += "\\$"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.append(c)
            }
        }
        return out + "\""
    }
}

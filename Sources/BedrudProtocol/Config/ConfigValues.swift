/// Typed readings of config values. Each returns nil for text it cannot read; the caller
/// turns that into an error naming the file, the line and what was expected.
public enum ConfigValues {
    /// `yes/no/true/false/on/off/1/0`, case-insensitive.
    public static func bool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true", "on", "1": true
        case "no", "false", "off", "0": false
        default: nil
        }
    }

    /// Durations in seconds: `90s`, `30m`, `2h`, `1h30m`, `500ms`, `1.5s`, `1d`; a bare
    /// number means seconds. Negative values are refused.
    public static func duration(_ text: String) -> Double? {
        let t = text.lowercased().filter { $0 != " " }
        guard !t.isEmpty else { return nil }
        if let plain = Double(t) { return plain >= 0 && plain.isFinite ? plain : nil }
        var total = 0.0
        var number = ""
        var unit = ""
        var sawAny = false
        func flush() -> Bool {
            guard let n = Double(number), n >= 0 else { return false }
            let factor: Double
            switch unit {
            case "ms": factor = 0.001
            case "s", "sec", "secs": factor = 1
            case "m", "min", "mins": factor = 60
            case "h", "hr", "hrs": factor = 3600
            case "d": factor = 86400
            default: return false
            }
            total += n * factor
            number = ""
            unit = ""
            sawAny = true
            return true
        }
        for c in t {
            if c.isNumber || c == "." {
                if !unit.isEmpty { guard flush() else { return nil } }
                number.append(c)
            } else if c.isLetter {
                guard !number.isEmpty else { return nil }
                unit.append(c)
            } else {
                return nil
            }
        }
        guard !number.isEmpty, !unit.isEmpty, flush() else { return nil }
        return sawAny && total.isFinite ? total : nil
    }

    /// Sizes in bytes: `512`, `64k`/`64KB` (1000), `64KiB` (1024), `16M`, `16MiB`, `1G`, `1GiB`.
    public static func size(_ text: String) -> Int? {
        let t = text.filter { $0 != " " }
        guard let split = t.firstIndex(where: { !($0.isNumber || $0 == ".") }) else {
            return Int(t).flatMap { $0 >= 0 ? $0 : nil }
        }
        guard let n = Double(t[..<split]), n >= 0 else { return nil }
        let factor: Double
        switch t[split...].lowercased() {
        case "b": factor = 1
        case "k", "kb": factor = 1000
        case "kib": factor = 1024
        case "m", "mb": factor = 1_000_000
        case "mib": factor = 1_048_576
        case "g", "gb": factor = 1_000_000_000
        case "gib": factor = 1_073_741_824
        default: return nil
        }
        let v = n * factor
        return v < Double(Int.max) ? Int(v) : nil
    }

    /// Bit rates in bits per second: `32k`, `32kbps`, `32000`, `1.5m`.
    public static func bitrate(_ text: String) -> Int? {
        var t = text.lowercased().filter { $0 != " " }
        if t.hasSuffix("bps") { t.removeLast(3) }
        if t.hasSuffix("bit/s") { t.removeLast(5) }
        guard let split = t.firstIndex(where: { !($0.isNumber || $0 == ".") }) else { return Int(t) }
        guard let n = Double(t[..<split]), n >= 0 else { return nil }
        switch t[split...] {
        case "k": return Int(n * 1000)
        case "m": return Int(n * 1_000_000)
        default: return nil
        }
    }

    /// Comma-separated list; items trimmed, empty items dropped.
    public static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { String(Substring($0).trimmed()) }.filter { !$0.isEmpty }
    }

    /// A human form of a duration, for `config show` and help text: `90s`, `30m`, `1h30m`.
    public static func formatDuration(_ seconds: Double) -> String {
        if seconds == 0 { return "0s" }
        if seconds < 1 { return "\(Int((seconds * 1000).rounded()))ms" }
        if seconds != seconds.rounded() { return "\(seconds)s" }
        var s = Int(seconds)
        var out = ""
        if s >= 3600 { out += "\(s / 3600)h"; s %= 3600 }
        if s >= 60 { out += "\(s / 60)m"; s %= 60 }
        if s > 0 { out += "\(s)s" }
        return out
    }

    /// A human form of a byte count: `16MiB`, `512KiB`, `100B`.
    public static func formatSize(_ bytes: Int) -> String {
        if bytes >= 1_073_741_824 && bytes % 1_073_741_824 == 0 { return "\(bytes / 1_073_741_824)GiB" }
        if bytes >= 1_048_576 && bytes % 1_048_576 == 0 { return "\(bytes / 1_048_576)MiB" }
        if bytes >= 1024 && bytes % 1024 == 0 { return "\(bytes / 1024)KiB" }
        return "\(bytes)B"
    }
}

/// "Did you mean …?" for unknown keys, commands and flags.
public enum Suggest {
    /// The candidate closest to `word` by edit distance, if close enough to be a typo.
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let w = Array(word.lowercased())
        var best: (String, Int)?
        for c in candidates {
            let d = distance(w, Array(c.lowercased()))
            if best == nil || d < best!.1 { best = (c, d) }
        }
        guard let (c, d) = best else { return nil }
        let limit = max(1, min(3, w.count / 3))
        return d <= limit ? c : nil
    }

    /// Damerau-Levenshtein distance (adjacent transpositions count as one edit).
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}

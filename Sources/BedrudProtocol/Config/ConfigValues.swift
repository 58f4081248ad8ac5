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

    /// Why a number in a config value could not be used.
    public enum NumberProblem: Error, Sendable, Equatable {
        /// Not written in the expected form (`ten seconds`, `-5s`, `0x10`, `1e9s`).
        case malformed
        /// Well formed, but beyond what any setting of its kind could mean.
        case tooLarge
    }

    /// The longest duration any setting accepts: ten years, in seconds. Far beyond every
    /// setting's own maximum, and small enough that milliseconds and nanoseconds of it
    /// still fit an `Int64`, so no later conversion can trap.
    public static let durationCeiling: Double = 3650 * 86400
    /// The largest size any setting accepts: 1 PiB, in bytes (tests ask for a `min_free`
    /// no disk has, 1000000GiB, to make one look full).
    public static let sizeCeiling = 1 << 50
    /// The largest bit rate read at all (the settings accept far less): 1 Gbit/s.
    public static let bitrateCeiling = 1_000_000_000

    /// Durations in seconds: `90s`, `30m`, `2h`, `1h30m`, `500ms`, `1.5s`, `1d`; a bare
    /// number means seconds. Negative values are refused, and so is anything longer than
    /// ``durationCeiling``.
    public static func duration(_ text: String) -> Double? { try? parseDuration(text).get() }

    /// ``duration(_:)`` with the reason a value is refused. Numbers are plain decimals
    /// (`1.5`, not `1e3` or `0x10`); the arithmetic is in `Double` and checked before any
    /// conversion, so no text can overflow.
    public static func parseDuration(_ text: String) -> Result<Double, NumberProblem> {
        let t = Array(text.lowercased().unicodeScalars.filter { $0 != " " })
        guard !t.isEmpty, t.count <= 64 else { return .failure(t.isEmpty ? .malformed : .tooLarge) }
        var total = 0.0
        var i = 0
        var components = 0
        while i < t.count {
            let numberStart = i
            while i < t.count, isDecimal(t[i]) { i += 1 }
            guard let n = decimal(t[numberStart..<i]) else { return .failure(.malformed) }
            let unitStart = i
            while i < t.count, ("a"..."z").contains(t[i]) { i += 1 }
            let unit = String(String.UnicodeScalarView(t[unitStart..<i]))
            let factor: Double
            switch unit {
            case "" where components == 0 && i == t.count: factor = 1  // a bare number: seconds
            case "ms": factor = 0.001
            case "s", "sec", "secs": factor = 1
            case "m", "min", "mins": factor = 60
            case "h", "hr", "hrs": factor = 3600
            case "d": factor = 86400
            default: return .failure(.malformed)
            }
            total += n * factor
            components += 1
        }
        guard total.isFinite, total <= durationCeiling else { return .failure(.tooLarge) }
        return .success(total)
    }

    /// Sizes in bytes: `512`, `64k`/`64KB` (1000), `64KiB` (1024), `16M`, `16MiB`, `1G`,
    /// `1GiB`; at most ``sizeCeiling``.
    public static func size(_ text: String) -> Int? { try? parseSize(text).get() }

    /// ``size(_:)`` with the reason a value is refused.
    public static func parseSize(_ text: String) -> Result<Int, NumberProblem> {
        let t = Array(text.unicodeScalars.filter { $0 != " " })
        guard t.count <= 64 else { return .failure(.tooLarge) }
        var i = 0
        while i < t.count, isDecimal(t[i]) { i += 1 }
        guard let n = decimal(t[0..<i]) else { return .failure(.malformed) }
        let factor: Double
        switch String(String.UnicodeScalarView(t[i...])).lowercased() {
        case "", "b": factor = 1
        case "k", "kb": factor = 1000
        case "kib": factor = 1024
        case "m", "mb": factor = 1_000_000
        case "mib": factor = 1_048_576
        case "g", "gb": factor = 1_000_000_000
        case "gib": factor = 1_073_741_824
        default: return .failure(.malformed)
        }
        let v = n * factor
        guard v <= Double(sizeCeiling) else { return .failure(.tooLarge) }
        return .success(Int(v))
    }

    /// Bit rates in bits per second: `32k`, `32kbps`, `32000`, `1.5m`; nil for anything
    /// else or above ``bitrateCeiling`` (callers check their own range).
    public static func bitrate(_ text: String) -> Int? {
        var t = text.lowercased().filter { $0 != " " }
        if t.hasSuffix("bps") { t.removeLast(3) }
        if t.hasSuffix("bit/s") { t.removeLast(5) }
        let scalars = Array(t.unicodeScalars)
        guard scalars.count <= 64 else { return nil }
        var i = 0
        while i < scalars.count, isDecimal(scalars[i]) { i += 1 }
        guard let n = decimal(scalars[0..<i]) else { return nil }
        let factor: Double
        switch String(String.UnicodeScalarView(scalars[i...])) {
        case "": factor = 1
        case "k": factor = 1000
        case "m": factor = 1_000_000
        default: return nil
        }
        let v = n * factor
        guard v <= Double(bitrateCeiling) else { return nil }
        return Int(v)
    }

    @inline(__always)
    static func isDecimal(_ s: Unicode.Scalar) -> Bool { ("0"..."9").contains(s) || s == "." }

    /// A plain decimal, `12`, `1.5`, `.5`: ASCII digits with at most one point and at
    /// least one digit. At most 64 characters, so the value is always finite.
    static func decimal(_ s: ArraySlice<Unicode.Scalar>) -> Double? {
        guard !s.isEmpty, s.count <= 64, s.filter({ $0 == "." }).count <= 1, s.contains(where: { $0 != "." }) else { return nil }
        return Double(String(String.UnicodeScalarView(s)))
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
    /// Words longer than 64 characters are no typo of anything (and would cost time and
    /// memory quadratic in their length): nil.
    public static func closest(to word: String, in candidates: [String]) -> String? {
        guard word.utf8.count <= 64 else { return nil }
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

import BedrudProtocol

/// How long to wait after a 429 before asking again, as a value: the server's
/// `Retry-After` when it sent one (plus up to a second of jitter, so a fleet behind one
/// address does not come back in the same millisecond), else an exponential back-off
/// with jitter (2 s, 4 s, … 30 s, each between half and all of it). Waits add up to at
/// most `maxTotal` seconds; past that, `next` says give up.
public struct RateLimitWait: Sendable, Equatable {
    public let maxTotal: Double
    public private(set) var waited: Double = 0
    public private(set) var attempts = 0

    public init(maxTotal: Double) { self.maxTotal = maxTotal }

    /// The next wait in seconds, or nil to give up. `random` is uniform in 0..<1.
    public mutating func next(retryAfter: Double?, random: Double) -> Double? {
        attempts += 1
        let wait: Double
        if let r = retryAfter {
            wait = max(0.2, r) + random
        } else {
            let base = min(30, 2 * Double(1 << min(attempts - 1, 8)))
            wait = base * (0.5 + random / 2)
        }
        guard waited + wait <= maxTotal else { return nil }
        waited += wait
        return wait
    }
}

/// `Retry-After` (RFC 9110 §10.2.3): delta-seconds, or an HTTP date (IMF-fixdate, `Sun, 06
/// Nov 1994 08:49:37 GMT`) made relative to `now` (Unix seconds). Capped at an hour; nil for
/// anything else.
public enum RetryAfter {
    public static func seconds(_ value: String?, now: Double) -> Double? {
        guard let v = value?.trimmingWhitespaceScalars(), !v.isEmpty else { return nil }
        if let n = Int(v) { return n >= 0 ? Double(min(n, 3600)) : nil }
        guard let at = imfFixdate(v) else { return nil }
        return min(3600, max(0, at - now))
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT` → Unix seconds.
    static func imfFixdate(_ s: String) -> Double? {
        let parts = s.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT", let d = Int(parts[1]), (1...31).contains(d),
              let mi = months.firstIndex(of: String(parts[2])), let y = Int(parts[3]), y >= 1970, y < 10000 else { return nil }
        let t = parts[4].split(separator: ":")
        guard t.count == 3, let h = Int(t[0]), let m = Int(t[1]), let sec = Int(t[2]), h < 24, m < 60, sec < 61 else { return nil }
        let mo = mi + 1
        let days = Int(CivilDate.days(year: Int64(y), month: Int64(mo), day: Int64(d)))
        return Double(days * 86_400 + h * 3600 + m * 60 + sec)
    }
}

import BedrudProtocol

/// Numbers and times as the report writes them (pure; no clock, no locale).
enum ReportFormat {
    /// `1:02:03` or `2:03`.
    static func clock(ms: Int64) -> String {
        let s = max(0, ms) / 1000
        let h = s / 3600, m = (s / 60) % 60, sec = s % 60
        return h > 0 ? "\(h):\(two(m)):\(two(sec))" : "\(m):\(two(sec))"
    }

    /// `1 h 02 min`, `12 min 03 s`, `4.5 s`.
    static func duration(ms: Int64) -> String {
        let s = max(0, ms) / 1000
        if s >= 3600 { return "\(s / 3600) h \(two((s / 60) % 60)) min" }
        if s >= 60 { return "\(s / 60) min \(two(s % 60)) s" }
        if ms < 1000 { return "\(max(0, ms)) ms" }
        return "\(ms / 1000).\(ms % 1000 / 100) s"
    }

    static func bytes(_ n: Int64) -> String {
        if n >= 1_000_000 { return "\(n / 1_000_000).\(n % 1_000_000 / 100_000) MB" }
        if n >= 1_000 { return "\(n / 1_000).\(n % 1_000 / 100) kB" }
        return "\(n) B"
    }

    static func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// Milliseconds since 1970 of an ISO 8601 UTC time as bedrud-bot writes it
    /// (`2026-11-29T14:05:45.482Z`, fraction optional); nil for anything else.
    static func unixMs(iso: String) -> Int64? {
        let u = Array(iso.utf8)
        guard u.count >= 20, u[4] == 45, u[7] == 45, u[10] == 84, u[13] == 58, u[16] == 58, u.last == 90 else { return nil }
        func num(_ r: Range<Int>) -> Int64? {
            var v: Int64 = 0
            for i in r { guard (48...57).contains(u[i]) else { return nil }; v = v * 10 + Int64(u[i] - 48) }
            return v
        }
        guard let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10), let h = num(11..<13), let mi = num(14..<16), let s = num(17..<19),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        var ms: Int64 = 0
        if u[19] == 46 {
            let digits = u[20..<(u.count - 1)]
            guard !digits.isEmpty, digits.count <= 9, let f = num(20..<(u.count - 1)) else { return nil }
            var scale: Int64 = 1
            for _ in 0..<digits.count { scale *= 10 }
            ms = f * 1000 / scale
        } else if u.count != 20 { return nil }
        return ((CivilDate.days(year: y, month: mo, day: d) * 24 + h) * 60 + mi) * 60_000 + s * 1000 + ms
    }

    /// `2026-11-29 15:05:45 UTC+01:00`: the wall-clock time at `utcOffsetSeconds`.
    static func localTime(unixMs: Int64, utcOffsetSeconds: Int) -> String {
        let t = unixMs / 1000 + Int64(utcOffsetSeconds)
        let days = floorDiv(t, 86_400), secs = t - days * 86_400
        let (y, m, d) = CivilDate.civil(days: days)
        let off = abs(utcOffsetSeconds) / 60
        let sign = utcOffsetSeconds < 0 ? "-" : "+"
        return "\(y)-\(two(m))-\(two(d)) \(two(secs / 3600)):\(two(secs / 60 % 60)):\(two(secs % 60)) UTC\(sign)\(two(Int64(off / 60))):\(two(Int64(off % 60)))"
    }

    /// `15:05:45`: the wall-clock time of day only.
    static func timeOfDay(unixMs: Int64, utcOffsetSeconds: Int) -> String {
        let t = unixMs / 1000 + Int64(utcOffsetSeconds)
        let secs = t - floorDiv(t, 86_400) * 86_400
        return "\(two(secs / 3600)):\(two(secs / 60 % 60)):\(two(secs % 60))"
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

}

import BedrudProtocol

/// The two header packets of an Ogg Opus stream (RFC 7845 §5).
///
/// `OpusHead` (§5.1) is 19 bytes for channel mapping family 0; `OpusTags` (§5.2) is the
/// vendor string and `KEY=value` comments, all little-endian length-prefixed.
public struct OpusHead: Sendable, Equatable {
    public var version: UInt8 = 1
    public var channelCount: UInt8
    /// Samples at 48 kHz to discard from the start of the decoded output.
    public var preSkip: UInt16
    /// Informational: the sample rate of the original input (not the playback rate).
    public var inputSampleRate: UInt32
    /// Q7.8 dB gain to apply on output.
    public var outputGain: Int16 = 0
    public var mappingFamily: UInt8 = 0

    public init(channelCount: UInt8, preSkip: UInt16, inputSampleRate: UInt32 = 48000, outputGain: Int16 = 0) {
        self.channelCount = channelCount
        self.preSkip = preSkip
        self.inputSampleRate = inputSampleRate
        self.outputGain = outputGain
    }

    public var bytes: [UInt8] {
        var b: [UInt8] = Array("OpusHead".utf8)
        b.append(version)
        b.append(channelCount)
        b.appendLE(preSkip)
        b.appendLE(inputSampleRate)
        b.appendLE(UInt16(bitPattern: outputGain))
        b.append(mappingFamily)
        return b
    }

    /// Parses an identification header. Families other than 0 are accepted when their
    /// mapping table is present, as §5.1.1 allows.
    public static func parse(_ b: [UInt8]) -> OpusHead? {
        guard b.count >= 19, Array(b[0..<8]) == Array("OpusHead".utf8) else { return nil }
        guard b[8] & 0xF0 == 0, b[9] > 0 else { return nil }  // major version 0; ≥ 1 channel
        var h = OpusHead(channelCount: b[9], preSkip: b.readLE16(10), inputSampleRate: b.readLE32(12))
        h.version = b[8]
        h.outputGain = Int16(bitPattern: b.readLE16(16))
        h.mappingFamily = b[18]
        if h.mappingFamily == 0 {
            guard h.channelCount <= 2 else { return nil }
        } else {
            guard b.count >= 21 + Int(h.channelCount) else { return nil }
        }
        return h
    }
}

public struct OpusTags: Sendable, Equatable {
    public var vendor: String
    /// Comments in order; keys are case-insensitive ASCII per §5.2.
    public var comments: [(key: String, value: String)]

    public init(vendor: String, comments: [(key: String, value: String)]) {
        self.vendor = vendor
        self.comments = comments
    }

    public static func == (a: OpusTags, b: OpusTags) -> Bool {
        a.vendor == b.vendor && a.comments.map { "\($0.key)=\($0.value)" } == b.comments.map { "\($0.key)=\($0.value)" }
    }

    public func value(_ key: String) -> String? {
        comments.first { $0.key.uppercased() == key.uppercased() }?.value
    }

    public var bytes: [UInt8] {
        var b: [UInt8] = Array("OpusTags".utf8)
        let v = Array(vendor.utf8)
        b.appendLE(UInt32(v.count))
        b.append(contentsOf: v)
        b.appendLE(UInt32(comments.count))
        for c in comments {
            // '=' is not allowed in a key; control characters are dropped from keys.
            let key = c.key.uppercased().unicodeScalars.filter { $0.value >= 0x20 && $0.value <= 0x7D && $0 != "=" }
            let s = Array((String(String.UnicodeScalarView(key)) + "=" + c.value).utf8)
            b.appendLE(UInt32(s.count))
            b.append(contentsOf: s)
        }
        return b
    }

    public static func parse(_ b: [UInt8]) -> OpusTags? {
        guard b.count >= 16, Array(b[0..<8]) == Array("OpusTags".utf8) else { return nil }
        var at = 8
        func take() -> [UInt8]? {
            guard at + 4 <= b.count else { return nil }
            let n = Int(b.readLE32(at))
            at += 4
            guard n >= 0, n <= b.count - at else { return nil }
            defer { at += n }
            return Array(b[at..<at + n])
        }
        guard let vendor = take(), at + 4 <= b.count else { return nil }
        let n = Int(b.readLE32(at))
        at += 4
        guard n <= (b.count - at) / 4 else { return nil }
        var comments: [(String, String)] = []
        for _ in 0..<n {
            guard let c = take() else { return nil }
            let s = String(decoding: c, as: UTF8.self)
            if let eq = s.firstIndex(of: "=") {
                comments.append((String(s[..<eq]), String(s[s.index(after: eq)...])))
            } else {
                comments.append((s, ""))
            }
        }
        return OpusTags(vendor: String(decoding: vendor, as: UTF8.self), comments: comments.map { (key: $0.0, value: $0.1) })
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE(_ v: UInt16) {
        append(UInt8(v & 0xFF))
        append(UInt8(v >> 8))
    }
    mutating func appendLE(_ v: UInt32) {
        for i in 0..<4 { append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) }
    }
    package func readLE16(_ at: Int) -> UInt16 { UInt16(self[at]) | UInt16(self[at + 1]) << 8 }
    package func readLE32(_ at: Int) -> UInt32 {
        UInt32(self[at]) | UInt32(self[at + 1]) << 8 | UInt32(self[at + 2]) << 16 | UInt32(self[at + 3]) << 24
    }
}

/// Formats a UTC instant (nanoseconds since the Unix epoch) as ISO 8601 with milliseconds,
/// `2026-11-29T12:00:00.000Z`, with no Foundation and no time-zone database.
public func iso8601UTC(unixNanos: Int64) -> String {
    let ms = unixNanos >= 0 ? unixNanos / 1_000_000 : (unixNanos - 999_999) / 1_000_000
    let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
    let msOfDay = ms - days * 86_400_000
    let (y, m, d) = CivilDate.civil(days: days)
    func pad(_ v: Int64, _ w: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, w - s.count)) + s
    }
    return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(msOfDay / 3_600_000, 2)):\(pad(msOfDay / 60000 % 60, 2)):"
        + "\(pad(msOfDay / 1000 % 60, 2)).\(pad(msOfDay % 1000, 3))Z"
}

#if canImport(Glibc)
import Glibc
#endif

/// The level strip a track's live path keeps while it records: the RMS level of every
/// 200 ms of session time, quantised as ``AudioLevels`` is (0…63 for −60…0 dBFS). It is
/// fed one 20 ms frame at a time by whoever already holds that frame's sum of squares
/// (the speech detector for a participant, the mixer for `room.opus`), so the report's
/// strips cost nothing at the end of a session: no file is decoded a second time.
///
/// A bucket nobody fed (a gap, a long silence skipped without frames, before the file
/// starts) is level 0, which is what a decode of the file would show there. Frames
/// arrive in session order; one that goes back before the open bucket is ignored.
/// Pure value; it allocates only when the strip grows past its reserve (every few
/// minutes of session), never per packet.
public struct LevelStrip: Sendable, Equatable {
    public static let stepMs = 200
    static let stepSamples: Int64 = Int64(stepMs) * 48

    /// The session bucket (`stepMs` wide, from session sample 0) of `values[0]`.
    public private(set) var firstBucket: Int64 = 0
    /// Closed buckets from `firstBucket` on.
    public private(set) var values: [UInt8] = []
    private var open: Int64 = -1
    private var sum: Double = 0
    private var frames = 0

    public init() {}

    /// Adds one frame that starts at session sample `start`, whose mean square (over its
    /// samples, full scale 1.0) is `meanSquare`.
    public mutating func add(start: Int64, meanSquare: Float) {
        guard start >= 0 else { return }
        let b = start / Self.stepSamples
        if b != open {
            guard b > open else { return }
            close()
            open = b
        }
        sum += Double(meanSquare)
        frames += 1
    }

    private mutating func close() {
        guard open >= 0, frames > 0 else { return }
        if values.isEmpty {
            firstBucket = open
            values.reserveCapacity(3000)  // ten minutes
        }
        let index = Int(open - firstBucket)
        if index > values.count { values.append(contentsOf: repeatElement(0, count: index - values.count)) }
        values.append(AudioLevels.level(rms: (sum / Double(frames)).squareRoot()))
        sum = 0
        frames = 0
    }

    /// The strip with its open bucket closed (at the end of the session).
    public func finished() -> LevelStrip {
        var s = self
        s.close()
        s.open = .max
        return s
    }

    /// Both strips in one (a participant who left and came back has one per visit): the
    /// louder of the two where they overlap. Both must be ``finished()``.
    public func merged(with other: LevelStrip) -> LevelStrip {
        if other.values.isEmpty { return self }
        if values.isEmpty { return other }
        var out = LevelStrip()
        out.open = .max
        out.firstBucket = min(firstBucket, other.firstBucket)
        let end = max(firstBucket + Int64(values.count), other.firstBucket + Int64(other.values.count))
        out.values = [UInt8](repeating: 0, count: Int(end - out.firstBucket))
        for s in [self, other] {
            for (i, v) in s.values.enumerated() {
                let j = Int(s.firstBucket - out.firstBucket) + i
                out.values[j] = max(out.values[j], v)
            }
        }
        return out
    }

    /// The strip of a file that starts `startMs` into the session and lasts `durationMs`:
    /// what ``OggOpusLevels/measure(_:stepMs:)`` would give for it, to within one step.
    public func levels(startMs: Int64, durationMs: Int64) -> AudioLevels {
        let step = Int64(Self.stepMs)
        let first = (max(0, startMs) + step / 2) / step
        let count = Int(max(0, (durationMs + step - 1) / step))
        var out = [UInt8](repeating: 0, count: count)
        for i in 0..<count {
            let j = Int(first - firstBucket) + i
            if j >= 0 && j < values.count { out[i] = values[j] }
        }
        return AudioLevels(stepMs: Self.stepMs, values: out)
    }
}

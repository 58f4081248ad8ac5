/// Session time, said once: an instant on the monotonic clock as a 48 kHz sample offset
/// from the session's start, and a sample count as whole milliseconds (rounded down, also
/// below zero). The engine, its file and rotation code, and every participant's timeline
/// place packets, gaps and files with these two functions.
enum SessionTime {
    /// Samples at 48 kHz from `startNanos` to `nanos` (negative before the start).
    @inline(__always)
    static func sample(_ nanos: UInt64, start startNanos: UInt64) -> Int64 {
        let d = Int64(bitPattern: nanos &- startNanos)
        return d / 1000 * 48 / 1000
    }

    /// Whole milliseconds of `samples` at 48 kHz, rounded toward −∞.
    @inline(__always)
    static func millis(_ samples: Int64) -> Int64 { samples >= 0 ? samples / 48 : (samples - 47) / 48 }
}

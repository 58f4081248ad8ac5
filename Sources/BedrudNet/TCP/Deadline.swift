import BedrudProtocol
import BedrudRuntime

/// A point on the monotonic clock by which an operation must finish.
public struct Deadline: Sendable, Comparable {
    public let nanos: UInt64

    public init(nanos: UInt64) { self.nanos = nanos }

    /// `seconds` from now. Non-positive values give a deadline that has already passed.
    public static func after(seconds: Double) -> Deadline {
        let now = MonotonicClock.nanos()
        guard seconds > 0 else { return Deadline(nanos: now) }
        let add = seconds >= 1e9 ? UInt64.max / 2 : UInt64(seconds * 1e9)
        return Deadline(nanos: now &+ add)
    }

    public static let distantFuture = Deadline(nanos: UInt64.max / 2)

    /// Milliseconds left, clamped to 0...Int32.max, for poll(2).
    public var remainingMilliseconds: Int32 {
        let now = MonotonicClock.nanos()
        guard nanos > now else { return 0 }
        let ms = (nanos - now + 999_999) / 1_000_000
        return ms > UInt64(Int32.max) ? Int32.max : Int32(ms)
    }

    public var hasPassed: Bool { MonotonicClock.nanos() >= nanos }

    public static func < (a: Deadline, b: Deadline) -> Bool { a.nanos < b.nanos }
}

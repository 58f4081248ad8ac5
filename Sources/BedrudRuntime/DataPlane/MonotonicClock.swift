#if canImport(Glibc)
import Glibc
#endif

/// The host's monotonic clock in nanoseconds (CLOCK_MONOTONIC). The one clock the data
/// plane stamps packets with. Pure code never calls it: it takes times as parameters,
/// and the thread that owns a socket or a timer reads the clock and passes the value in.
public enum MonotonicClock {
    @inline(__always)
    public static func nanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// Loss of one received stream, from its counters: the one place that turns packets
/// received, missing and recovered into a ratio. The status line, `--stats`, smoke's
/// quality stage and anything later that shows loss read it from here.
///
/// RFC 3550 §6.4.1: packets expected = received + lost, where received counts every
/// packet that arrived, including those that arrived only after they were missed (a NACK
/// retransmission, a late packet) — "recovered".
/// ```
///   expected ─┬─ arrived first time ─┐
///             │                      ├─ received
///             ├─ recovered ──────────┘
///             └─ missing (lost)
///   residual ratio = missing / expected            (what a recording misses)
///   path ratio     = (missing + recovered) / expected  (what the network lost)
/// ```
/// Pure value, no allocation.
public struct PacketLoss: Sendable, Equatable {
    /// Packets that arrived, recovered ones included.
    public var received: Int
    /// Packets still missing; a negative cumulative loss (duplicates outnumbering losses)
    /// counts as none.
    public var missing: Int
    /// Packets missed first that arrived later (never more than ``received``).
    public var recovered: Int

    public init(received: Int, lost: Int, recovered: Int = 0) {
        self.received = max(0, received)
        missing = max(0, lost)
        self.recovered = min(max(0, recovered), self.received)
    }

    /// Packets expected: received plus missing.
    public var expected: Int { received + missing }

    /// Packets that arrived in time, without a retransmission.
    public var arrivedFirstTime: Int { received - recovered }

    /// Packets the path lost: missing now, or recovered later.
    public var pathLost: Int { missing + recovered }

    /// Missing / expected: what a recording misses. Nil when nothing was expected.
    public var residualRatio: Double? { Self.ratio(missing, of: expected) }

    /// (Missing + recovered) / expected: what the network lost, whatever retransmission
    /// hid. Nil when nothing was expected.
    public var pathRatio: Double? { Self.ratio(pathLost, of: expected) }

    @inline(__always)
    static func ratio(_ part: Int, of whole: Int) -> Double? {
        whole > 0 ? Double(part) / Double(whole) : nil
    }
}

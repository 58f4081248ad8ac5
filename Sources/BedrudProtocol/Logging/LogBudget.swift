/// How often a line that a remote peer can trigger in a loop is written: the first
/// `burst` each, then at most one per `intervalMs`, which says how many were left out. A
/// hostile server then cannot flood a terminal or a journal. A pure value: the caller
/// passes the time.
public struct LogBudget: Sendable, Equatable {
    public let burst: Int
    public let intervalMs: Int64
    private var written = 0
    private var lastMs: Int64 = 0
    private var skipped = 0

    public init(burst: Int = 3, intervalMs: Int64 = 10_000) {
        self.burst = burst
        self.intervalMs = intervalMs
    }

    /// Whether this occurrence gets a line. When it does, the number of occurrences left
    /// out since the line before comes with it (and starts again from 0).
    public mutating func allows(nowMs: Int64) -> (write: Bool, leftOut: Int) {
        guard written < burst || nowMs - lastMs >= intervalMs else {
            skipped += 1
            return (false, 0)
        }
        written += 1
        lastMs = nowMs
        defer { skipped = 0 }
        return (true, skipped)
    }
}

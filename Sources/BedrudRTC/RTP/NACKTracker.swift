// Which packets to ask again for (RFC 4585 generic NACK), for one incoming audio stream.
//
// A gap in sequence numbers opens entries; a packet that arrives late or retransmitted
// closes its entry. An entry is requested after `reorderWindowNanos` (so plain
// reordering does not trigger a NACK), then again every `retryIntervalNanos`, at most
// `maxRetries` times, and forgotten after `maxAgeNanos` (too late for the jitter buffer).
// Storage is allocated once; nothing here allocates per packet.

public struct NACKTracker: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var capacity = 128
        public var reorderWindowNanos: UInt64 = 20_000_000
        public var retryIntervalNanos: UInt64 = 100_000_000
        public var maxRetries = 3
        public var maxAgeNanos: UInt64 = 1_000_000_000
        /// A jump larger than this is a stream restart, not loss: nothing is requested.
        public var maxGap = 100
        public init() {}
    }

    private struct Entry {
        var sequence: Int64
        var missingSince: UInt64
        var lastRequested: UInt64
        var retries: Int
    }

    public let configuration: Configuration
    private var entries: ContiguousArray<Entry>
    private var highest: Int64 = -1
    /// Missing packets that arrived after all (late or retransmitted).
    public private(set) var recovered: UInt64 = 0
    /// Sequence numbers requested, retries included.
    public private(set) var requested: UInt64 = 0

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        entries = []
        entries.reserveCapacity(max(1, configuration.capacity))
    }

    /// Entries currently waiting.
    public var pendingCount: Int { entries.count }

    /// Records an arriving packet's extended sequence number.
    public mutating func packetArrived(_ seq: Int64, nowNanos: UInt64) {
        if highest < 0 {
            highest = seq
            return
        }
        if seq > highest {
            let gap = seq - highest - 1
            if gap > Int64(configuration.maxGap) {
                entries.removeAll(keepingCapacity: true)
            } else if gap > 0 {
                var s = highest + 1
                while s < seq {
                    if entries.count == configuration.capacity { entries.remove(at: 0) }
                    entries.append(Entry(sequence: s, missingSince: nowNanos, lastRequested: 0, retries: 0))
                    s += 1
                }
            }
            highest = seq
        } else if let i = entries.firstIndex(where: { $0.sequence == seq }) {
            entries.remove(at: i)
            recovered &+= 1
        }
    }

    /// Writes the sequence numbers due for a NACK now into `out` (ascending) and marks them requested.
    /// - Returns: how many were written (at most `out.count`).
    public mutating func collectDue(nowNanos: UInt64, into out: UnsafeMutableBufferPointer<UInt16>) -> Int {
        var n = 0
        var i = 0
        while i < entries.count {
            var e = entries[i]
            if nowNanos &- e.missingSince > configuration.maxAgeNanos || e.retries >= configuration.maxRetries {
                entries.remove(at: i)
                continue
            }
            let due = nowNanos &- e.missingSince >= configuration.reorderWindowNanos
                && (e.lastRequested == 0 || nowNanos &- e.lastRequested >= configuration.retryIntervalNanos)
            if due, n < out.count {
                out[n] = UInt16(truncatingIfNeeded: e.sequence)
                n += 1
                e.lastRequested = nowNanos
                e.retries += 1
                entries[i] = e
                requested &+= 1
            }
            i += 1
        }
        return n
    }
}

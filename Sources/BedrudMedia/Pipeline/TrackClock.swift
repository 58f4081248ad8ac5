/// Places one track's RTP timestamps on the session timeline (48 kHz samples since the
/// session started).
///
/// `offset` = session sample − unwrapped RTP timestamp. Each packet proposes
/// `d` = (its arrival, or its sender-report time when the SSRC has one) − timestamp;
/// the smallest `d` is the packet that travelled fastest, so:
/// - during `settleNanos` after a segment starts, `offset` is the minimum `d` seen: a
///   backlog burst right after subscribing (old packets arriving all at once) cannot
///   push the anchor late;
/// - afterwards a packet with `d` well below `offset` moves the anchor earlier at once
///   (the anchor was late, or the sender's clock runs fast);
/// - a packet more than a second late, or five in a row more than 250 ms late, re-anchor
///   (RTP timestamps that stalled during a mobile interruption);
/// - every 10 s the window minimum, if it drifted more than 20 ms late, becomes the
///   anchor (a sender clock slower than ours).
///
/// With a `gridPhase`, every anchor is rounded (by at most 60 samples, 1.25 ms, well inside
/// the arrival jitter it is estimated from) so that packet starts fall on the mix's 2.5 ms
/// grid: a packet at timestamp t lands at a session sample ≡ `gridPhase` (mod 120) when t
/// is on the stream's own 2.5 ms steps. Then a lone voice's packets fit `room.opus` exactly
/// (``RoomMixer``'s passthrough needs no shift).
/// Pure value; no allocation.
struct TrackClock {
    private(set) var offset: Int64?
    let settleNanos: UInt64
    let gridPhase: Int64?
    private var settleUntil: UInt64 = 0
    private var lateRun = 0
    private var lateRunMin = Int64.max
    private var windowMin = Int64.max
    private var windowEnd: UInt64 = 0
    private(set) var adjustments = 0
    static let tolerance: Int64 = 960  // 20 ms
    static let windowNanos: UInt64 = 10_000_000_000

    init(settleNanos: UInt64, gridPhase: Int64? = nil) {
        self.settleNanos = settleNanos
        self.gridPhase = gridPhase
    }

    /// `d` moved to the nearest anchor that puts `timestamp` on the grid.
    private func snap(_ d: Int64, _ timestamp: Int64) -> Int64 {
        guard let phase = gridPhase else { return d }
        let r = ((timestamp + d - phase) % 120 + 120) % 120
        return r < 60 ? d - r : d + (120 - r)
    }

    /// Forget the anchor: the next packet starts a new segment (new SSRC, reconnect).
    mutating func startSegment() {
        offset = nil
        lateRun = 0
        windowMin = .max
    }

    mutating func observe(timestamp: Int64, sessionSample: Int64, arrivalNanos: UInt64) {
        let d = sessionSample - timestamp
        guard let o = offset else {
            offset = snap(d, timestamp)
            settleUntil = arrivalNanos &+ settleNanos
            windowEnd = arrivalNanos &+ Self.windowNanos
            return
        }
        if arrivalNanos < settleUntil {
            if d < o { offset = snap(d, timestamp) }
            return
        }
        if d < o - Self.tolerance {
            offset = snap(d, timestamp)
            adjustments += 1
        } else if d > o + 48000 {
            offset = snap(d, timestamp)
            adjustments += 1
            settleUntil = arrivalNanos &+ settleNanos
            lateRun = 0
        } else if d > o + 12000 {
            lateRun += 1
            lateRunMin = min(lateRunMin, d)
            if lateRun >= 5 {
                offset = snap(lateRunMin, timestamp)
                adjustments += 1
                lateRun = 0
                lateRunMin = .max
            }
        } else {
            lateRun = 0
            lateRunMin = .max
        }
        windowMin = min(windowMin, d)
        if arrivalNanos >= windowEnd {
            if let cur = offset, windowMin > cur + Self.tolerance, windowMin != .max {
                offset = snap(windowMin, timestamp)
                adjustments += 1
            }
            windowMin = .max
            windowEnd = arrivalNanos &+ Self.windowNanos
        }
    }

    /// Re-anchors so that `timestamp` lands at `sessionSample` (a packet that claimed to
    /// be from the future).
    mutating func force(timestamp: Int64, sessionSample: Int64) {
        offset = snap(sessionSample - timestamp, timestamp)
        adjustments += 1
        lateRun = 0
        windowMin = .max
    }

    func position(of timestamp: Int64) -> Int64? {
        guard let o = offset else { return nil }
        return timestamp + o
    }
}

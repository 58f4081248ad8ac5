import BedrudProtocol

// Receiver-side statistics of one RTP stream: 64-bit sequence unwrapping (the shared
// `RTPCounterUnwrapper`), loss (RFC 3550 §6.4.1, A.3), interarrival jitter (A.8), and the
// report block for an RR.

/// Loss and jitter bookkeeping for one incoming SSRC. Value type, updated in place by
/// the network thread; ``makeReportBlock(ssrc:nowNanos:)`` is called by the RTCP timer on the same thread.
public struct RTPReceiveStatistics: Sendable {
    public let clockRate: Int
    private var unwrapper = RTPCounterUnwrapper.sequenceNumbers()
    public private(set) var baseSequence: Int64 = 0
    public private(set) var highestSequence: Int64 = -1
    /// Packets accepted (retransmissions and late packets included).
    public private(set) var packetsReceived: UInt64 = 0
    /// Payload bytes accepted.
    public private(set) var bytesReceived: UInt64 = 0
    private var firstArrivalNanos: UInt64 = 0
    private var lastTransit: Int64 = 0
    private var haveTransit = false
    /// Jitter × 16 in RTP timestamp units (RFC 3550 A.8).
    private var jitterQ4: UInt64 = 0
    private var expectedPrior: Int64 = 0
    private var receivedPrior: UInt64 = 0
    /// Middle 32 bits of the last SR's NTP time, and when it arrived.
    private var lastSRCompact: UInt32 = 0
    private var lastSRArrivalNanos: UInt64 = 0

    public init(clockRate: Int) {
        self.clockRate = max(1, clockRate)
    }

    /// Records one packet.
    /// - Returns: its 64-bit extended sequence number, and whether it advanced the highest one.
    @inline(__always)
    public mutating func record(sequenceNumber: UInt16, rtpTimestamp: UInt32, payloadBytes: Int, arrivalNanos: UInt64) -> (extended: Int64, inOrder: Bool) {
        let ext = unwrapper.unwrap(UInt32(sequenceNumber))
        packetsReceived &+= 1
        bytesReceived &+= UInt64(payloadBytes)
        if highestSequence < 0 {
            baseSequence = ext
            highestSequence = ext
            firstArrivalNanos = arrivalNanos
            updateJitter(rtpTimestamp: rtpTimestamp, arrivalNanos: arrivalNanos)
            return (ext, true)
        }
        if ext < baseSequence { baseSequence = ext }
        guard ext > highestSequence else { return (ext, false) }
        highestSequence = ext
        // Only in-order packets feed jitter: a retransmission's transit says nothing about the path.
        updateJitter(rtpTimestamp: rtpTimestamp, arrivalNanos: arrivalNanos)
        return (ext, true)
    }

    @inline(__always)
    private mutating func updateJitter(rtpTimestamp: UInt32, arrivalNanos: UInt64) {
        let elapsed = arrivalNanos &- firstArrivalNanos
        // Arrival in RTP units relative to the first packet; wrap-safe in 32 bits like the timestamps.
        let arrivalUnits = UInt32(truncatingIfNeeded: (elapsed / 1000) &* UInt64(clockRate) / 1_000_000)
        let transit = Int64(Int32(bitPattern: arrivalUnits &- rtpTimestamp))
        if haveTransit {
            let d = UInt64(abs(transit - lastTransit))
            jitterQ4 = jitterQ4 &+ d &- ((jitterQ4 &+ 8) >> 4)
        }
        lastTransit = transit
        haveTransit = true
    }

    /// Records a sender report for LSR/DLSR.
    public mutating func recordSenderReport(compactNTP: UInt32, arrivalNanos: UInt64) {
        lastSRCompact = compactNTP
        lastSRArrivalNanos = arrivalNanos
    }

    /// Packets expected from the first to the highest sequence number.
    public var expected: Int64 { highestSequence < 0 ? 0 : highestSequence - baseSequence + 1 }
    /// Cumulative loss; negative when duplicates outnumber losses (RFC 3550 §6.4.1).
    public var cumulativeLost: Int64 { expected - Int64(packetsReceived) }
    /// Interarrival jitter in RTP timestamp units.
    public var jitter: UInt32 { UInt32(truncatingIfNeeded: jitterQ4 >> 4) }
    /// Interarrival jitter in seconds.
    public var jitterSeconds: Double { Double(jitter) / Double(clockRate) }

    /// The RR block for this stream; advances the "prior" counters used for fraction lost.
    public mutating func makeReportBlock(ssrc: UInt32, nowNanos: UInt64) -> RTCPReportBlock {
        let exp = expected
        let expInterval = exp - expectedPrior
        let recvInterval = Int64(packetsReceived &- receivedPrior)
        expectedPrior = exp
        receivedPrior = packetsReceived
        let lostInterval = expInterval - recvInterval
        let fraction: UInt8 = (expInterval <= 0 || lostInterval <= 0) ? 0 : UInt8(min(255, (lostInterval << 8) / expInterval))
        var dlsr: UInt32 = 0
        if lastSRArrivalNanos != 0, nowNanos > lastSRArrivalNanos {
            // Units of 1/65536 s.
            dlsr = UInt32(truncatingIfNeeded: min(UInt64(UInt32.max), (nowNanos - lastSRArrivalNanos) * 65536 / 1_000_000_000))
        }
        return RTCPReportBlock(
            ssrc: ssrc, fractionLost: fraction, cumulativeLost: Int32(clamping: cumulativeLost),
            extendedHighestSequence: UInt32(truncatingIfNeeded: max(0, highestSequence - 0x1_0000)),
            jitter: jitter, lastSenderReport: lastSRCompact, delaySinceLastSenderReport: dlsr)
    }
}

// The send side of one audio track: RTP packets (RFC 3550 §5.1) with the client-to-mixer
// audio level (RFC 6464) in a one-byte header extension (RFC 8285 §4.2), a short history
// of what was sent for answering generic NACKs (RFC 4585 §6.2.1), and sender reports
// (RFC 3550 §6.4.1). Pacing (`RTPPacer`) is a pure function of the monotonic clock.
//
//  RFC 8285 one-byte extension, one element (audio level), padded to a word:
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |       0xBE    |    0xDE       |           length=1            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |  ID   | len=0 |V|   level     |           padding (0)         |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

/// When each packet is due: `start + samples / clockRate`, computed from the total sample
/// count (never by adding intervals), so an hour of packets ends exactly an hour later.
public struct RTPPacer: Sendable, Equatable {
    public let startNanos: UInt64
    public let clockRate: UInt64

    public init(startNanos: UInt64, clockRate: Int) {
        self.startNanos = startNanos
        self.clockRate = UInt64(max(1, clockRate))
    }

    /// Monotonic time (ns) at which the packet that starts at sample `samples` is due.
    @inline(__always)
    public func deadline(samples: UInt64) -> UInt64 {
        // Split to avoid overflow: whole seconds, then the remainder.
        let seconds = samples / clockRate, rest = samples % clockRate
        return startNanos &+ seconds &* 1_000_000_000 &+ rest &* 1_000_000_000 / clockRate
    }
}

/// Builds RTP for one SSRC and keeps the last ``historySize`` packets as sent (after SRTP)
/// so a NACKed packet goes out again byte for byte (no second encryption of one index).
///
/// Thread contract: confined to the thread that sends (the peer connection's loop).
/// Buffers are allocated once; building, storing and looking up never allocate.
public final class RTPSender {
    public let ssrc: UInt32
    public let payloadType: UInt8
    public let clockRate: Int
    /// RFC 8285 id of the audio-level extension, or nil to send none.
    public let audioLevelID: UInt8?
    /// Packets kept for retransmission (a power of two).
    public let historySize: Int
    public let maxPacketBytes: Int

    /// Sequence number of the next packet.
    public private(set) var nextSequenceNumber: UInt16
    /// RTP timestamp of sample 0.
    public let timestampBase: UInt32
    public private(set) var packetsSent: UInt32 = 0
    /// Payload bytes sent (RFC 3550 sender octet count: no headers, no padding).
    public private(set) var octetsSent: UInt32 = 0
    public private(set) var retransmitted: UInt64 = 0
    /// NACKed sequence numbers no longer (or never) in the history.
    public private(set) var retransmissionMisses: UInt64 = 0
    private var lastTimestamp: UInt32 = 0
    private var lastSendNanos: UInt64 = 0
    private var anySent = false

    private let history: UnsafeMutableRawBufferPointer
    private let lengths: UnsafeMutablePointer<Int>
    private let sequences: UnsafeMutablePointer<UInt16>

    /// - Parameters: `sequenceNumber`/`timestampBase` start values (random in production,
    ///   RFC 3550 §5.1); `historySize` is rounded up to a power of two.
    public init(ssrc: UInt32, payloadType: UInt8, clockRate: Int = 48_000, audioLevelID: UInt8?, sequenceNumber: UInt16, timestampBase: UInt32,
                historySize: Int = 256, maxPacketBytes: Int = 1500) {
        self.ssrc = ssrc
        self.payloadType = payloadType & 0x7F
        self.clockRate = clockRate
        self.audioLevelID = audioLevelID.flatMap { (1...14).contains($0) ? $0 : nil }
        var n = 1
        while n < max(1, historySize) { n <<= 1 }
        self.historySize = n
        self.maxPacketBytes = maxPacketBytes
        nextSequenceNumber = sequenceNumber
        self.timestampBase = timestampBase
        history = .allocate(byteCount: n * maxPacketBytes, alignment: 16)
        history.initializeMemory(as: UInt8.self, repeating: 0)
        lengths = .allocate(capacity: n)
        lengths.initialize(repeating: 0, count: n)
        sequences = .allocate(capacity: n)
        sequences.initialize(repeating: 0, count: n)
    }

    /// A sender with random SSRC, first sequence number and timestamp.
    public convenience init(payloadType: UInt8, clockRate: Int = 48_000, audioLevelID: UInt8?) {
        self.init(ssrc: UInt32.random(in: 1...UInt32.max), payloadType: payloadType, clockRate: clockRate, audioLevelID: audioLevelID,
                  sequenceNumber: UInt16.random(in: 0...UInt16.max), timestampBase: UInt32.random(in: 0...UInt32.max))
    }

    deinit {
        history.deallocate()
        lengths.deallocate()
        sequences.deallocate()
    }

    /// Header bytes this sender writes before the payload.
    public var headerLength: Int { audioLevelID == nil ? 12 : 20 }

    /// Writes the next RTP packet into `buffer`: header, audio level, `payload`.
    /// - Parameters:
    ///   - sample: the packet's first sample since the start (its timestamp is `timestampBase + sample`).
    ///   - audioLevel: −dBov, 0 (loudest) … 127 (silence); `voice` sets the V bit.
    /// - Returns: the packet length, or nil (nothing written, sequence unchanged) when it does not fit.
    @inline(__always)
    public func write(payload: UnsafeRawBufferPointer, sample: UInt64, marker: Bool, audioLevel: UInt8, voice: Bool,
                      into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let h = headerLength
        let n = h + payload.count
        guard n <= buffer.count, n <= maxPacketBytes, let base = buffer.baseAddress else { return nil }
        let ts = timestampBase &+ UInt32(truncatingIfNeeded: sample)
        buffer[0] = audioLevelID == nil ? 0x80 : 0x90
        buffer[1] = (marker ? 0x80 : 0) | payloadType
        buffer.storeBE16(nextSequenceNumber, at: 2)
        buffer.storeBE32(ts, at: 4)
        buffer.storeBE32(ssrc, at: 8)
        if let id = audioLevelID {
            buffer[12] = 0xBE
            buffer[13] = 0xDE
            buffer.storeBE16(1, at: 14)
            buffer[16] = id << 4
            buffer[17] = (voice ? 0x80 : 0) | min(127, audioLevel)
            buffer[18] = 0
            buffer[19] = 0
        }
        if let p = payload.baseAddress, !payload.isEmpty { (base + h).copyMemory(from: p, byteCount: payload.count) }
        nextSequenceNumber &+= 1
        packetsSent &+= 1
        octetsSent &+= UInt32(truncatingIfNeeded: payload.count)
        lastTimestamp = ts
        return n
    }

    /// Notes when the packet with `timestamp` left (for sender reports).
    @inline(__always)
    public func noteSent(nowNanos: UInt64) {
        lastSendNanos = nowNanos
        anySent = true
    }

    /// Keeps the packet as sent (SRTP-protected) for retransmission; `sequenceNumber` is its RTP sequence number.
    @inline(__always)
    public func store(_ packet: UnsafeRawBufferPointer, sequenceNumber: UInt16) {
        guard packet.count <= maxPacketBytes, let p = packet.baseAddress else { return }
        let slot = Int(sequenceNumber) & (historySize - 1)
        (history.baseAddress! + slot * maxPacketBytes).copyMemory(from: p, byteCount: packet.count)
        lengths[slot] = packet.count
        sequences[slot] = sequenceNumber
    }

    /// The stored packet with `sequenceNumber`, if still in the history (counted either way).
    @inline(__always)
    public func retransmission(of sequenceNumber: UInt16) -> UnsafeRawBufferPointer? {
        let slot = Int(sequenceNumber) & (historySize - 1)
        guard lengths[slot] > 0, sequences[slot] == sequenceNumber else {
            retransmissionMisses &+= 1
            return nil
        }
        retransmitted &+= 1
        return UnsafeRawBufferPointer(start: history.baseAddress! + slot * maxPacketBytes, count: lengths[slot])
    }

    /// Appends a sender report (RFC 3550 §6.4.1, no report blocks): the NTP time `ntp` and
    /// the RTP timestamp of that same instant, extrapolated from the last packet sent.
    /// - Returns: false when nothing has been sent yet or it does not fit.
    @discardableResult
    public func appendSenderReport(to w: inout RTCPWriter, ntp: UInt64, nowNanos: UInt64) -> Bool {
        guard anySent else { return false }
        let elapsed = nowNanos >= lastSendNanos ? nowNanos - lastSendNanos : 0
        let ts = lastTimestamp &+ UInt32(truncatingIfNeeded: elapsed * UInt64(clockRate) / 1_000_000_000)
        return w.appendSenderReport(ssrc: ssrc, ntp: ntp, rtpTimestamp: ts, packets: packetsSent, octets: octetsSent)
    }

    /// NTP time (RFC 3550 §4) from Unix nanoseconds.
    public static func ntp(unixNanos: UInt64) -> UInt64 {
        let seconds = unixNanos / 1_000_000_000 + 2_208_988_800
        let fraction = (unixNanos % 1_000_000_000) << 32 / 1_000_000_000
        return seconds << 32 | fraction
    }
}

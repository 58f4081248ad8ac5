import Synchronization

/// What kind of entry crosses a ``PacketRing``.
public enum MediaPacketKind: UInt8, Sendable {
    /// An RTP packet; the payload is the RTP payload (an Opus packet for audio).
    case rtp = 0
    /// An RTCP sender report for the SSRC: `ntpTimestamp` ↔ `rtpTimestamp`; no payload.
    case senderReport = 1
}

/// Metadata of one media packet handed from the network thread to a media thread.
///
/// A plain value with no references, so copying it into and out of a ring never
/// allocates or retains.
public struct MediaPacketHeader: Sendable, Equatable {
    public var kind: MediaPacketKind
    public var ssrc: UInt32
    /// RTP sequence number as on the wire (the media side unwraps it).
    public var sequenceNumber: UInt16
    /// RTP timestamp (48 kHz units for Opus). For `.senderReport`, the RTP time of `ntpTimestamp`.
    public var rtpTimestamp: UInt32
    public var payloadType: UInt8
    public var marker: Bool
    /// Arrival time on the receiving host's monotonic clock, in nanoseconds.
    public var arrivalNanos: UInt64
    /// 64-bit NTP timestamp (RFC 3550 §4) from a sender report; 0 for RTP packets.
    public var ntpTimestamp: UInt64
    /// Bytes of payload stored with this entry.
    public var payloadLength: Int

    public init(
        kind: MediaPacketKind = .rtp, ssrc: UInt32, sequenceNumber: UInt16 = 0, rtpTimestamp: UInt32,
        payloadType: UInt8 = 0, marker: Bool = false, arrivalNanos: UInt64, ntpTimestamp: UInt64 = 0,
        payloadLength: Int = 0
    ) {
        self.kind = kind
        self.ssrc = ssrc
        self.sequenceNumber = sequenceNumber
        self.rtpTimestamp = rtpTimestamp
        self.payloadType = payloadType
        self.marker = marker
        self.arrivalNanos = arrivalNanos
        self.ntpTimestamp = ntpTimestamp
        self.payloadLength = payloadLength
    }
}

/// A bounded single-producer single-consumer ring of fixed-size packet slots.
///
/// The data plane's hand-off between threads: the network thread `push`es, one media
/// thread `pop`s. All memory is allocated once in `init`; `push` and `pop` never
/// allocate, lock or wait. A full ring drops the new packet and counts it
/// (`droppedCount`), so a stalled consumer can never block the network thread.
///
/// A consumer that sleeps between turns attaches its ``WakeSignal``; `push` then
/// notifies it (a syscall only while the consumer is parked).
///
/// Thread contract: exactly one thread calls `push` and exactly one (other) thread
/// calls `pop` at any time. `droppedCount`, `count` may be read from any thread.
public final class PacketRing: @unchecked Sendable {
    // @unchecked: slots are written only by the producer before it publishes `tail`
    // (release) and read only by the consumer after it observes `tail` (acquire);
    // `head` likewise hands slots back. That ordering is what makes sharing safe.
    public let capacity: Int
    public let maxPayload: Int
    private let mask: Int
    private let headers: UnsafeMutablePointer<MediaPacketHeader>
    private let payloads: UnsafeMutableRawPointer
    private let head = Atomic<Int>(0)  // next slot to read (consumer owns)
    private let tail = Atomic<Int>(0)  // next slot to write (producer owns)
    private let dropped = Atomic<Int>(0)
    private let truncated = Atomic<Int>(0)
    /// The consumer's wake-up, retained by the ring once attached (attach-once, so the
    /// producer never sees it released).
    private let wake = Atomic<Unmanaged<WakeSignal>?>(nil)

    /// - Parameters:
    ///   - capacity: slots, rounded up to a power of two (at least 2).
    ///   - maxPayload: bytes per slot; longer payloads are dropped and counted.
    public init(capacity: Int, maxPayload: Int = 1500) {
        var c = 2
        while c < capacity { c <<= 1 }
        self.capacity = c
        self.mask = c - 1
        self.maxPayload = max(1, maxPayload)
        headers = .allocate(capacity: c)
        headers.initialize(repeating: MediaPacketHeader(ssrc: 0, rtpTimestamp: 0, arrivalNanos: 0), count: c)
        payloads = .allocate(byteCount: c * self.maxPayload, alignment: 16)
    }

    deinit {
        headers.deinitialize(count: capacity)
        headers.deallocate()
        payloads.deallocate()
        wake.load(ordering: .acquiring)?.release()
    }

    /// Makes `push` notify `signal`. The first signal attached stays for the ring's life
    /// (one ring feeds one consumer); a later, different one is ignored.
    public func attach(wake signal: WakeSignal) {
        let u = Unmanaged.passRetained(signal)
        if !wake.compareExchange(expected: nil, desired: u, ordering: .acquiringAndReleasing).exchanged { u.release() }
    }

    /// Producer: copies `header` and `payload` into the next slot.
    /// - Returns: false if the ring was full or the payload too long (the packet is dropped and counted).
    @discardableResult
    public func push(_ header: MediaPacketHeader, payload: UnsafeRawBufferPointer) -> Bool {
        guard payload.count <= maxPayload else {
            truncated.add(1, ordering: .relaxed)
            return false
        }
        let t = tail.load(ordering: .relaxed)
        if t - head.load(ordering: .acquiring) >= capacity {
            dropped.add(1, ordering: .relaxed)
            return false
        }
        let slot = t & mask
        var h = header
        h.payloadLength = payload.count
        headers[slot] = h
        if let base = payload.baseAddress, payload.count > 0 {
            (payloads + slot * maxPayload).copyMemory(from: base, byteCount: payload.count)
        }
        tail.store(t + 1, ordering: .releasing)
        wake.load(ordering: .acquiring)?._withUnsafeGuaranteedRef { $0.notify() }
        return true
    }

    /// Consumer: hands the oldest entry to `body` and frees its slot when `body` returns.
    /// The payload pointer is valid only inside `body`.
    /// - Returns: false if the ring was empty.
    @discardableResult
    public func pop(_ body: (MediaPacketHeader, UnsafeRawBufferPointer) throws -> Void) rethrows -> Bool {
        let h = head.load(ordering: .relaxed)
        if h == tail.load(ordering: .acquiring) { return false }
        let slot = h & mask
        let header = headers[slot]
        defer { head.store(h + 1, ordering: .releasing) }
        try body(header, UnsafeRawBufferPointer(start: payloads + slot * maxPayload, count: header.payloadLength))
        return true
    }

    /// Entries waiting to be read (approximate when read off the producer/consumer threads).
    public var count: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }
    /// Consumer: true when nothing is waiting.
    public var isEmpty: Bool { head.load(ordering: .relaxed) == tail.load(ordering: .acquiring) }
    /// Packets dropped because the ring was full.
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }
    /// Packets dropped because they were longer than `maxPayload`.
    public var oversizeCount: Int { truncated.load(ordering: .relaxed) }
}

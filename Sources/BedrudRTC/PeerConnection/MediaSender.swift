import BedrudProtocol
import BedrudRuntime

/// One published audio track on the loop thread: takes encoded packets from a
/// ``PacketRing`` (the same structure the receive path fills), sends each when its sample
/// time is due (``RTPPacer`` from the monotonic clock), SRTP-protects it in place, keeps it
/// for NACKs and counts what went out.
///
/// A send ring's header fields mean: `rtpTimestamp` = the packet's first sample since the
/// track's start (mod 2³², unwrapped here: it only grows); `marker` = first packet after
/// silence; `payloadType` = RFC 6464 audio level (bits 0–6, −dBov) with voice activity in
/// bit 7. Everything else is ignored.
///
/// Thread contract: the producer pushes from its own thread; everything else runs on the
/// loop thread. No allocation, lock or hop per packet.
package final class MediaSender {
    let track: LocalAudioTrack
    let rtp: RTPSender
    let ring: PacketRing
    let pacer: RTPPacer
    /// While muted, due packets are taken and dropped: the timeline keeps running.
    var muted = false
    private(set) var packetsSent: UInt64 = 0
    private(set) var bytesSent: UInt64 = 0
    package private(set) var sendFailures: UInt64 = 0
    private(set) var mutedDrops: UInt64 = 0

    private let staging: UnsafeMutableRawBufferPointer
    private let packet: UnsafeMutableRawBufferPointer
    private var pending: MediaPacketHeader?
    private var stagedLength = 0
    /// Ring entries' 32-bit sample offsets, unwrapped (the first comes back plus 2³²).
    private var samples = RTPCounterUnwrapper.timestamps()
    /// Packets up to this early are sent now (the loop ticks every few ms).
    static let earlyNanos: UInt64 = 2_000_000
    static let capacity = 1500

    package init(track: LocalAudioTrack, rtp: RTPSender, ring: PacketRing, startNanos: UInt64) {
        self.track = track
        self.rtp = rtp
        self.ring = ring
        pacer = RTPPacer(startNanos: startNanos, clockRate: rtp.clockRate)
        staging = .allocate(byteCount: Self.capacity, alignment: 16)
        packet = .allocate(byteCount: Self.capacity + 64, alignment: 16)
    }

    deinit {
        staging.deallocate()
        packet.deallocate()
    }

    /// The 64-bit sample offset of a ring entry (its 32-bit value only grows): the shared
    /// unwrapper's value less the modulus it adds to the first one.
    @inline(__always)
    private func unwrap(_ s: UInt32) -> UInt64 {
        UInt64(clamping: samples.unwrap(s) &- (1 << 32))
    }

    /// Sends every packet that is due at `nowNanos`. Returns the deadline of the next
    /// waiting packet, if one is staged.
    @discardableResult
    package func tick(nowNanos: UInt64, srtp: any SRTPTransform, send: (UnsafeRawPointer, Int) -> Bool) -> UInt64? {
        while true {
            if pending == nil {
                let staged = ring.pop { h, payload in
                    let n = min(payload.count, Self.capacity)
                    if n > 0, let p = payload.baseAddress { staging.baseAddress!.copyMemory(from: p, byteCount: n) }
                    stagedLength = n
                    pending = h
                    pendingSample = unwrap(h.rtpTimestamp)
                }
                if !staged { return nil }
            }
            guard let h = pending else { return nil }
            let due = pacer.deadline(samples: pendingSample)
            if due > nowNanos &+ Self.earlyNanos { return due }
            pending = nil
            self.send(sample: pendingSample, header: h, nowNanos: nowNanos, srtp: srtp, send: send)
        }
    }

    private var pendingSample: UInt64 = 0

    /// A packet taken from the ring and waiting for its time.
    var hasPending: Bool { pending != nil }

    @inline(__always)
    private func send(sample: UInt64, header h: MediaPacketHeader, nowNanos: UInt64, srtp: any SRTPTransform, send: (UnsafeRawPointer, Int) -> Bool) {
        if muted {
            mutedDrops &+= 1
            return
        }
        let payload = UnsafeRawBufferPointer(start: staging.baseAddress, count: stagedLength)
        let seq = rtp.nextSequenceNumber
        guard let n = rtp.write(payload: payload, sample: sample, marker: h.marker, audioLevel: h.payloadType & 0x7F,
                                voice: h.payloadType & 0x80 != 0, into: UnsafeMutableRawBufferPointer(start: packet.baseAddress, count: Self.capacity))
        else {
            sendFailures &+= 1
            return
        }
        guard case .ok(let protected) = srtp.protectRTP(packet.baseAddress!, length: n, capacity: Self.capacity + 64) else {
            sendFailures &+= 1
            return
        }
        rtp.store(UnsafeRawBufferPointer(start: packet.baseAddress, count: protected), sequenceNumber: seq)
        rtp.noteSent(nowNanos: nowNanos)
        if send(packet.baseAddress!, protected) {
            packetsSent &+= 1
            bytesSent &+= UInt64(protected)
        } else {
            sendFailures &+= 1
        }
    }

    /// Answers one NACKed sequence number from the history (already protected).
    @inline(__always)
    func retransmit(_ sequenceNumber: UInt16, send: (UnsafeRawPointer, Int) -> Bool) {
        guard let p = rtp.retransmission(of: sequenceNumber), let base = p.baseAddress else { return }
        if !send(base, p.count) { sendFailures &+= 1 }
    }
}

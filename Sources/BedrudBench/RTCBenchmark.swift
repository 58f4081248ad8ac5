import BedrudProtocol
import BedrudRTC
import BedrudRuntime

/// Microbenchmark of the per-packet receive path, for docs/BENCHMARKS.md and the bench
/// command: demux → copy into the reused buffer → SRTP unprotect → RTP parse → stats and
/// NACK bookkeeping → push into the track's ``PacketRing`` (and the consumer's pop).
///
/// Runs on the calling thread with pre-protected packets (protect cost is not measured).
/// Each variant reports nanoseconds per packet; ratios between variants come from the
/// same run. Allocations are counted from outside the process: `scripts/rtc_bench_allocs`
/// counts malloc calls with perf uprobes over two run lengths and reports the difference
/// per packet (glibc has no in-process counter, and the Swift runtime's allocation hook
/// switches retain/release to adapters that are not safe to toggle in a running process).
public enum RTCBenchmark {
    public struct Variant: Sendable, CustomStringConvertible {
        /// `libsrtp2 AEAD_AES_128_GCM`, `libsrtp2 AES128_CM_SHA1_80`, or `no SRTP (parse + stats + ring only)`.
        public let name: String
        public let packets: Int
        public let nanosPerPacket: Double
        /// Packets fed to the receiver, warm-up included.
        public let sent: Int
        /// Packets the consumer popped from the track's ring: every one sent, if the path works.
        public let delivered: Int
        /// Delivered packets out of order, or with another sequence number or payload size than sent.
        public let damaged: Int

        public var description: String {
            let ns = (nanosPerPacket * 10).rounded() / 10
            let lost = sent > 0 && (delivered != sent || damaged > 0) ? ", BROKEN: \(delivered) of \(sent) delivered, \(damaged) damaged" : ""
            return "\(name): \(ns) ns/packet (\(packets) packets\(lost))"
        }
    }

    public struct Result: Sendable, CustomStringConvertible {
        public let payloadBytes: Int
        public let variants: [Variant]
        /// "receive" or "send".
        public var direction = "receive"
        public var description: String {
            var lines = variants.map(\.description)
            if let base = variants.last, base.nanosPerPacket > 0 {
                for v in variants.dropLast() {
                    lines.append("ratio \(v.name) / \(base.name): \((v.nanosPerPacket / base.nanosPerPacket * 100).rounded() / 100)")
                }
            }
            return "\(direction) path, \(payloadBytes)-byte payloads\n" + lines.joined(separator: "\n")
        }
    }

    /// Measures `packets` packets per variant after `warmup` unmeasured ones.
    /// Which SRTP the measured path uses.
    public enum Protection: String, Sendable, CaseIterable {
        /// EVPGCMTransform (the default for GCM).
        case evpgcm
        /// libsrtp2 GCM and CM-SHA1-80.
        case gcm, cm
        /// No SRTP: parse + stats + ring only.
        case none
    }

    /// Measures `packets` packets per variant after `warmup` unmeasured ones.
    /// With `senderOnly`, only the packets are prepared (nothing is received): an external
    /// allocation count of that run is what to subtract from a full run's.
    public static func receivePath(packets: Int = 200_000, warmup: Int = 2_000, payloadBytes: Int = 80, variants: [Protection] = Protection.allCases, senderOnly: Bool = false) -> Result {
        let n = max(1, packets)
        let measured = variants.compactMap { run($0, packets: n, warmup: warmup, payloadBytes: payloadBytes, senderOnly: senderOnly) }
        return Result(payloadBytes: payloadBytes, variants: measured)
    }

    static func run(_ protection: Protection, packets: Int, warmup: Int, payloadBytes: Int, senderOnly: Bool = false) -> Variant? {
        let total = packets + warmup
        let senderTransform: (any SRTPTransform)?
        let receiverTransform: any SRTPTransform
        let overhead: Int
        let profile: SRTPProfile? = protection == .cm ? .aes128CMHMACSHA1_80 : (protection == .none ? nil : .aeadAES128GCM)
        if let profile {
            let len = profile.keyLength + profile.saltLength
            let k1 = (0..<len).map { _ in UInt8.random(in: 0...255) }, k2 = (0..<len).map { _ in UInt8.random(in: 0...255) }
            let backend: SRTPBackend = protection == .evpgcm ? .openSSLForGCM : .libsrtp
            // Packets are prepared with the allocation-free EVP transform for GCM (libsrtp2 for CM);
            // that happens before the timed loop, and `senderOnly` runs let a count subtract it.
            guard let s = try? SRTPBackend.openSSLForGCM.makeTransform(profile: profile, localKey: k1, remoteKey: k2),
                let r = try? backend.makeTransform(profile: profile, localKey: k2, remoteKey: k1)
            else { return nil }
            senderTransform = s
            receiverTransform = r
            overhead = profile.rtpOverhead
        } else {
            senderTransform = nil
            receiverTransform = IdentitySRTPTransform()
            overhead = 0
        }
        // Pre-build every packet: distinct sequence numbers, so replay checks pass.
        let stride = 12 + payloadBytes + overhead + 16
        let wire = UnsafeMutableRawPointer.allocate(byteCount: stride * total + 256, alignment: 16)
        defer { wire.deallocate() }
        var lengths = [Int](repeating: 0, count: total)
        for i in 0..<total {
            let p = wire + i * stride
            let b = UnsafeMutableRawBufferPointer(start: p, count: stride)
            b[0] = 0x80
            b[1] = 111
            b.storeBE16(UInt16(truncatingIfNeeded: i), at: 2)
            b.storeBE32(UInt32(truncatingIfNeeded: i * 960), at: 4)
            b.storeBE32(0xB0B0_B0B0, at: 8)
            for k in 12..<(12 + payloadBytes) { b[k] = UInt8(truncatingIfNeeded: k &* 31 &+ i) }
            var len = 12 + payloadBytes
            if let s = senderTransform {
                guard case .ok(let l) = s.protectRTP(p, length: len, capacity: stride + 200) else { return nil }
                len = l
            }
            lengths[i] = len
        }
        if senderOnly { return Variant(name: "prepare only (\(protection.rawValue))", packets: packets, nanosPerPacket: 0, sent: 0, delivered: 0, damaged: 0) }
        let receiver = MediaReceiver(maxDatagram: 1500, nack: .init())
        receiver.srtp = receiverTransform
        let track = RemoteTrack(ssrc: 0xB0B0_B0B0, mid: "0", kind: "audio", streamID: nil, trackID: nil, participantSID: nil, trackSID: nil, payloadType: 111, clockRate: 48000, stereo: false, nack: true)
        receiver.setTracks([track])
        let ring = PacketRing(capacity: 1024, maxPayload: 1500)
        _ = receiver.attach(ring, ssrc: track.ssrc)
        var delivered = 0, damaged = 0

        // What the consumer sees: packets in the order sent, each once, with its payload.
        @inline(__always) func consume() -> Bool {
            ring.pop { h, payload in
                if h.kind == .rtp {
                    if h.sequenceNumber != UInt16(truncatingIfNeeded: delivered) || payload.count != payloadBytes { damaged += 1 }
                    delivered += 1
                }
            }
        }

        @inline(__always) func step(_ i: Int, now: UInt64) {
            let p = wire + i * stride
            let d = UnsafeRawBufferPointer(start: p, count: lengths[i])
            switch DatagramKind.classify(d) {
            case .rtp: receiver.handle(p, count: lengths[i], isRTCP: false, nowNanos: now)
            default: break
            }
            _ = consume()
        }

        var now = MonotonicClock.nanos()
        for i in 0..<warmup { step(i, now: now &+ UInt64(i) &* 20_000_000) }
        now &+= UInt64(warmup) &* 20_000_000
        let t0 = MonotonicClock.nanos()
        for i in warmup..<total {
            now &+= 20_000_000
            step(i, now: now)
        }
        let t1 = MonotonicClock.nanos()
        while consume() {}
        let name: String
        switch protection {
        case .evpgcm: name = "OpenSSL EVP SRTP_AEAD_AES_128_GCM"
        case .gcm, .cm: name = "libsrtp2 \(profile?.openSSLName ?? "")"
        case .none: name = "no SRTP (parse + stats + ring only)"
        }
        return Variant(
            name: name, packets: packets, nanosPerPacket: Double(t1 - t0) / Double(packets), sent: total, delivered: delivered, damaged: damaged)
    }
}

// MARK: - Send path

extension RTCBenchmark {
    /// The per-packet send path, as the loop thread runs it for a published track: the
    /// producer's push into the send ``PacketRing``, then ``MediaSender/tick`` (pop, RTP
    /// header with the audio-level extension, SRTP protect, copy into the NACK history,
    /// hand-off to the socket, here a byte counter). `evpgcm` or `none` (no SRTP).
    public static func sendPath(packets: Int = 200_000, warmup: Int = 2_000, payloadBytes: Int = 80, variants: [Protection] = [.evpgcm, .none]) -> Result {
        let n = max(1, packets)
        let measured = variants.compactMap { runSend($0, packets: n, warmup: warmup, payloadBytes: payloadBytes) }
        return Result(payloadBytes: payloadBytes, variants: measured, direction: "send")
    }

    static func runSend(_ protection: Protection, packets: Int, warmup: Int, payloadBytes: Int) -> Variant? {
        let transform: any SRTPTransform
        switch protection {
        case .evpgcm:
            let k1 = (0..<28).map { _ in UInt8.random(in: 0...255) }, k2 = (0..<28).map { _ in UInt8.random(in: 0...255) }
            guard let t = try? SRTPBackend.openSSLForGCM.makeTransform(profile: .aeadAES128GCM, localKey: k1, remoteKey: k2) else { return nil }
            transform = t
        case .none:
            transform = IdentitySRTPTransform()
        case .gcm, .cm:
            return nil  // libsrtp2 protects on another code path we do not use for sending
        }
        let ring = PacketRing(capacity: 64, maxPayload: 1500)
        let track = LocalAudioTrack(mid: "1", ssrc: 0xB0B0_B0B0, cname: "bench", streamID: "s", trackID: "t")
        let rtp = RTPSender(ssrc: track.ssrc, payloadType: 111, audioLevelID: 1, sequenceNumber: 1, timestampBase: 0)
        // Paced from time 0 and ticked at each packet's own deadline: every packet is due.
        let sender = MediaSender(track: track, rtp: rtp, ring: ring, startNanos: 0)
        let payload = UnsafeMutableRawBufferPointer.allocate(byteCount: payloadBytes, alignment: 16)
        defer { payload.deallocate() }
        for k in 0..<payloadBytes { payload[k] = UInt8(truncatingIfNeeded: k &* 31) }
        var bytes = 0
        var sent = 0
        let pacer = RTPPacer(startNanos: 0, clockRate: 48_000)
        @inline(__always) func step(_ i: Int) {
            let h = MediaPacketHeader(ssrc: 0, rtpTimestamp: UInt32(truncatingIfNeeded: i &* 960), payloadType: 0x80 | 30, arrivalNanos: 0)
            _ = ring.push(h, payload: UnsafeRawBufferPointer(payload))
            sender.tick(nowNanos: pacer.deadline(samples: UInt64(i) &* 960), srtp: transform) { _, n in
                bytes &+= n
                sent &+= 1
                return true
            }
        }
        for i in 0..<warmup { step(i) }
        let t0 = MonotonicClock.nanos()
        for i in warmup..<(warmup + packets) { step(i) }
        let t1 = MonotonicClock.nanos()
        guard sent == warmup + packets, sender.sendFailures == 0, bytes > 0 else { return nil }
        let name = protection == .evpgcm ? "OpenSSL EVP SRTP_AEAD_AES_128_GCM" : "no SRTP (RTP build + history + ring only)"
        // Pushed into the ring vs handed to the socket by the sender (checked equal above).
        return Variant(name: name, packets: packets, nanosPerPacket: Double(t1 - t0) / Double(packets),
                       sent: warmup + packets, delivered: sent, damaged: 0)
    }
}

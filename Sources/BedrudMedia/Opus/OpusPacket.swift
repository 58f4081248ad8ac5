import COpus

/// What the TOC byte of an Opus packet says (RFC 6716 §3.1), plus the packet's length
/// in 48 kHz samples as libopus parses it (§3.2, all four frame-packing codes).
///
/// Pure value; parsing never reads beyond the buffer and never allocates.
public struct OpusPacketInfo: Sendable, Equatable {
    /// TOC configuration number 0...31 (mode, bandwidth and frame size).
    public var config: UInt8
    public var isStereo: Bool
    /// Frames in the packet (1...48).
    public var frameCount: Int
    /// Samples per frame at 48 kHz (120...2880).
    public var samplesPerFrame: Int
    /// True when every frame has length 0: the packet asks the decoder for
    /// concealment (RFC 7845 §4.1), which is how gaps are written.
    public var isConcealmentRequest: Bool

    public var samples: Int { frameCount * samplesPerFrame }

    /// Parses and validates `packet` with libopus' own parser (`opus_packet_parse`).
    /// - Returns: nil for an empty or malformed packet (RFC 6716 §3.4 rules).
    public static func parse(_ packet: UnsafeRawBufferPointer) -> OpusPacketInfo? {
        guard let base = packet.baseAddress?.assumingMemoryBound(to: UInt8.self), packet.count > 0,
            packet.count <= Int(Int32.max)
        else { return nil }
        var toc: UInt8 = 0
        var sizes = (
            Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0),
            Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0),
            Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0),
            Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0),
            Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0)
        )
        let count = withUnsafeMutableBytes(of: &sizes) { raw -> Int32 in
            guard let sizePtr = raw.baseAddress?.assumingMemoryBound(to: Int16.self) else { return -1 }
            return opus_packet_parse(base, Int32(packet.count), &toc, nil, sizePtr, nil)
        }
        guard count > 0 else { return nil }
        let perFrame = Int(opus_packet_get_samples_per_frame(base, 48000))
        guard perFrame > 0, Int(count) * perFrame <= 5760 else { return nil }
        var allEmpty = true
        withUnsafeBytes(of: &sizes) { raw in
            let s = raw.bindMemory(to: Int16.self)
            for i in 0..<Int(count) where s[i] != 0 { allEmpty = false; break }
        }
        return OpusPacketInfo(
            config: base[0] >> 3, isStereo: base[0] & 0x4 != 0, frameCount: Int(count),
            samplesPerFrame: perFrame, isConcealmentRequest: allEmpty)
    }

    /// Whether the packet's first frame carries SILK LBRR data, the in-band FEC that
    /// `opus_decode(..., decode_fec: 1)` can recover the packet before it from
    /// (RFC 6716 §4.2.3-§4.2.4). CELT-only packets never do; for SILK and hybrid the
    /// per-channel LBRR flag follows the VAD flags (one per 20 ms SILK frame) at the top
    /// of the first frame's first byte, coded with uniform probability. When this is
    /// false, a "FEC" decode is only concealment. Never reads beyond the buffer.
    public static func hasLBRR(_ packet: UnsafeRawBufferPointer) -> Bool {
        guard let base = packet.baseAddress?.assumingMemoryBound(to: UInt8.self), packet.count > 1,
            packet.count <= Int(Int32.max)
        else { return false }
        let config = base[0] >> 3
        guard config < 16 else { return false }  // 16...31: CELT only
        var toc: UInt8 = 0
        var offset: Int32 = 0
        var sizes = (Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0),
            Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0),
            Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0),
            Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0),
            Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0), Int16(0))
        let first = withUnsafeMutableBytes(of: &sizes) { raw -> Int in
            guard let sizePtr = raw.baseAddress?.assumingMemoryBound(to: Int16.self) else { return 0 }
            guard opus_packet_parse(base, Int32(packet.count), &toc, nil, sizePtr, &offset) > 0 else { return 0 }
            return Int(sizePtr[0])
        }
        guard first > 0, offset > 0, Int(offset) < packet.count else { return false }
        let perFrame = samplesPerFrame(config: config)
        let silkFrames = perFrame > 960 ? perFrame / 960 : 1
        let byte = base[Int(offset)]
        var lbrr = (byte >> (7 - silkFrames)) & 1 != 0
        if base[0] & 0x4 != 0 { lbrr = lbrr || (byte >> (6 - 2 * silkFrames)) & 1 != 0 }
        return lbrr
    }

    /// Whether the sender's encoder judged the packet's first frame as voice: the SILK VAD
    /// flags (one per 20 ms SILK frame of the mid channel, the top bits of the first
    /// frame's first byte, RFC 6716 §4.2.3). A DTX packet (no frame data) is inactive;
    /// CELT-only packets carry no flag and count as active. Used by the benchmark to say
    /// how much decoding a skip of inactive packets could save.
    public static func hasVoiceActivity(_ packet: [UInt8]) -> Bool {
        packet.withUnsafeBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count > 0 else { return false }
            let config = base[0] >> 3
            guard config < 16 else { return true }
            guard let info = parse(raw), !info.isConcealmentRequest, raw.count > 2 else { return false }
            var toc: UInt8 = 0
            var offset: Int32 = 0
            var sizes = [Int16](repeating: 0, count: 48)
            guard opus_packet_parse(base, Int32(raw.count), &toc, nil, &sizes, &offset) > 0, sizes[0] > 0, Int(offset) < raw.count else { return false }
            let perFrame = samplesPerFrame(config: config)
            let silkFrames = perFrame > 960 ? perFrame / 960 : 1
            let byte = base[Int(offset)]
            return (byte >> (8 - silkFrames)) != 0
        }
    }

    /// Samples per frame at 48 kHz for a TOC configuration (RFC 6716 §3.1, Table 2).
    public static func samplesPerFrame(config: UInt8) -> Int {
        let c = Int(config & 31)
        switch c {
        case 0...11: return [480, 960, 1920, 2880][c & 3]
        case 12...15: return [480, 960][c & 1]
        default: return [120, 240, 480, 960][c & 3]
        }
    }
}

/// Builds the packets that fill a gap in an Ogg Opus stream (RFC 7845 §4.1): code 3
/// packets (RFC 6716 §3.2.5) whose frames are all zero bytes long, so a decoder runs its
/// loss concealment (or produces silence after a DTX or mute) for exactly their duration.
/// Each such packet is two bytes: a TOC and a frame-count byte.
public enum ConcealmentPackets {
    /// The CELT-only configuration with 2.5 ms frames in the same audio bandwidth as
    /// `config`; CELT can express any multiple of 2.5 ms, which SILK and hybrid cannot.
    /// The two bytes of the packet that carries a stream's EOS: one 2.5 ms CELT frame
    /// (code 3, one frame, no data) like `previousTOC`'s bandwidth and channels. Written
    /// with the previous packet's granule, end trimming (RFC 7845 §4.4) removes all of it.
    static func endOfStream(previousTOC: UInt8) -> (UInt8, UInt8) {
        ((celtConfig(matching: previousTOC >> 3) << 3) | (previousTOC & 4) | 3, 1)
    }

    static func celtConfig(matching config: UInt8) -> UInt8 {
        switch config {
        case 0...3: return 16  // SILK NB -> CELT NB
        case 4...11: return 20  // SILK MB/WB -> CELT WB (CELT has no MB)
        case 12...13: return 24  // hybrid SWB
        case 14...15: return 28  // hybrid FB
        default: return config & ~3  // already CELT: the 2.5 ms variant
        }
    }

    /// Splits `samples` (a multiple of 120) into concealment packets modelled on the
    /// previous packet's TOC (mode, bandwidth and channels copied where its frame size
    /// divides the gap), calling `body` with each 2-byte packet and its duration.
    /// - Returns: the samples covered (== `samples` rounded down to 120).
    @discardableResult
    public static func fill(
        samples: Int, previousTOC: UInt8, _ body: (UnsafeRawBufferPointer, Int) -> Void
    ) -> Int {
        var remaining = (max(0, samples) / 120) * 120
        let covered = remaining
        let stereo = previousTOC & 0x4
        let prevConfig = previousTOC >> 3
        let prevFrame = OpusPacketInfo.samplesPerFrame(config: prevConfig)
        let celt2_5 = celtConfig(matching: prevConfig)
        var bytes: (UInt8, UInt8) = (0, 0)
        while remaining > 0 {
            var config: UInt8
            var frame: Int
            if remaining >= prevFrame {
                config = prevConfig
                frame = prevFrame
            } else if remaining >= 960 {
                config = celt2_5 | 3  // CELT 20 ms
                frame = 960
            } else {
                config = celt2_5  // CELT 2.5 ms
                frame = 120
            }
            let count = min(remaining / frame, min(48, 5760 / frame))
            bytes.0 = (config << 3) | stereo | 3
            bytes.1 = UInt8(count)  // v = 0 (CBR), p = 0 (no padding), M = count
            withUnsafeBytes(of: &bytes) { body($0, count * frame) }
            remaining -= count * frame
        }
        return covered
    }
}

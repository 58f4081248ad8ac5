import COpus

#if canImport(Glibc)
import Glibc
#endif

/// What `bedrud-bot play` publishes, one Opus packet at a time, each placed on the track's
/// 48 kHz timeline: an Ogg Opus file's packets as they are, or PCM (a WAV file, speech, a
/// tone) encoded here with libopus in 20 ms frames.
///
/// `next` writes into the caller's buffer and allocates nothing; the encoder and its
/// buffers are made once. With `loop`, the source starts again where it ended on the
/// timeline (an Ogg file's packets again; PCM continues through the same encoder).
///
/// Thread contract: used by one thread at a time (the producer's).
public final class PlaySource: @unchecked Sendable {
    public enum Content: Sendable {
        case ogg(OggOpusPackets)
        /// 48 kHz interleaved PCM.
        case pcm(samples: [Float], channels: Int)
        case tone(hz: Double)
    }

    public struct Packet: Sendable, Equatable {
        public var length: Int
        /// First sample on the track's timeline (48 kHz).
        public var start: UInt64
        public var samples: Int
        /// RFC 6464 level, −dBov (0…127).
        public var level: UInt8
        /// False for DTX/comfort-noise packets and silent frames.
        public var voice: Bool
    }

    public let content: Content
    public let channels: Int
    public let loop: Bool
    /// Samples at the start of one pass that are not playable audio (the Ogg pre-skip).
    public let leadIn: Int
    /// One pass on the timeline, or nil for a tone (endless).
    public let passSamples: Int64?

    private var index = 0
    private var pass: Int64 = 0
    private var encoder: OpaquePointer?
    private let frame: UnsafeMutablePointer<Float>
    static let frameSamples = 960

    public init(_ content: Content, loop: Bool, bitrate: Int? = nil) throws(PlaySourceError) {
        self.content = content
        self.loop = loop
        frame = .allocate(capacity: Self.frameSamples * 2)
        switch content {
        case .ogg(let f):
            channels = Int(f.head.channelCount)
            leadIn = Int(f.head.preSkip)
            passSamples = f.endSample
        case .pcm(let s, let ch):
            channels = ch
            leadIn = 0
            let frames = (s.count / max(1, ch) + Self.frameSamples - 1) / Self.frameSamples
            passSamples = Int64(frames * Self.frameSamples)
            guard frames > 0 else { throw PlaySourceError("there is no audio to play (0 samples)") }
        case .tone:
            channels = 1
            leadIn = 0
            passSamples = nil
        }
        if case .ogg = content { return }
        var err: Int32 = 0
        guard let e = opus_encoder_create(48_000, Int32(channels), OPUS_APPLICATION_AUDIO, &err), err == OPUS_OK else {
            throw PlaySourceError("libopus could not create an encoder (\(err))")
        }
        encoder = e
        _ = shim_opus_encoder_set_bitrate(e, Int32(bitrate ?? (channels == 2 ? 64_000 : 32_000)))
        _ = shim_opus_encoder_set_inband_fec(e, 1)
        _ = shim_opus_encoder_set_packet_loss_perc(e, 5)
    }

    deinit {
        if let encoder { opus_encoder_destroy(encoder) }
        frame.deallocate()
    }

    public var isStereo: Bool { channels == 2 }

    /// The next packet, written into `out` (at least 1500 bytes), or nil when done.
    public func next(into out: UnsafeMutableRawBufferPointer) -> Packet? {
        switch content {
        case .ogg(let f):
            if index == f.entries.count {
                guard loop else { return nil }
                index = 0
                pass += f.endSample
            }
            let e = f.entries[index]
            index += 1
            let n = min(e.length, out.count)
            f.storage.withUnsafeBytes { s in out.baseAddress!.copyMemory(from: s.baseAddress! + e.offset, byteCount: n) }
            // A packet of at most 2 bytes is DTX silence (RFC 6716 §3.4: a TOC and no frame data).
            return Packet(length: n, start: UInt64(pass + e.start), samples: e.samples, level: n <= 2 ? 127 : 30, voice: n > 2)
        case .pcm(let s, let ch):
            let frames = Int(passSamples ?? 0) / Self.frameSamples
            if index == frames {
                guard loop else { return nil }
                index = 0
                pass += passSamples ?? 0
            }
            let total = s.count / ch
            s.withUnsafeBufferPointer { p in
                for i in 0..<Self.frameSamples {
                    let k = index * Self.frameSamples + i
                    for c in 0..<ch { frame[i * ch + c] = k < total ? p[k * ch + c] : 0 }
                }
            }
            let start = UInt64(pass) + UInt64(index * Self.frameSamples)
            index += 1
            return encode(start: start, into: out)
        case .tone(let hz):
            let start = UInt64(index) * UInt64(Self.frameSamples)
            for i in 0..<Self.frameSamples {
                let n = Double(start + UInt64(i))
                frame[i] = Float(0.3 * sin(2 * Double.pi * (hz * n / 48_000).truncatingRemainder(dividingBy: 1)))
            }
            index += 1
            return encode(start: start, into: out)
        }
    }

    private func encode(start: UInt64, into out: UnsafeMutableRawBufferPointer) -> Packet? {
        guard let encoder, let o = out.baseAddress else { return nil }
        var energy: Float = 0
        for i in 0..<Self.frameSamples * channels { energy += frame[i] * frame[i] }
        let rms = (energy / Float(Self.frameSamples * channels)).squareRoot()
        let dbov = rms > 0 ? -20 * log10f(rms) : 127
        let level = UInt8(max(0, min(127, dbov.rounded())))
        let n = opus_encode_float(encoder, frame, Int32(Self.frameSamples), o.assumingMemoryBound(to: UInt8.self), Int32(min(out.count, 1500)))
        guard n > 0 else { return nil }
        return Packet(length: Int(n), start: start, samples: Self.frameSamples, level: level, voice: level < 60)
    }
}

/// Why a source cannot be played (a sentence for the user).
public struct PlaySourceError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ d: String) { description = d }
}

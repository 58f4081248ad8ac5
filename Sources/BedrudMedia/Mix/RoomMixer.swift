#if canImport(Glibc)
import Glibc
#endif

/// Sums decoded tracks on the session timeline, limits the sum, encodes it with libopus
/// and writes `room.opus` through an ``OggStreamWriter``.
///
/// The mix buffer is a ring of `ringFrames` float frames indexed by session sample.
/// Tracks add PCM at their session position; the mixer finalizes 20 ms frames up to an
/// edge the engine moves (now − mix latency). Audio that arrives for a frame already
/// finalized, or too far ahead, is dropped and counted. The limiter is a peak envelope
/// follower with instant attack and a ~100 ms release, followed by a hard clamp in
/// float, so an overload can never wrap around. Nothing allocates after `init`.
///
/// Silence costs no encoding: once the mix has been digitally silent (below half a 16-bit
/// step) for `silenceWarmupFrames` encoded frames, which leaves the decoder's state at
/// silence, each further silent frame is written as a 20 ms concealment packet (RFC 7845
/// §4.1, as in participants' gaps; a decoder's concealment after silence is silence).
/// The first frame with sound resets the encoder and encodes normally. The file keeps
/// its full duration and granule positions; an empty room costs no libopus time.
/// Thread contract: owned by the media thread.
final class RoomMixer {
    let channels: Int
    static let frame = 960
    private let ringFrames: Int
    private let mask: Int
    private let ring: UnsafeMutablePointer<Float>
    private let frameBuffer: UnsafeMutablePointer<Float>
    private let packet: UnsafeMutablePointer<UInt8>
    private static let packetCapacity = 4000
    let encoder: OpusEncoderBox
    private(set) var writer: OggStreamWriter
    /// Session sample where the current file segment begins: its granule 0.
    private(set) var granuleBase: Int64 = 0
    /// First session sample not yet encoded.
    private(set) var cursor: Int64 = 0
    private(set) var envelope: Float = 0
    private let threshold: Float = 0.89  // ≈ −1 dBFS
    private let release: Float
    private(set) var lateSamplesDropped = 0
    private(set) var aheadSamplesDropped = 0
    private(set) var limitedFrames = 0
    private(set) var encodeErrors = 0
    private(set) var framesEncoded = 0
    /// Silent frames written as concealment packets instead of being encoded.
    private(set) var silentFramesSkipped = 0
    static let silenceWarmupFrames = 5
    private var silentRun = 0
    private var encoderBypassed = false
    private var lastTOC: UInt8 = 0xF8  // CELT FB 20 ms mono until the first packet
    /// The level of every frame written, for the report (``LevelStrip``).
    private(set) var strip = LevelStrip()
    private var started = false

    init?(channels: Int, bitrate: Int, complexity: Int, coder: MixCoder, ringFrames: Int = 1 << 16, writer: OggStreamWriter) {
        guard let enc = OpusEncoderBox(channels: channels, bitrate: bitrate, complexity: complexity, coder: coder) else { return nil }
        self.channels = channels
        var r = 1 << 12
        while r < ringFrames { r <<= 1 }
        self.ringFrames = r
        mask = r - 1
        ring = .allocate(capacity: r * channels)
        ring.initialize(repeating: 0, count: r * channels)
        frameBuffer = .allocate(capacity: Self.frame * channels)
        frameBuffer.initialize(repeating: 0, count: Self.frame * channels)
        packet = .allocate(capacity: Self.packetCapacity)
        encoder = enc
        self.writer = writer
        release = expf(-1 / (0.1 * 48000))
    }

    deinit {
        ring.deallocate()
        frameBuffer.deallocate()
        packet.deallocate()
    }

    var preSkip: Int { encoder.lookahead }

    /// Adds mono PCM at session sample `position` with constant-power `pan` (−1 left … +1
    /// right; ignored for a mono mix).
    func add(_ pcm: UnsafePointer<Float>, count: Int, at position: Int64, pan: Float) {
        var start = 0
        var pos = position
        var n = count
        if pos < cursor {
            let skip = Int(min(Int64(n), cursor - pos))
            lateSamplesDropped += skip
            start += skip
            pos += Int64(skip)
            n -= skip
        }
        let limit = cursor + Int64(ringFrames)
        if pos + Int64(n) > limit {
            let over = Int(min(Int64(n), pos + Int64(n) - limit))
            aheadSamplesDropped += over
            n -= over
        }
        guard n > 0 else { return }
        if channels == 1 {
            for i in 0..<n { ring[Int((pos + Int64(i)) & Int64(mask))] += pcm[start + i] }
        } else {
            let angle = (max(-1, min(1, pan)) + 1) * Float.pi / 4
            let gl = cosf(angle)
            let gr = sinf(angle)
            for i in 0..<n {
                let j = Int((pos + Int64(i)) & Int64(mask)) * 2
                let x = pcm[start + i]
                ring[j] += x * gl
                ring[j + 1] += x * gr
            }
        }
    }

    /// Encodes every whole 20 ms frame before session sample `edge`.
    func advance(to edge: Int64) {
        while cursor + Int64(Self.frame) <= edge { encodeFrame(eos: false, granuleEnd: nil) }
    }

    /// Encodes up to `end`, pads through the encoder's lookahead, and ends the stream
    /// with a granule position that trims the padding (RFC 7845 §4.4).
    func finish(at end: Int64) {
        let target = max(end, cursor)
        while cursor + Int64(Self.frame) <= target { encodeFrame(eos: false, granuleEnd: nil) }
        // The last frames carry the tail and the lookahead; EOS on the last one.
        let granuleEnd = Int64(preSkip) + target
        while true {
            let last = cursor + Int64(Self.frame) >= target + Int64(preSkip)
            encodeFrame(eos: last, granuleEnd: last ? granuleEnd : nil)
            if last { break }
        }
    }

    /// Rotation: ends the current stream after the frames encoded so far (EOS on a packet
    /// that end trimming removes whole) and continues in `next` from granule 0. The
    /// encoder keeps running; `next` gets the same pre-skip, so its first played sample
    /// is the mix at the returned session sample, and the `preSkip` samples before it
    /// (the new decoder's warm-up) are in neither segment.
    func rotate(to next: OggStreamWriter) -> Int64 {
        var eos = ConcealmentPackets.endOfStream(previousTOC: lastTOC)
        withUnsafeBytes(of: &eos) { writer.packet($0, granule: cursor - granuleBase, samples: 120, eos: true) }
        writer = next
        granuleBase = cursor
        return cursor
    }

    /// True when the ring holds only zeros (±0) for the frame at `cursor`.
    private func frameIsZero() -> Bool {
        let start = Int(cursor & Int64(mask))
        let first = min(Self.frame, ringFrames - start)
        var bits: UInt32 = 0
        for k in (start * channels)..<((start + first) * channels) { bits |= ring[k].bitPattern & 0x7FFF_FFFF }
        for k in 0..<((Self.frame - first) * channels) { bits |= ring[k].bitPattern & 0x7FFF_FFFF }
        return bits == 0
    }

    private func encodeFrame(eos: Bool, granuleEnd: Int64?) {
        let f = Self.frame
        var limited = false
        var peak: Float = 0
        var sumSquares: Float = 0
        if envelope == 0, frameIsZero() {
            // Digital silence with nothing left to release (an empty room): the pass below
            // would only copy zeros and leave the envelope at 0. Same result, no pass.
            frameBuffer.update(repeating: 0, count: f * channels)
        } else {
            for i in 0..<f {
                let j = Int((cursor + Int64(i)) & Int64(mask)) * channels
                var m: Float = 0
                for c in 0..<channels { m = max(m, abs(ring[j + c])) }
                peak = max(peak, m)
                envelope = m > envelope ? m : envelope * release + m * (1 - release)
                let g: Float = envelope > threshold ? threshold / envelope : 1
                if g < 1 { limited = true }
                for c in 0..<channels {
                    let y = max(-1, min(1, ring[j + c] * g))
                    sumSquares += y * y
                    frameBuffer[i * channels + c] = y
                    ring[j + c] = 0
                }
            }
            // The gain depends only on envelope > threshold; far below it the release would
            // end in a denormal that never reaches 0 (and is slow on every later silent
            // sample). Flush it.
            if envelope < 1e-20 { envelope = 0 }
        }
        if limited { limitedFrames += 1 }
        strip.add(start: cursor, meanSquare: sumSquares / Float(f * channels))
        cursor += Int64(f)
        silentRun = peak < 1.0 / 65536 ? silentRun + 1 : 0
        if silentRun > Self.silenceWarmupFrames && granuleEnd == nil && !eos {
            var at = cursor - Int64(f)
            ConcealmentPackets.fill(samples: f, previousTOC: lastTOC) { pkt, dur in
                at += Int64(dur)
                writer.packet(pkt, granule: at - granuleBase, samples: dur, eos: false)
            }
            silentFramesSkipped += 1
            encoderBypassed = true
            return
        }
        if encoderBypassed {
            encoder.reset()
            encoderBypassed = false
        }
        let n = encoder.encode(frameBuffer, frameSamples: f, into: packet, outCapacity: Self.packetCapacity)
        guard n > 0 else {
            encodeErrors += 1
            return
        }
        framesEncoded += 1
        lastTOC = packet[0]
        // Granule = decoded samples so far, pre-skip included (RFC 7845 §4).
        let granule = (granuleEnd ?? cursor) - granuleBase
        writer.packet(UnsafeRawBufferPointer(start: packet, count: n), granule: granule, samples: f, eos: eos)
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Sums decoded tracks on the session timeline, limits the sum, encodes it with libopus
/// and writes `room.opus` through an ``OggStreamWriter``.
///
/// The mix buffer is a ring of `ringFrames` float frames indexed by session sample.
/// Tracks add PCM at their session position; the mixer finalizes frames up to an edge
/// the engine moves (now − mix latency). Audio that arrives for a frame already
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
///
/// One voice costs no encoding either (a mono mix, `passthrough`): while exactly one
/// track is heard above −50 dBFS, its packets are written into `room.opus` as they are
/// (RFC 7845 lets a mono stream carry any Opus packet; a decoder mixes stereo ones down).
/// Which frames are encoded and which packets pass is ``MixPassthrough``'s decision (a
/// pure value with transcript tests); this class keeps the audio, the per-2.5 ms record of
/// who is heard, and the recent packets (``MixPacketQueue``), and carries the decisions
/// out. Tracks below the gate (comfort noise) are left out of the mix during a run. Track
/// clocks put packets on the mix's 2.5 ms grid (``TrackClock``), so a run needs no shift;
/// at a run's end the encoder is reset and fed the last 20 ms (its output dropped) so it
/// continues the voice. Measured in docs/BENCHMARKS.md (*One voice passes through*).
/// Thread contract: owned by the media thread.
final class RoomMixer: MixPassthrough.View {
    let channels: Int
    static let frame = 960
    /// The finest Opus frame (2.5 ms): packet boundaries of any stream fall on it.
    static let slot = 120
    private let ringFrames: Int
    private let mask: Int
    private let ring: UnsafeMutablePointer<Float>
    /// Who is heard, per 2.5 ms slot of the ring: `noTrack`, one track's id, or `several`.
    private let slots: UnsafeMutablePointer<Int32>
    private let slotMask: Int
    private static let noTrack: Int32 = -1
    private static let several: Int32 = -2
    /// A track is heard when a block it adds has an RMS above −50 dBFS (the speech
    /// detector's floor for speech).
    static let gateMeanSquare: Float = 1e-5
    private let frameBuffer: UnsafeMutablePointer<Float>
    private let packet: UnsafeMutablePointer<UInt8>
    private static let packetCapacity = 4000
    let encoder: OpusEncoderBox
    private(set) var writer: OggStreamWriter
    /// Session sample where the current file segment begins: its granule 0.
    private(set) var granuleBase: Int64 = 0
    /// First session sample not yet fed to the encoder (while encoding).
    private(set) var cursor: Int64 = 0
    /// The ring below this session sample is cleared; the slots below this slot.
    private var recycled: Int64 = 0
    private var slotsCleared: Int64 = 0
    /// The engine's edge: everything before it is final.
    private(set) var finalEdge: Int64 = 0
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
    /// Packets of one voice written as they are.
    private(set) var packetsPassedThrough = 0
    /// Where the first 256 runs began and ended (session samples), for the tests and the
    /// benchmark's switch measurement.
    private(set) var switches: [Int64] = []
    static let silenceWarmupFrames = 5
    private var silentRun = 0
    private var encoderBypassed = false
    /// Frames still to code without prediction after a passthrough run.
    private var predictionOffFrames = 0
    private var lastTOC: UInt8 = 0xF8  // CELT FB 20 ms mono until the first packet
    /// The level of every frame written, for the report (``LevelStrip``).
    private(set) var strip = LevelStrip()
    /// The packets that may be passed through; nil: always encode.
    let queue: MixPacketQueue?

    /// With the passthrough on: who is heard and which packets may go through
    /// (``MixPassthrough``; nil: always encode). The mix then waits for 80 ms more of the
    /// session to be final, to see who speaks next.
    private var passthrough: MixPassthrough?

    init?(channels: Int, bitrate: Int, complexity: Int, coder: MixCoder, ringFrames: Int = 1 << 16, passthrough: Bool = false,
          writer: OggStreamWriter) {
        guard let enc = OpusEncoderBox(channels: channels, bitrate: bitrate, complexity: complexity, coder: coder) else { return nil }
        self.channels = channels
        var r = 1 << 12
        while r < ringFrames { r <<= 1 }
        self.ringFrames = r
        mask = r - 1
        ring = .allocate(capacity: r * channels)
        ring.initialize(repeating: 0, count: r * channels)
        // A power of two of slots that spans more than the ring (r / 64 ≥ r / 120).
        slots = .allocate(capacity: r / 64)
        slots.initialize(repeating: Self.noTrack, count: r / 64)
        slotMask = r / 64 - 1
        frameBuffer = .allocate(capacity: Self.frame * channels)
        frameBuffer.initialize(repeating: 0, count: Self.frame * channels)
        packet = .allocate(capacity: Self.packetCapacity)
        encoder = enc
        self.writer = writer
        release = expf(-1 / (0.1 * 48000))
        // The session's grid (TrackClock) assumes this delay; another would misplace every run.
        queue = passthrough && channels == 1 && enc.lookahead == coder.lookahead ? MixPacketQueue() : nil
        self.passthrough = queue == nil ? nil : MixPassthrough()
        switches.reserveCapacity(512)
    }

    deinit {
        ring.deallocate()
        slots.deallocate()
        frameBuffer.deallocate()
        packet.deallocate()
    }

    var preSkip: Int { encoder.lookahead }
    var encoderDelay: Int64 { Int64(encoder.lookahead) }

    var mode: MixPassthrough.Mode { passthrough?.mode ?? .encoding }

    /// The session sample the stream's output has reached.
    private var outPosition: Int64 { passthrough?.outPosition(cursor: cursor, preSkip: Int64(preSkip)) ?? cursor - Int64(preSkip) }

    /// Audio before this is final: later additions are late.
    private var acceptFrom: Int64 {
        if case .passthrough(_, let next, _) = mode { return next }
        return cursor
    }

    /// Adds mono PCM at session sample `position` with constant-power `pan` (−1 left … +1
    /// right; ignored for a mono mix). `source` (a track's id, ≥ 0) is heard there when the
    /// block is above the gate.
    func add(_ pcm: UnsafePointer<Float>, count: Int, at position: Int64, pan: Float, source: Int = -1) {
        var start = 0
        var pos = position
        var n = count
        let from = acceptFrom
        if pos < from {
            let skip = Int(min(Int64(n), from - pos))
            lateSamplesDropped += skip
            start += skip
            pos += Int64(skip)
            n -= skip
        }
        let limit = recycled + Int64(ringFrames)
        if pos + Int64(n) > limit {
            let over = Int(min(Int64(n), pos + Int64(n) - limit))
            aheadSamplesDropped += over
            n -= over
        }
        guard n > 0 else { return }
        var sumSquares: Float = 0
        if channels == 1 {
            for i in 0..<n {
                let x = pcm[start + i]
                sumSquares += x * x
                ring[Int((pos + Int64(i)) & Int64(mask))] += x
            }
        } else {
            let angle = (max(-1, min(1, pan)) + 1) * Float.pi / 4
            let gl = cosf(angle)
            let gr = sinf(angle)
            for i in 0..<n {
                let j = Int((pos + Int64(i)) & Int64(mask)) * 2
                let x = pcm[start + i]
                sumSquares += x * x
                ring[j] += x * gl
                ring[j + 1] += x * gr
            }
        }
        if queue != nil, source >= 0, sumSquares > Self.gateMeanSquare * Float(n) {
            let id = Int32(truncatingIfNeeded: source)
            for k in (pos / Int64(Self.slot))...((pos + Int64(n) - 1) / Int64(Self.slot)) {
                let j = Int(k & Int64(slotMask))
                let v = slots[j]
                if v == Self.noTrack { slots[j] = id } else if v != id { slots[j] = Self.several }
            }
        }
    }

    /// Keeps a packet of track `source` whose decoded audio starts at session sample
    /// `start`, in case it is passed through.
    func offer(_ payload: UnsafeRawBufferPointer, source: Int, at start: Int64, samples: Int) {
        guard let q = queue, start >= acceptFrom else { return }
        q.push(source: source, start: start, samples: samples, payload: payload)
    }

    /// Finalizes everything before session sample `edge`.
    func advance(to edge: Int64) {
        finalEdge = max(finalEdge, edge)
        // Cleared as it goes: a long advance must not wrap around onto old audio.
        while step() { recycle() }
        recycle()
    }

    /// Encodes up to `end`, pads through the encoder's lookahead, and ends the stream
    /// with a granule position that trims the padding (RFC 7845 §4.4).
    func finish(at end: Int64) {
        endPassthrough()
        let target = max(end, cursor)
        while cursor + Int64(Self.frame) <= target { encodeFrame(Self.frame, eos: false, granuleEnd: nil) }
        // The last frames carry the tail and the lookahead; EOS on the last one.
        let granuleEnd = Int64(preSkip) + target
        while true {
            let last = cursor + Int64(Self.frame) >= target + Int64(preSkip)
            encodeFrame(Self.frame, eos: last, granuleEnd: last ? granuleEnd : nil)
            if last { break }
        }
    }

    /// Rotation: ends the current stream after the frames encoded so far (EOS on a packet
    /// that end trimming removes whole) and continues in `next` from granule 0. The
    /// encoder keeps running; `next` gets the same pre-skip, so its first played sample
    /// is the mix at the returned session sample, and the `preSkip` samples before it
    /// (the new decoder's warm-up) are in neither segment.
    func rotate(to next: OggStreamWriter) -> Int64 {
        endPassthrough()
        var eos = ConcealmentPackets.endOfStream(previousTOC: lastTOC)
        withUnsafeBytes(of: &eos) { writer.packet($0, granule: cursor - granuleBase, samples: 120, eos: true) }
        writer = next
        granuleBase = cursor
        return cursor
    }

    // MARK: - Steps

    /// Writes what can be decided now: a frame, a run's start, a passed-through packet,
    /// or a run's end.
    /// - Returns: false when it has to wait for more of the session.
    private func step() -> Bool {
        guard var decider = passthrough, let q = queue else {
            guard cursor + Int64(Self.frame) <= finalEdge else { return false }
            encodeFrame(Self.frame, eos: false, granuleEnd: nil)
            return true
        }
        let action = decider.next(self)
        passthrough = decider
        switch action {
        case .wait:
            return false
        case .encode(let n):
            encodeFrame(n, eos: false, granuleEnd: nil)
        case .start(let source, let p, let align, _):
            var left = align
            while left > 0 {
                let n: Int64 = left >= 960 ? 960 : left >= 480 ? 480 : left >= 240 ? 240 : 120
                encodeFrame(Int(n), eos: false, granuleEnd: nil)
                left -= n
            }
            if switches.count < 512 { switches.append(p.start) }
            pass(q, source, p)
        case .pass(let source, let p):
            pass(q, source, p)
        case .end(let at):
            resumeEncoding(at: at)
        }
        return true
    }

    /// Writes `source`'s packet `p` into the stream, where the run puts it.
    private func pass(_ q: MixPacketQueue, _ source: Int, _ p: MixPassthrough.Packet) {
        guard let (i, _) = q.find(source: source, startingIn: p.start...p.start),
              case .passthrough(_, _, let shift) = mode else { return }
        q.withPacket(i) { b in
            writer.packet(b, granule: p.end + Int64(preSkip) + shift - granuleBase, samples: p.samples, eos: false)
            if let t = b.baseAddress { lastTOC = t.load(as: UInt8.self) }
        }
        var sumSquares: Float = 0
        for k in p.start..<p.end {
            let x = ring[Int(k & Int64(mask))]
            sumSquares += x * x
        }
        strip.add(start: p.start, meanSquare: sumSquares / Float(p.samples))
        packetsPassedThrough += 1
    }

    /// Back to encoding at the session's own time (`at`, where the stream's output is):
    /// the encoder, reset, is fed the 20 ms before its new cursor (its output dropped), so
    /// that its lookahead holds the audio that comes next and its first frame continues the
    /// voice without a dip.
    private func resumeEncoding(at: Int64) {
        if switches.count < 512 { switches.append(at) }
        cursor = at + Int64(preSkip)
        encoder.reset()
        let f = Self.frame
        for i in 0..<f {
            let j = Int((cursor - Int64(f) + Int64(i)) & Int64(mask)) * channels
            for c in 0..<channels { frameBuffer[i * channels + c] = max(-1, min(1, ring[j + c])) }
        }
        _ = encoder.encode(frameBuffer, frameSamples: f, into: packet, outCapacity: Self.packetCapacity)
        // The decoder has the voice's frames, not the dropped one: the first real frame is
        // coded without prediction from it.
        encoder.setPredictionDisabled(true)
        predictionOffFrames = 1
        encoderBypassed = false
        silentRun = 0
        envelope = 0
    }

    /// Ends a run now (rotation, the end of the session).
    private func endPassthrough() {
        guard var decider = passthrough, let at = decider.stop() else { return }
        passthrough = decider
        resumeEncoding(at: at)
    }

    /// The one track heard in `[from, to)`, if exactly one is.
    func heard(from: Int64, to: Int64) -> Int? {
        guard to > from else { return nil }
        var who = Self.noTrack
        for k in (from / Int64(Self.slot))...((to - 1) / Int64(Self.slot)) {
            let v = slots[Int(k & Int64(slotMask))]
            if v == Self.noTrack { continue }
            if v == Self.several || (who != Self.noTrack && v != who) { return nil }
            who = v
        }
        return who == Self.noTrack ? nil : Int(who)
    }

    func otherHeard(than source: Int?, from: Int64, to: Int64) -> Bool {
        guard to > from else { return false }
        let id = source.map { Int32(truncatingIfNeeded: $0) } ?? Self.noTrack
        for k in (from / Int64(Self.slot))...((to - 1) / Int64(Self.slot)) {
            let v = slots[Int(k & Int64(slotMask))]
            if v != Self.noTrack && v != id { return true }
        }
        return false
    }

    func packet(of source: Int, startingIn range: ClosedRange<Int64>) -> MixPassthrough.Packet? {
        queue?.find(source: source, startingIn: range).map { MixPassthrough.Packet(start: $0.entry.start, samples: Int($0.entry.samples)) }
    }

    func startsAfresh(_ p: MixPassthrough.Packet, of source: Int, align: Int64) -> Bool {
        guard let q = queue, let (i, _) = q.find(source: source, startingIn: p.start...p.start),
              let toc = q.withPacket(i, { $0.first }) else { return false }
        // Alignment frames and concealment packets are CELT; so is every encoded frame.
        return toc >> 3 < 16 && (align > 0 || lastTOC >> 3 >= 16)
    }

    func unlimited(from: Int64, to: Int64) -> Bool {
        guard envelope <= threshold else { return false }
        for p in from..<to where abs(ring[Int(p & Int64(mask))]) > threshold { return false }
        return true
    }

    /// Clears the ring and the slots well behind the output (the 20 ms before it stay
    /// for the end of a passed-through run), and the queue's old packets.
    private func recycle() {
        let upTo = outPosition - 2048
        guard upTo > recycled else { return }
        var p = recycled
        while p < upTo {
            let j = Int(p & Int64(mask))
            let n = Int(min(upTo - p, Int64(ringFrames - j)))
            (ring + j * channels).update(repeating: 0, count: n * channels)
            p += Int64(n)
        }
        while (slotsCleared + 1) * Int64(Self.slot) <= upTo {
            slots[Int(slotsCleared & Int64(slotMask))] = Self.noTrack
            slotsCleared += 1
        }
        recycled = upTo
        queue?.discard(endingBefore: upTo)
    }

    /// True when the ring holds only zeros (±0) for the `f` samples at `cursor`.
    private func frameIsZero(_ f: Int) -> Bool {
        let start = Int(cursor & Int64(mask))
        let first = min(f, ringFrames - start)
        var bits: UInt32 = 0
        for k in (start * channels)..<((start + first) * channels) { bits |= ring[k].bitPattern & 0x7FFF_FFFF }
        for k in 0..<((f - first) * channels) { bits |= ring[k].bitPattern & 0x7FFF_FFFF }
        return bits == 0
    }

    private func encodeFrame(_ f: Int, eos: Bool, granuleEnd: Int64?) {
        var limited = false
        var peak: Float = 0
        var sumSquares: Float = 0
        if envelope == 0, frameIsZero(f) {
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
        if predictionOffFrames > 0 {
            predictionOffFrames -= 1
            if predictionOffFrames == 0 { encoder.setPredictionDisabled(false) }
        }
        // Granule = decoded samples so far, pre-skip included (RFC 7845 §4).
        let granule = (granuleEnd ?? cursor) - granuleBase
        writer.packet(UnsafeRawBufferPointer(start: packet, count: n), granule: granule, samples: f, eos: eos)
    }
}

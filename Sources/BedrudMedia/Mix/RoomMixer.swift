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
/// track is heard above −50 dBFS, and its packets reach the mix in one unbroken run, those
/// packets are written into `room.opus` as they are (RFC 7845 lets a mono stream carry any
/// Opus packet; a decoder mixes stereo ones down). Tracks below the gate (comfort noise)
/// are left out of the mix meanwhile. A stream's packets all last multiples of 2.5 ms, so
/// to reach the speaker's packet grid the mixer encodes up to 2.5 ms more or less: the
/// passed-through stretch sits up to 1.25 ms off its true time. Where the run ends, the
/// encoder is reset, fed the last 20 ms (its output dropped) and takes over at the
/// true time again, skipping or repeating that offset. libopus decoders cross-fade the
/// change of coding mode at both ends. Measured in docs/BENCHMARKS.md (*One voice passes
/// through*).
/// Thread contract: owned by the media thread.
final class RoomMixer {
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
    private var finalEdge: Int64 = 0
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
    /// Packets of one voice written as they are, and how often a run of them began.
    private(set) var packetsPassedThrough = 0
    private(set) var passthroughRuns = 0
    /// Where the first 256 runs began and ended (session samples), for the tests and the
    /// benchmark's switch measurement.
    private(set) var switches: [Int64] = []
    static let silenceWarmupFrames = 5
    private var silentRun = 0
    private var encoderBypassed = false
    private var lastTOC: UInt8 = 0xF8  // CELT FB 20 ms mono until the first packet
    /// The level of every frame written, for the report (``LevelStrip``).
    private(set) var strip = LevelStrip()
    /// The packets that may be passed through; nil: always encode.
    let queue: MixPacketQueue?

    /// With the passthrough on, the mix waits for this much more of the session to be final
    /// (80 ms), to see who speaks next: a run begins on the new voice's quiet packets before
    /// it speaks, so the decoder holds that voice's history (a coder's state carried over
    /// from another voice clicks).
    private var lookahead: Int64 { queue == nil ? 0 : 4 * Int64(Self.frame) }

    enum Mode: Equatable {
        case encoding
        /// Writing `source`'s packets; the next one starts at session sample `next`; the
        /// stream runs `shift` samples ahead of the session meanwhile (|shift| ≤ 60).
        case passthrough(source: Int, next: Int64, shift: Int64)
    }
    private(set) var mode = Mode.encoding

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
        switches.reserveCapacity(512)
    }

    deinit {
        ring.deallocate()
        slots.deallocate()
        frameBuffer.deallocate()
        packet.deallocate()
    }

    var preSkip: Int { encoder.lookahead }

    /// The session sample the stream's output has reached.
    private var outPosition: Int64 {
        switch mode {
        case .encoding: return cursor - Int64(preSkip)
        case .passthrough(_, let next, _): return next
        }
    }

    /// Audio before this is final: later additions are late.
    private var acceptFrom: Int64 {
        switch mode {
        case .encoding: return cursor
        case .passthrough(_, let next, _): return next
        }
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

    /// Writes what can be decided now: a frame, or a passed-through packet.
    /// - Returns: false when it has to wait for more of the session.
    private func step() -> Bool {
        switch mode {
        case .encoding:
            switch startPassthrough() {
            case .started: return true
            case .wait: return false
            case .no: break
            }
            guard cursor + Int64(Self.frame) + lookahead <= finalEdge else { return false }
            encodeFrame(Self.frame, eos: false, granuleEnd: nil)
            return true
        case .passthrough(let source, let next, let shift):
            guard let q = queue else { return false }
            // Another voice alone ahead while this one pauses: hand over now, on the new
            // voice's quiet packets (see `startPassthrough`).
            guard next + lookahead <= finalEdge else { return false }
            if let other = heard(from: next, to: next + lookahead), other != source {
                endPassthrough()
                return true
            }
            if let (i, e) = q.find(source: source, startingIn: next...next) {
                let end = next + Int64(e.samples)
                guard end + lookahead <= finalEdge else { return false }
                if let meanSquare = passable(source, from: next, to: end) {
                    pass(q, i, e, shift: shift, meanSquare: meanSquare)
                    mode = .passthrough(source: source, next: end, shift: shift)
                    return true
                }
            } else if next + Int64(Self.frame) > finalEdge {
                return false  // the packet may still come
            }
            endPassthrough()
            return true
        }
    }

    /// While encoding: when one track alone is heard from the output position on and its
    /// packet starts within the next frame, encodes up to that packet (2.5 ms steps) and
    /// passes the packet through. Waits while that packet is not final yet.
    private enum Start { case started, wait, no }

    private func startPassthrough() -> Start {
        guard let q = queue else { return .no }
        let o = outPosition
        let f = Int64(Self.frame), half = Int64(Self.slot / 2)
        // The one voice heard from here through the lookahead.
        guard o + lookahead <= finalEdge, let source = heard(from: o, to: o + lookahead),
              let (i, e) = q.find(source: source, startingIn: (o - half)...(o + f))
        else { return .no }
        let end = e.start + Int64(e.samples)
        let m = max(0, (e.start - o + half) / Int64(Self.slot) * Int64(Self.slot))
        if end + lookahead > finalEdge || cursor + m > finalEdge { return .wait }
        // The run begins on a quiet packet, so the decoder learns the voice before it is heard.
        guard heard(from: e.start, to: end) == nil, let meanSquare = passable(source, from: e.start, to: end) else { return .no }
        var left = m
        while left > 0 {
            let n: Int64 = left >= 960 ? 960 : left >= 480 ? 480 : left >= 240 ? 240 : 120
            encodeFrame(Int(n), eos: false, granuleEnd: nil)
            left -= n
        }
        let shift = outPosition - e.start
        passthroughRuns += 1
        if switches.count < 512 { switches.append(e.start) }
        pass(q, i, e, shift: shift, meanSquare: meanSquare)
        mode = .passthrough(source: source, next: end, shift: shift)
        return .started
    }

    /// Writes packet `i` of the queue into the stream at `e.start + shift`.
    private func pass(_ q: MixPacketQueue, _ i: Int, _ e: MixPacketQueue.Entry, shift: Int64, meanSquare: Float) {
        let end = e.start + Int64(e.samples)
        q.withPacket(i) { p in
            writer.packet(p, granule: end + Int64(preSkip) + shift - granuleBase, samples: Int(e.samples), eos: false)
            if let b = p.baseAddress { lastTOC = b.load(as: UInt8.self) }
        }
        strip.add(start: e.start, meanSquare: meanSquare)
        packetsPassedThrough += 1
    }

    /// Back to encoding at the session's own time: the encoder, reset, is fed the 20 ms
    /// before its new cursor (its output dropped), so that its lookahead holds the audio
    /// that comes next and its first frame continues the voice without a dip.
    private func endPassthrough() {
        guard case .passthrough(_, let next, let shift) = mode else { return }
        if switches.count < 512 { switches.append(next) }
        cursor = next + Int64(preSkip) + shift
        mode = .encoding
        encoder.reset()
        let f = Self.frame
        for i in 0..<f {
            let j = Int((cursor - Int64(f) + Int64(i)) & Int64(mask)) * channels
            for c in 0..<channels { frameBuffer[i * channels + c] = max(-1, min(1, ring[j + c])) }
        }
        _ = encoder.encode(frameBuffer, frameSamples: f, into: packet, outCapacity: Self.packetCapacity)
        encoderBypassed = false
        silentRun = 0
        envelope = 0
    }

    /// The one track heard in `[from, to)`, if exactly one is.
    private func heard(from: Int64, to: Int64) -> Int? {
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

    /// The mean square of `[from, to)` when `source`'s packet may stand for it there: no
    /// other track heard (the source itself may pause), and nothing the limiter would touch.
    private func passable(_ source: Int, from: Int64, to: Int64) -> Float? {
        guard envelope <= threshold else { return nil }
        let id = Int32(truncatingIfNeeded: source)
        for k in (from / Int64(Self.slot))...((to - 1) / Int64(Self.slot)) {
            let v = slots[Int(k & Int64(slotMask))]
            if v != Self.noTrack && v != id { return nil }
        }
        var peak: Float = 0, sumSquares: Float = 0
        for p in from..<to {
            let x = ring[Int(p & Int64(mask))]
            sumSquares += x * x
            peak = max(peak, abs(x))
        }
        guard peak <= threshold else { return nil }
        return sumSquares / Float(to - from)
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
        // Granule = decoded samples so far, pre-skip included (RFC 7845 §4).
        let granule = (granuleEnd ?? cursor) - granuleBase
        writer.packet(UnsafeRawBufferPointer(start: packet, count: n), granule: granule, samples: f, eos: eos)
    }
}

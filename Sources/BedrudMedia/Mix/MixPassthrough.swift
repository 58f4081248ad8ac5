/// What a mono mix writes next while it may pass a lone voice through (``RoomMixer``): an
/// encoded frame, the start of a run of one voice's own packets, the next packet of that
/// run, the end of the run, or nothing yet. Pure: it holds only the run's state, asks a
/// ``View`` of the mixer what is heard and which packets are there, and never touches audio.
///
/// The rules:
/// - **Start** while encoding, when exactly one voice is heard from the output position
///   through the `lookahead` (80 ms), that voice has a packet starting within the next
///   frame (or up to 1.25 ms before it), the packet itself is quiet (the decoder learns the
///   voice on its quiet packets before it is heard: a coder's state carried over from
///   another voice clicks), nothing in it would be limited, and the decoder meets it
///   afresh (a voice-coded packet after the mix's CELT: libopus resets its coder state at
///   that change of mode; a CELT packet after CELT would be decoded with energies
///   predicted from the mix's frames, a burst measured at 0.03 RMS). Encoded frames of 2.5–20 ms
///   fill up to the packet (`align`, rounded to 2.5 ms); `shift` is what the rounding leaves
///   (0 when the track clocks put packets on the mix's grid).
/// - **Pass** the run's next packet while it starts exactly where the run is, no other
///   voice is heard in it, nothing in it would be limited, and the next `lookahead` holds
///   no other voice alone (a hand-over is better made on the new voice's quiet packets).
/// - **End** the run otherwise (another voice, a missing packet, a loud frame).
/// - **Wait** while what a decision needs is not final yet: the packet and the lookahead
///   after it, or the encoder's input for the alignment.
struct MixPassthrough {
    enum Mode: Equatable {
        case encoding
        /// Writing `source`'s packets; the next one starts at session sample `next`; the
        /// stream runs `shift` samples ahead of the session meanwhile (|shift| ≤ 60).
        case passthrough(source: Int, next: Int64, shift: Int64)
    }

    struct Packet: Equatable {
        var start: Int64
        var samples: Int
        var end: Int64 { start + Int64(samples) }
    }

    /// What the decision asks of the mixer.
    protocol View {
        /// Everything before this session sample is final.
        var finalEdge: Int64 { get }
        /// The next session sample the encoder would take in.
        var cursor: Int64 { get }
        /// The encoder's delay: the stream's output stands this far behind the cursor.
        var encoderDelay: Int64 { get }
        /// The one voice heard in `[from, to)`; nil when nobody or several are.
        func heard(from: Int64, to: Int64) -> Int?
        /// Whether any voice other than `source` (any voice at all when nil) is heard.
        func otherHeard(than source: Int?, from: Int64, to: Int64) -> Bool
        /// `source`'s first packet starting in `range`.
        func packet(of source: Int, startingIn range: ClosedRange<Int64>) -> Packet?
        /// True when the limiter would change nothing in `[from, to)`.
        func unlimited(from: Int64, to: Int64) -> Bool
        /// True when a decoder reaching `p` after `align` more encoded samples starts the
        /// voice afresh: `p` is voice-coded (SILK or hybrid) and the packet before it is
        /// the mix's own CELT, so the decoder resets its coder state at the change of mode
        /// instead of predicting the voice's first frame from another stream's.
        func startsAfresh(_ p: Packet, of source: Int, align: Int64) -> Bool
    }

    enum Action: Equatable {
        /// Encode one frame of `samples` from the cursor.
        case encode(samples: Int)
        /// Encode `align` samples (frames of 20, 10, 5 and 2.5 ms), then write `packet` of
        /// `source`: the run begins.
        case start(source: Int, packet: Packet, align: Int64, shift: Int64)
        /// Write the run's next packet.
        case pass(source: Int, packet: Packet)
        /// Back to encoding: the encoder's output resumes at session sample `at` (where the
        /// stream is, in the session's own time).
        case end(at: Int64)
        case wait
    }

    static let frame: Int64 = 960
    static let slot: Int64 = 120
    let lookahead: Int64
    private(set) var mode = Mode.encoding

    init(lookahead: Int64 = 4 * 960) { self.lookahead = lookahead }

    /// The session sample the stream's output has reached.
    func outPosition(cursor: Int64, preSkip: Int64) -> Int64 {
        if case .passthrough(_, let next, _) = mode { return next }
        return cursor - preSkip
    }

    mutating func next(_ v: some View) -> Action {
        switch mode {
        case .encoding:
            if let a = start(v) { return a }
            return v.cursor + Self.frame + lookahead <= v.finalEdge ? .encode(samples: Int(Self.frame)) : .wait
        case .passthrough(let source, let next, let shift):
            guard next + lookahead <= v.finalEdge else { return .wait }
            if let other = v.heard(from: next, to: next + lookahead), other != source { return end(next, shift) }
            guard let p = v.packet(of: source, startingIn: next...next) else { return end(next, shift) }
            guard p.end + lookahead <= v.finalEdge else { return .wait }
            guard !v.otherHeard(than: source, from: next, to: p.end), v.unlimited(from: next, to: p.end) else { return end(next, shift) }
            mode = .passthrough(source: source, next: p.end, shift: shift)
            return .pass(source: source, packet: p)
        }
    }

    /// The run's end: the encoder takes over where the stream is, at the session's time.
    private mutating func end(_ next: Int64, _ shift: Int64) -> Action {
        mode = .encoding
        return .end(at: next + shift)
    }

    /// Called by the mixer when it ends a run itself (rotation, the session's end).
    mutating func stop() -> Int64? {
        guard case .passthrough(_, let next, let shift) = mode else { return nil }
        mode = .encoding
        return next + shift
    }

    /// `.start`, `.wait`, or nil when no run can begin here.
    private mutating func start(_ v: some View) -> Action? {
        let o = v.cursor - v.encoderDelay
        let half = Self.slot / 2
        guard o + lookahead <= v.finalEdge, let source = v.heard(from: o, to: o + lookahead),
              let p = v.packet(of: source, startingIn: (o - half)...(o + Self.frame))
        else { return nil }
        let m = max(0, (p.start - o + half) / Self.slot * Self.slot)
        if p.end + lookahead > v.finalEdge || v.cursor + m > v.finalEdge { return .wait }
        guard !v.otherHeard(than: nil, from: p.start, to: p.end), v.unlimited(from: p.start, to: p.end),
              v.startsAfresh(p, of: source, align: m) else { return nil }
        let shift = o + m - p.start
        mode = .passthrough(source: source, next: p.end, shift: shift)
        return .start(source: source, packet: p, align: m, shift: shift)
    }
}

import BedrudProtocol

/// Where one participant's audio lands on the session timeline, and why there is none
/// where there is none: the one owner of those facts (docs/ARCHITECTURE.md, the audio
/// pipeline's "Timeline").
///
/// In: arrivals (SSRC, sequence number, RTP timestamp, arrival time) and sender
/// reports, the packets the two reorder windows release (the file's and the live
/// path's), mutes, our own connection's loss and return, track changes, turns of the
/// media loop, rotation and the end. Out: ``TimelineAction``s — a file start, filler
/// (concealment packets) with its cause, the gap spans with their cause, each packet's
/// place (its granule in the file, its session sample for the decoder), the end of a
/// file. The ``MediaEngine`` is the shell: it owns the reorder windows, the Ogg writer,
/// the decoder and the mix, and performs the actions.
///
/// Time is in 48 kHz session samples (sample 0 = `startNanos` on the monotonic clock);
/// events carry monotonic nanoseconds. A packet's place is decided here and nowhere else:
/// the sender-report mapping (``arrive(ssrc:sequenceNumber:rtpTimestamp:arrivalNanos:)``),
/// the ``TrackClock`` anchor, and the rule that nothing is placed more than 1 s after or
/// 3 s before its arrival. A gap's cause is decided by ``gapCause(endedBy:)``, the one
/// ladder.
///
/// Pure value; nothing here allocates per packet. `handle` reports actions through a
/// non-escaping closure, which must not touch this timeline (the engine's performers only
/// write bytes and emit events).
/// Thread contract: owned by the media thread.
struct ParticipantTimeline {
    /// The settings the timeline needs from ``MediaPipelineConfig``.
    struct Settings: Equatable {
        var startNanos: UInt64
        var startHoldNanos: UInt64
        var liveFillAfterSamples: Int64
        var fileLatencySamples: Int64
        var mixLatencySamples: Int64
        var gapEventMinSamples: Int64
        var concealMaxSamples: Int64
        var alignToSession: Bool
        /// Whether the participant's audio is decoded (the live path runs).
        var decodes: Bool
        /// Where packet starts should fall on the session's 2.5 ms grid (``TrackClock``);
        /// nil: wherever their arrival puts them.
        var gridPhase: Int64? = nil
    }

    /// Pre-skip of passthrough files: the sender's encoder delay (libopus: 312 samples).
    static let senderPreSkip: Int64 = 312

    let settings: Settings

    // MARK: The stream
    /// The SSRC of the stream being received; nil before the first packet.
    private(set) var ssrc: UInt32?
    private var sequences = RTPCounterUnwrapper.sequenceNumbers()
    private var timestamps = RTPCounterUnwrapper.timestamps()
    /// The sender-report mapping packets are placed by.
    private(set) var senderReport: SenderReportMapping?
    /// A report that disagreed with `senderReport`, kept until the next one: if that one
    /// agrees with it, the mapping really changed; if not, it was an outlier.
    private var unconfirmedReport: SenderReportMapping?
    /// Reports that disagreed with the mapping in use when they came (by more than
    /// ``SenderReportMapping/toleranceNanos``).
    private(set) var senderReportsHeld = 0
    /// Monotonic arrival minus sender-report NTP time, the minimum over this stream's
    /// SR-mapped packets (the fastest one's). The participant's own: LiveKit v1.10.1 passes
    /// each publisher's report clock through to subscribers (`pkg/sfu/downtrack.go:1771`
    /// passes `!DisableSenderReportPassThrough`, which nothing sets; the NTP time is then the
    /// publisher's, `rtpstats_sender.go:975-981`), and two devices' clocks can be seconds apart.
    private(set) var ntpOffset: Int64?
    private(set) var clock: TrackClock
    private(set) var everReceived = false
    /// When the participant's first track was added (monotonic ns).
    let addedAt: UInt64

    // MARK: The file
    /// Session sample of the current segment's first sample; nil before the file starts.
    private(set) var fileStart: Int64?
    /// Session sample where the file currently ends.
    private(set) var writtenEnd: Int64 = 0
    /// The number of the segment being written (1 = the first file), its channel count.
    private(set) var segment = 1
    private(set) var stereo = false
    /// Played samples of the segments already finished (rotation).
    private(set) var earlierSegmentsSamples: Int64 = 0
    private(set) var finished = false
    /// Played duration of the whole file, once it ended.
    private(set) var finalDurationSamples: Int64?

    // MARK: Why there is no audio
    private(set) var muted = false
    private var mutedSinceLastPacket = false
    /// A cause learned before the gap it explains ends (a reconnect, a new stream).
    private var pendingCause: GapCause?
    /// Session sample where our connection was lost while reconnecting (the last moment
    /// the participant was known to be in the room); nil while in contact.
    private(set) var contactLostAt: Int64?
    /// When our connection was lost (monotonic ns), until a packet that arrived after it is
    /// placed: one the reorder window still held from before says nothing about the outage.
    private var contactLostAtNanos: UInt64?
    private var lossSinceLastPacket = false

    // MARK: Gaps
    private var openGap: (start: Int64, end: Int64, cause: GapCause)?
    /// Gap time per cause in samples; `gapMillis` is derived from it, never summed in ms.
    private var gapSamples: [GapCause: Int64] = [:]
    private(set) var gapMillis: [GapCause: Int64] = [:]
    /// Loss short enough for a player's concealment to bridge, in ms.
    private(set) var concealedMillis: Int64 = 0

    // MARK: The live path
    /// Session sample up to which the live path has decoded (nil before its first packet).
    private(set) var liveEnd: Int64?
    /// Sequence numbers the live window gave up since its last packet (FEC recovers one).
    private var liveLostBefore: Int64 = 0
    private var liveLossSinceLastPacket = false

    init(settings: Settings, addedAt: UInt64) {
        self.settings = settings
        self.addedAt = addedAt
        clock = TrackClock(settleNanos: settings.startHoldNanos, gridPhase: settings.gridPhase)
    }

    @inline(__always)
    func sessionSample(_ nanos: UInt64) -> Int64 { SessionTime.sample(nanos, start: settings.startNanos) }

    /// Played duration of the file so far (all segments), in samples; nil before it starts.
    var fileDurationSamples: Int64? {
        if let f = finalDurationSamples { return f }
        guard let fs = fileStart else { return nil }
        return earlierSegmentsSamples + writtenEnd - fs - Self.senderPreSkip
    }

    // MARK: - Why there was no audio

    /// The one rule for a gap's cause, whatever ends it (a packet, a new stream, or
    /// nothing yet): a cause already known (a reconnect, a mute learned at a new track)
    /// wins, then a mute since the last packet, then what the end says.
    func gapCause(endedBy end: GapEnd) -> GapCause {
        if let c = pendingCause { return c }
        if muted || mutedSinceLastPacket { return .mute }
        switch end {
        case .packet(let loss): return loss ? .loss : .dtx
        case .newStream: return .reconnect
        case .nothing: return .noPackets
        }
    }

    // MARK: - Arrivals

    /// True when a packet of `ssrc` begins a new stream: the shell drains and resets both
    /// reorder windows first (what they release still belongs to the old stream).
    func beginsStream(_ ssrc: UInt32) -> Bool { self.ssrc != ssrc }

    /// What an arrival gives the shell: the numbers unwrapped once for both windows, and
    /// the start hold when it is the first packet ever.
    struct Arrival: Equatable {
        var sequence: Int64
        var timestamp: Int64
        /// Set on the first packet: neither window releases anything before it.
        var holdUntilNanos: UInt64?
    }

    /// An RTP packet arrived. Unwraps its numbers, and places its timestamp with the
    /// sender-report mapping (its NTP time through this participant's `ntpOffset`) and
    /// the track clock.
    mutating func arrive(ssrc: UInt32, sequenceNumber: UInt16, rtpTimestamp: UInt32, arrivalNanos: UInt64) -> Arrival {
        if self.ssrc != ssrc {
            if self.ssrc != nil {
                if pendingCause == nil { pendingCause = gapCause(endedBy: .newStream) }
                clock.startSegment()
                senderReport = nil
                unconfirmedReport = nil
                ntpOffset = nil
            }
            sequences.reset()
            timestamps.reset()
            self.ssrc = ssrc
        }
        var hold: UInt64?
        if !everReceived {
            everReceived = true
            hold = arrivalNanos &+ settings.startHoldNanos
        }
        let seq = sequences.unwrap(UInt32(sequenceNumber))
        let ts = timestamps.unwrap(rtpTimestamp)
        var placeNanos = arrivalNanos
        if let sr = senderReport {
            let ntp = sr.ntpNanos(of: rtpTimestamp)
            let d = Int64(bitPattern: arrivalNanos) &- ntp
            if ntpOffset.map({ d < $0 }) ?? true { ntpOffset = d }
            if let o = ntpOffset {
                // A report that would move the packet more than 5 s from its arrival is
                // nonsense (a bad SR, a sender clock step): arrival time wins.
                let candidate = ntp &+ o
                if abs(candidate &- Int64(bitPattern: arrivalNanos)) <= 5_000_000_000 { placeNanos = UInt64(bitPattern: candidate) }
            }
        }
        clock.observe(timestamp: ts, sessionSample: sessionSample(placeNanos), arrivalNanos: arrivalNanos)
        return Arrival(sequence: seq, timestamp: ts, holdUntilNanos: hold)
    }

    /// An RTCP sender report for `ssrc` (the current stream's, or any before the first packet).
    ///
    /// The first report of a stream is taken as it is. A later one that disagrees with the
    /// mapping in use is held until the next report: one bad report (an SFU that paired a
    /// stale timestamp with the time it sent it) would otherwise move every following
    /// packet by its error, and packets placed before what is already written are dropped.
    mutating func senderReport(ssrc: UInt32, rtpTimestamp: UInt32, ntpTimestamp: UInt64) {
        guard ssrc == self.ssrc || self.ssrc == nil else { return }
        let report = SenderReportMapping(rtp: rtpTimestamp, ntpTimestamp: ntpTimestamp)
        if let current = senderReport, !current.agrees(with: report) {
            if let held = unconfirmedReport, held.agrees(with: report) {
                // Two reports in a row say the mapping moved: the offset is learned anew
                // (the old one would place every packet early by as much as it moved back).
                senderReport = report
                unconfirmedReport = nil
                ntpOffset = nil
            } else {
                senderReportsHeld += 1
                unconfirmedReport = report
            }
            return
        }
        senderReport = report
        unconfirmedReport = nil
    }

    // MARK: - Events

    mutating func handle(_ event: TimelineEvent, _ act: (TimelineAction) -> Void) {
        switch event {
        case .filePacket(let timestamp, let arrivalNanos, let samples, let stereo):
            placeFilePacket(timestamp: timestamp, arrivalNanos: arrivalNanos, samples: samples, stereo: stereo, act)
        case .fileLost:
            lossSinceLastPacket = true
        case .livePacket(let timestamp, let arrivalNanos, let samples):
            placeLivePacket(timestamp: timestamp, arrivalNanos: arrivalNanos, samples: samples, act)
        case .liveLost(let count):
            liveLossSinceLastPacket = true
            liveLostBefore += Int64(count)
        case .tick(let now, let fileWindowEmpty, let liveWindowEmpty):
            tick(now: now, fileWindowEmpty: fileWindowEmpty, liveWindowEmpty: liveWindowEmpty, act)
        case .setMuted(let m):
            muted = m
            if m { mutedSinceLastPacket = true }
        case .trackReplaced:
            if everReceived && pendingCause == nil { pendingCause = gapCause(endedBy: .newStream) }
        case .connectionLost(let now):
            pendingCause = .reconnect
            if contactLostAt == nil {  // a new outage, timed from its own start
                contactLostAt = max(writtenEnd, sessionSample(now))
                contactLostAtNanos = now
            }
        case .contactRestored(let now, let fileWindowEmpty, let liveWindowEmpty):
            guard contactLostAt != nil else { return }
            contactLostAt = nil
            // The outage so far is the reconnect gap. It stays open until their media is
            // back (the first packet ends it, as one gap), unless they are muted: then
            // what follows is the mute's.
            let edge = sessionSample(now) - settings.mixLatencySamples
            if fileStart != nil, fileWindowEmpty, edge - writtenEnd >= 120 {
                fill(samples: edge - writtenEnd, cause: .reconnect, roundDown: true, act)
            }
            if liveWindowEmpty { liveSilence(upTo: edge, act) }
            if muted {
                closeGap(act)
                pendingCause = .mute
            }
        case .end(let at):
            end(at: at, act)
        case .rotate:
            rotate(act)
        case .writeGap(let startGranule, let endGranule):
            guard endGranule > startGranule else { return }
            let samples = endGranule - startGranule
            gapSamples[.writeError, default: 0] += samples
            gapMillis[.writeError] = SessionTime.millis(gapSamples[.writeError, default: 0])
            act(.gap(start: (fileStart ?? 0) + startGranule, samples: samples, cause: .writeError))
        }
    }


    // MARK: - Placing a packet

    /// Nothing is placed more than a second after it arrived, or more than three seconds
    /// before (a backlog burst is younger than that): a timestamp that says otherwise is
    /// wrong, and believing it would fill hours of gap.
    @inline(__always)
    private static func believable(_ pos: Int64, arrived: Int64) -> Bool {
        pos <= arrived + 48000 && pos >= arrived - 3 * 48000
    }

    private mutating func placeFilePacket(timestamp: Int64, arrivalNanos: UInt64, samples: Int?, stereo: Bool, _ act: (TimelineAction) -> Void) {
        guard let samples, var pos = clock.position(of: timestamp) else {
            lossSinceLastPacket = true
            act(.dropCorrupt)
            return
        }
        let arrived = sessionSample(arrivalNanos)
        if !Self.believable(pos, arrived: arrived) {
            clock.force(timestamp: timestamp, sessionSample: arrived)
            pos = arrived
        }
        if fileStart == nil { startFile(at: pos, stereo: stereo, act) }
        let gap = pos - writtenEnd
        if gap >= 60 {
            fill(samples: gap, cause: gapCause(endedBy: .packet(loss: lossSinceLastPacket)), act)
        } else if gap < -Int64(samples / 2) {
            act(.dropOverlap)
            return
        }
        closeGap(act)
        // A packet that arrived before our connection was lost (the window held it) is
        // written where it belongs and leaves the outage's cause and state as they are.
        if contactLostAtNanos.map({ arrivalNanos >= $0 }) ?? true {
            pendingCause = nil
            contactLostAt = nil
            contactLostAtNanos = nil
        }
        lossSinceLastPacket = false
        mutedSinceLastPacket = muted
        writtenEnd += Int64(samples)
        act(.write(granule: writtenEnd - (fileStart ?? 0), samples: samples))
    }

    /// The live path: a hole before the packet is concealed (loss short enough, FEC when
    /// exactly one packet is missing) or silence; then the packet is decoded at its place.
    private mutating func placeLivePacket(timestamp: Int64, arrivalNanos: UInt64, samples: Int?, _ act: (TimelineAction) -> Void) {
        let lostBefore = liveLostBefore
        liveLostBefore = 0
        guard settings.decodes, let samples, var pos = clock.position(of: timestamp) else {
            liveLossSinceLastPacket = true
            return
        }
        // As the file's rule, without re-anchoring (the file's packet does that).
        let arrived = sessionSample(arrivalNanos)
        if !Self.believable(pos, arrived: arrived) { pos = arrived }
        var at = liveEnd ?? pos
        let gap = pos - at
        if gap >= 60 {
            let n = (gap + 60) / 120 * 120
            let loss = gapCause(endedBy: .packet(loss: liveLossSinceLastPacket)) == .loss
            if loss && n <= settings.concealMaxSamples {
                act(.conceal(samples: Int(n), at: at, fec: lostBefore == 1))
            } else {
                act(.liveSilence(samples: n))
            }
            at += n
        } else if gap < -Int64(samples / 2) {
            return
        }
        liveLossSinceLastPacket = false
        liveEnd = at + Int64(samples)
        act(.decode(at: at))
    }

    // MARK: - The file

    mutating func startFile(at audioStart: Int64, stereo: Bool, _ act: (TimelineAction) -> Void) {
        // Aligned, the file's sample 0 is the session's; the stretch before the first
        // audio is padding. A later segment (rotation) starts where the previous one
        // ended, never padded.
        let pos = settings.alignToSession && segment == 1 ? 0 : audioStart
        fileStart = pos
        writtenEnd = pos
        self.stereo = stereo
        act(.startFile(at: pos, audioStart: audioStart, stereo: stereo, segment: segment))
        if audioStart > pos {
            // Concealment packets decode to silence on a decoder that has heard nothing
            // yet (RFC 7845 §4.1): not a gap, no gap time.
            let n = (audioStart - writtenEnd + 60) / 120 * 120
            if n > 0 {
                act(.fill(samples: Int(n), fromGranule: 0, cause: nil))
                writtenEnd += n
            }
        }
    }

    /// Writes `samples` (rounded to 2.5 ms) of concealment packets at the end of the
    /// file and accounts them to `cause`.
    mutating func fill(samples: Int64, cause: GapCause, roundDown: Bool = false, _ act: (TimelineAction) -> Void) {
        let n = (samples + (roundDown ? 0 : 60)) / 120 * 120
        guard n > 0, let fs = fileStart else { return }
        let start = writtenEnd
        act(.fill(samples: Int(n), fromGranule: start - fs, cause: cause))
        writtenEnd += n
        // Gap time is counted in samples and only shown in ms: adding each fill's ms
        // rounded down and then moving the whole stretch's ms to another cause took away
        // more than was added, which left `noPackets` at -1 ms.
        gapSamples[cause, default: 0] += n
        if let o = openGap, o.end == start, o.cause == cause || o.cause == .noPackets {
            // A stretch filled while nothing was known gets the cause learned at its end.
            if o.cause != cause {
                let known = min(o.end - o.start, gapSamples[.noPackets, default: 0])
                gapSamples[.noPackets, default: 0] -= known
                gapSamples[cause, default: 0] += known
                gapMillis[.noPackets] = SessionTime.millis(gapSamples[.noPackets, default: 0])
            }
            openGap = (o.start, writtenEnd, cause)
        } else {
            closeGap(act)
            openGap = (start, writtenEnd, cause)
        }
        gapMillis[cause] = SessionTime.millis(gapSamples[cause, default: 0])
        // A loss short enough for a player's concealment (PLC) to bridge.
        if cause == .loss && n <= settings.concealMaxSamples { concealedMillis += n / 48 }
    }

    private mutating func closeGap(_ act: (TimelineAction) -> Void) {
        guard let g = openGap else { return }
        openGap = nil
        if g.end - g.start >= settings.gapEventMinSamples {
            act(.gap(start: g.start, samples: g.end - g.start, cause: g.cause))
        }
    }

    /// Moves the live path up to `edge` (rounded to 2.5 ms) with silence, once it has begun.
    private mutating func liveSilence(upTo edge: Int64, _ act: (TimelineAction) -> Void) {
        guard let end = liveEnd, edge - end >= 120 else { return }
        let n = (edge - end) / 120 * 120
        if settings.decodes { act(.liveSilence(samples: n)) }
        liveEnd = end + n
    }

    /// A turn of the media loop: keeps a silent participant's file growing up to the
    /// file's edge, and the live path up to the mix's. A participant who sends nothing at
    /// all (joined muted) gets a file from when their track was added.
    private mutating func tick(now: UInt64, fileWindowEmpty: Bool, liveWindowEmpty: Bool, _ act: (TimelineAction) -> Void) {
        if fileStart == nil && !everReceived
            && now >= addedAt &+ settings.startHoldNanos &+ UInt64(settings.liveFillAfterSamples / 48) * 1_000_000
        {
            startFile(at: sessionSample(addedAt), stereo: false, act)
        }
        // While we are cut off nobody knows whether they are still here: no filler.
        guard contactLostAt == nil else { return }
        if liveWindowEmpty, let le = liveEnd {
            let liveEdge = sessionSample(now) - settings.mixLatencySamples
            if liveEdge - le >= settings.liveFillAfterSamples { liveSilence(upTo: liveEdge, act) }
        }
        // The file is filled only behind its own (longer) window: a retransmission on its
        // way still finds its place.
        guard fileStart != nil, fileWindowEmpty else { return }
        let edge = sessionSample(now) - settings.fileLatencySamples
        guard edge - writtenEnd >= settings.liveFillAfterSamples else { return }
        fill(samples: edge - writtenEnd, cause: gapCause(endedBy: .nothing), act)
    }

    /// When a participant who never sent a packet gets a file anyway (nil once it has one).
    var fileDueNanos: UInt64? {
        guard fileStart == nil && !everReceived else { return nil }
        return addedAt &+ settings.startHoldNanos &+ UInt64(settings.liveFillAfterSamples / 48) * 1_000_000
    }

    private mutating func end(at requestedEnd: Int64, _ act: (TimelineAction) -> Void) {
        guard !finished else { return }
        finished = true
        // Ended during an outage, or found gone after a rejoin: the file ends where they
        // were last known to be here, not at the end of the outage.
        let end = contactLostAt.map { min(requestedEnd, max($0, writtenEnd)) } ?? requestedEnd
        if let fs = fileStart {
            // Audio captured up to `end` leaves the decoder `senderPreSkip` samples later.
            let target = end + Self.senderPreSkip
            if target - writtenEnd >= 120 {
                fill(samples: target - writtenEnd, cause: gapCause(endedBy: .nothing), roundDown: true, act)
            }
            closeGap(act)
            // EOS rides on a 2.5 ms concealment packet whose overhang end trimming
            // (RFC 7845 §4.4) removes, so the file ends exactly where the participant did.
            let finalGranule = max(target, writtenEnd) - fs
            writtenEnd = fs + finalGranule
            let playable = finalGranule - Self.senderPreSkip
            finalDurationSamples = earlierSegmentsSamples + playable
            act(.endFile(granule: finalGranule, playable: playable, start: fs))
        }
        liveSilence(upTo: end, act)
    }

    /// Ends the current segment where it is written up to and starts the next there.
    /// A segment shorter than a frame past its pre-skip is not split off.
    private mutating func rotate(_ act: (TimelineAction) -> Void) {
        guard !finished, let fs = fileStart else { return }
        let granule = writtenEnd - fs
        let playable = granule - Self.senderPreSkip
        guard playable >= 960 else { return }
        act(.endFile(granule: granule, playable: playable, start: fs))
        earlierSegmentsSamples += playable
        segment += 1
        act(.rotated(segment: segment, at: writtenEnd))
        startFile(at: writtenEnd, stereo: stereo, act)
    }
}

/// What ends a stretch of a participant's timeline without audio (see
/// ``ParticipantTimeline/gapCause(endedBy:)``).
enum GapEnd: Equatable {
    /// A packet; `loss` when sequence numbers were given up (or a packet was corrupt)
    /// since the one before it. Without loss, the sender paused (DTX).
    case packet(loss: Bool)
    /// A new stream begins (another track, a new SSRC): the old one ended.
    case newStream
    /// No packet (yet): the file grows with filler, or ends.
    case nothing
}

/// An input of ``ParticipantTimeline/handle(_:_:)`` (arrivals and sender reports have
/// their own methods, which return values).
enum TimelineEvent: Equatable {
    /// The file's window released a packet: `samples` is its duration (nil when it is not
    /// a valid Opus packet), `stereo` its channel mode.
    case filePacket(timestamp: Int64, arrivalNanos: UInt64, samples: Int?, stereo: Bool)
    /// The file's window gave up sequence numbers before its next packet.
    case fileLost
    /// The live window released a packet for the decoder.
    case livePacket(timestamp: Int64, arrivalNanos: UInt64, samples: Int?)
    /// The live window gave up `count` sequence numbers before its next packet.
    case liveLost(count: Int)
    /// A turn of the media loop at `now`, and whether each window holds nothing.
    case tick(now: UInt64, fileWindowEmpty: Bool, liveWindowEmpty: Bool)
    case setMuted(Bool)
    /// Another track of the same participant takes over (a republish, a rejoin).
    case trackReplaced
    /// Our connection is lost (reconnecting).
    case connectionLost(now: UInt64)
    /// After a reconnect: the participant is in the room.
    case contactRestored(now: UInt64, fileWindowEmpty: Bool, liveWindowEmpty: Bool)
    /// The participant left, or the session ends: the file ends at session sample `at`.
    case end(at: Int64)
    /// Rotation: the current segment ends, the next begins.
    case rotate
    /// The writer could not write granules `[startGranule, endGranule)` of the current
    /// segment (a full disk): they are a `writeError` gap.
    case writeGap(startGranule: Int64, endGranule: Int64)
}

/// What the shell does for the timeline.
enum TimelineAction: Equatable {
    /// Open segment `segment` of the file; its first sample is session sample `at`, its
    /// audio begins at `audioStart` (later when aligned to the session).
    case startFile(at: Int64, audioStart: Int64, stereo: Bool, segment: Int)
    /// Write `samples` of concealment packets (RFC 7845 §4.1) from file granule
    /// `fromGranule`: a gap of `cause`, or padding before the first audio when nil.
    case fill(samples: Int, fromGranule: Int64, cause: GapCause?)
    /// A stretch without audio of at least `gapEventMinMillis` ended: report it.
    case gap(start: Int64, samples: Int64, cause: GapCause)
    /// Write the released packet; its last sample is at file granule `granule`.
    case write(granule: Int64, samples: Int)
    /// The released packet overlaps what is written: drop it.
    case dropOverlap
    /// The released packet is not valid Opus (or has no place yet): drop it.
    case dropCorrupt
    /// End the segment that started at session sample `start`: EOS at `granule`,
    /// `playable` samples after the pre-skip.
    case endFile(granule: Int64, playable: Int64, start: Int64)
    /// Segment `segment` begins at session sample `at` (its `startFile` follows).
    case rotated(segment: Int, at: Int64)
    /// Live path: conceal `samples` of loss at session sample `at` (FEC from the packet
    /// when `fec`: exactly one packet is missing).
    case conceal(samples: Int, at: Int64, fec: Bool)
    /// Live path: `samples` without audio (the speech detector hears silence).
    case liveSilence(samples: Int64)
    /// Live path: decode the released packet at session sample `at`.
    case decode(at: Int64)
}

extension ParticipantTimeline.Settings {
    init(config: MediaPipelineConfig, startNanos: UInt64) {
        self.init(
            startNanos: startNanos, startHoldNanos: UInt64(config.startHoldMillis) * 1_000_000,
            liveFillAfterSamples: Int64(config.liveFillAfterMillis) * 48, fileLatencySamples: config.fileLatencySamples,
            mixLatencySamples: config.mixLatencySamples, gapEventMinSamples: Int64(config.gapEventMinMillis) * 48,
            concealMaxSamples: Int64(config.concealMaxMillis) * 48, alignToSession: config.alignToSession, decodes: config.decode)
        // A mono mix passes a lone voice's packets through: their decoded audio (which
        // starts `senderPreSkip` before the packet's place) must begin on the mix's packet
        // grid, which runs `lookahead` behind the session's 2.5 ms steps. (With the
        // passthrough off too, so that both mixes place every voice alike.)
        if config.decode && config.mix && config.mixChannels == 1 {
            gridPhase = ((ParticipantTimeline.senderPreSkip - Int64(config.mixCoder.lookahead)) % 120 + 120) % 120
        }
    }
}

/// One RTCP sender report's pairing of an RTP timestamp with an NTP time of the same
/// instant (RFC 3550 §6.4.1), for an Opus stream (48 kHz).
struct SenderReportMapping: Equatable {
    /// Two reports whose mappings differ by more than this disagree: far above a sender
    /// clock's drift between reports (100 ppm over 10 s is 1 ms) and the jitter of an SFU
    /// that writes reports from the arrival of its publisher's.
    static let toleranceNanos: Int64 = 100_000_000

    let rtp: UInt32
    let ntpNanos: Int64

    init(rtp: UInt32, ntpTimestamp: UInt64) {
        self.rtp = rtp
        // NTP (RFC 3550 §4): seconds since 1900 in the high word, fraction in the low.
        let sec = Int64(ntpTimestamp >> 32)
        let frac = Int64(ntpTimestamp & 0xFFFF_FFFF)
        ntpNanos = sec * 1_000_000_000 + (frac * 1_000_000_000) >> 32
    }

    /// NTP time (ns) of `timestamp` by this mapping (timestamps within ±12 h of the report's).
    func ntpNanos(of timestamp: UInt32) -> Int64 {
        ntpNanos + Int64(Int32(bitPattern: timestamp &- rtp)) * 1_000_000_000 / 48000
    }

    /// True when `other` places timestamps where this one does, within the tolerance.
    func agrees(with other: SenderReportMapping) -> Bool {
        abs(ntpNanos(of: other.rtp) - other.ntpNanos) <= Self.toleranceNanos
    }
}

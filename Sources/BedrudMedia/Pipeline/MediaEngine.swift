import BedrudProtocol
import BedrudRuntime

/// A control message for the media thread (never one per packet).
public enum MediaControl: Sendable {
    /// A participant's audio track was subscribed; its packets arrive on `ring`. A second
    /// track for a participant already present (a reconnect, a republish) continues the
    /// same file.
    case addTrack(MediaTrackSpec, PacketRing)
    /// The track was unsubscribed; the participant's file stays open (filled) until
    /// `.participantLeft` or the end.
    case removeTrack(trackSid: String)
    case setMuted(identity: String, muted: Bool)
    /// Our connection is lost (reconnecting): the next gap is attributed to the
    /// reconnect, and the file stops growing here until the participant is known to be
    /// present again (a packet, or `participantPresent`). If the session or the
    /// participant ends first, the file ends here: it is not padded through the outage.
    case participantReconnecting(identity: String)
    /// After a reconnect: the participant is in the room. The file grows again; the time
    /// since the loss stays one `reconnect` gap until their first packet (or, if they are
    /// muted, ends here and the rest is `mute`).
    case participantPresent(identity: String)
    /// The participant left: their file ends now.
    case participantLeft(identity: String)
    /// Rotation (`--split`, `--split-size`, SIGHUP): every open file ends where it is
    /// written up to and continues in a new numbered segment, a valid stream of its own.
    case rotate(RotationCause)
}

/// The single-threaded core of a recording pipeline: drains the rings, runs every stage
/// and hands pages to a ``PageConsumer``. It never reads a clock: `now` (monotonic
/// nanoseconds) is passed in, so tests and the benchmark can drive it in virtual time
/// and ``MediaPipeline`` drives it from its media thread.
///
/// Thread contract: every method is called from one thread (the media thread).
public final class MediaEngine {
    public let config: MediaPipelineConfig
    let startNanos: UInt64
    let sinks: RecordingSinkFactory
    let pages: PageConsumer
    let emit: (MediaEvent) -> Void
    var participants: [ParticipantRecorder] = []
    private var byIdentity: [String: Int] = [:]
    var mixer: RoomMixer?
    var mixWriter: OggStreamWriter?
    /// The mix's segment number and the session sample where its segment begins.
    var mixSegment = 1
    var mixSegmentStart: Int64 = 0
    /// Decode scratch: 120 ms of mono float PCM, shared by every participant.
    let pcm: UnsafeMutablePointer<Float>
    static let pcmCapacity = 5760
    private var nextStreamID = 1
    private var finished = false
    var warnLog = RateLimitedLog(Logger("media"))
    let flushSamples: Int
    /// Pre-skip of passthrough files: the sender's encoder delay. WebRTC senders use
    /// libopus, whose 48 kHz lookahead is 312 samples (6.5 ms); with it, file sample 0 is
    /// the audio captured at the first packet's RTP timestamp, and decoded audio is
    /// placed in the mix at capture time.
    static let senderPreSkip = Int(ParticipantTimeline.senderPreSkip)

    /// - Parameters:
    ///   - startNanos: monotonic time of session sample 0.
    ///   - emit: receives events; called on the media thread, must not block.
    public init(
        config: MediaPipelineConfig, startNanos: UInt64, sinks: RecordingSinkFactory, pages: PageConsumer,
        emit: @escaping (MediaEvent) -> Void
    ) {
        self.config = config
        self.startNanos = startNanos
        self.sinks = sinks
        self.pages = pages
        self.emit = emit
        warnLog = RateLimitedLog(Logger("media", room: config.logRoom))
        pcm = .allocate(capacity: Self.pcmCapacity)
        pcm.initialize(repeating: 0, count: Self.pcmCapacity)
        flushSamples = max(960, config.pageFlushMillis * 48)
        if config.decode && config.mix {
            startMix()
        }
    }

    deinit { pcm.deallocate() }

    private func startMix() {
        let ch = config.mixChannels == 2 ? 2 : 1
        let w = OggStreamWriter(
            serial: Int32(bitPattern: config.serialSeed), streamID: 0, consumer: pages, flushSamples: max(960, config.roomPageFlushMillis * 48))
        guard let m = RoomMixer(channels: ch, bitrate: config.mixBitrate, complexity: config.mixComplexity, coder: config.mixCoder,
                                passthrough: config.mixPassthrough, writer: w) else {
            emit(.warning("The mixed recording is off: libopus could not create an encoder."))
            return
        }
        m.encoder.timeCalls = config.timeCodecCalls
        do {
            pages.open(0, sink: try sinks.makeSink(for: .room))
        } catch {
            emit(.warning("The mixed recording is off: \(error)"))
            return
        }
        writeMixHeaders(w, channels: ch, preSkip: m.preSkip, at: 0)
        mixer = m
        mixWriter = w
        emit(.fileStarted(identity: "", output: .room, startOffsetMillis: 0))
    }

    /// OpusHead and OpusTags of a segment of room.opus that starts at session sample `at`.
    func writeMixHeaders(_ w: OggStreamWriter, channels: Int, preSkip: Int, at: Int64) {
        writeSegmentHeaders(w, channels: channels, preSkip: preSkip, at: at, segment: mixSegment,
                            describing: [("TITLE", config.room.isEmpty ? "room" : "\(config.room) (mixed)")])
    }

    /// OpusHead and OpusTags of any file segment that starts at session sample `at`: the
    /// room, what the file holds (`describing`), when it starts (wall clock and session
    /// offset), `extra`, and after the first segment its number. The one place a file's
    /// tags are built.
    func writeSegmentHeaders(_ w: OggStreamWriter, channels: Int, preSkip: Int, at: Int64, segment: Int,
                             describing: [(key: String, value: String)], extra: [(key: String, value: String)] = []) {
        let offsetMs = SessionTime.millis(at)
        var tags: [(key: String, value: String)] = [("ROOM", config.room)] + describing
        tags.append(("START_TIME", iso8601UTC(unixNanos: config.sessionStartUnixNanos + offsetMs * 1_000_000)))
        tags.append(("START_OFFSET_MS", String(offsetMs)))
        tags += extra
        if segment > 1 { tags.append(("SEGMENT", String(segment))) }
        w.writeHeaders(
            head: OpusHead(channelCount: UInt8(channels), preSkip: UInt16(preSkip)).bytes,
            tags: OpusTags(vendor: "bedrud-bot", comments: tags).bytes)
    }

    // MARK: - Time

    @inline(__always)
    func sessionSample(_ nanos: UInt64) -> Int64 { SessionTime.sample(nanos, start: startNanos) }

    // MARK: - Control

    public func apply(_ control: MediaControl, now: UInt64) {
        guard !finished else { return }
        switch control {
        case .addTrack(let spec, let ring):
            if let i = byIdentity[spec.participantIdentity], !participants[i].timeline.finished {
                let p = participants[i]
                detach(p, now: now)
                p.ring = ring
                p.trackSid = spec.trackSid
                send(p, .trackReplaced)
            } else {
                let index = participants.count
                let pan: Float = {
                    // Spread speakers over −0.8…0.8 in join order: 0, −0.8, 0.8, −0.4, 0.4, …
                    let steps: [Float] = [0, -0.8, 0.8, -0.4, 0.4, -0.6, 0.6, -0.2, 0.2]
                    return steps[index % steps.count]
                }()
                let p = ParticipantRecorder(
                    spec: spec, streamID: nextStreamID, config: config, pan: pan, startNanos: startNanos, addedAt: now)
                nextStreamID += 1
                p.ring = ring
                byIdentity[spec.participantIdentity] = index
                participants.append(p)
            }
        case .removeTrack(let sid):
            for p in participants where p.trackSid == sid && !p.timeline.finished { detach(p, now: now) }
        case .setMuted(let identity, let muted):
            if let i = byIdentity[identity] { send(participants[i], .setMuted(muted)) }
        case .participantReconnecting(let identity):
            if let i = byIdentity[identity] {
                let p = participants[i]
                p.jitter.connectionLost()
                p.live.connectionLost()
                send(p, .connectionLost(now: now))
            }
        case .participantPresent(let identity):
            if let i = byIdentity[identity] {
                let p = participants[i]
                send(p, .contactRestored(now: now, fileWindowEmpty: p.jitter.isEmpty, liveWindowEmpty: p.live.isEmpty))
            }
        case .participantLeft(let identity):
            if let i = byIdentity[identity] {
                let p = participants[i]
                detach(p, now: now)
                finishParticipant(p, at: sessionSample(now))
            }
        case .rotate(let cause):
            for p in participants where !p.timeline.finished { rotate(p, cause: cause) }
            rotateMix(cause: cause)
        }
    }

    /// Drains what the old ring still holds and forgets it.
    private func detach(_ p: ParticipantRecorder, now: UInt64) {
        if let r = p.ring {
            drainRing(p, r)
            p.stats.ringDropped += r.droppedCount
        }
        p.ring = nil
        p.live.drain { out in self.handleLive(p, out) }
        p.jitter.drain { out in self.handle(p, out) }
    }

    // MARK: - The loop body

    /// Runs every stage for everything due at `now`.
    /// - Returns: packets taken from the rings (0 = idle).
    @discardableResult
    public func process(now: UInt64) -> Int {
        guard !finished else { return 0 }
        var taken = 0
        for p in participants where !p.timeline.finished {
            if let r = p.ring { taken += drainRing(p, r) }
            if p.decoder != nil { p.live.release(now: now) { out in self.handleLive(p, out) } }
            p.jitter.release(now: now) { out in self.handle(p, out) }
            send(p, .tick(now: now, fileWindowEmpty: p.jitter.isEmpty, liveWindowEmpty: p.live.isEmpty))
        }
        if let m = mixer { m.advance(to: sessionSample(now) - config.mixLatencySamples) }
        return taken
    }

    /// True when a ring holds packets the engine has not taken yet.
    public var hasPendingInput: Bool {
        for p in participants where !p.timeline.finished {
            if let r = p.ring, !r.isEmpty { return true }
        }
        return false
    }

    /// When `process` next has timed work, with nothing new arriving: the earliest
    /// release of a held packet (start hold, a hole's wait), else the next idle turn
    /// (`idleTurnMillis`, or `emptyRoomTurnMillis` with nobody in the room), which grows
    /// silent files and finalizes the mix in batches.
    public func nextDueNanos(now: UInt64) -> UInt64 {
        let empty = !participants.contains { !$0.timeline.finished }
        let turn = empty ? config.emptyRoomTurnMillis : config.idleTurnMillis
        var due = now &+ UInt64(max(1, turn)) * 1_000_000
        for p in participants where !p.timeline.finished {
            if let r = p.jitter.nextReleaseNanos() { due = min(due, r) }
            if p.decoder != nil, let r = p.live.nextReleaseNanos() { due = min(due, r) }
            if let r = p.timeline.fileDueNanos { due = min(due, r) }
        }
        return due
    }

    @discardableResult
    private func drainRing(_ p: ParticipantRecorder, _ r: PacketRing) -> Int {
        var n = 0
        while r.pop({ h, payload in self.ingest(p, h, payload) }) { n += 1 }
        return n
    }

    private func ingest(_ p: ParticipantRecorder, _ h: MediaPacketHeader, _ payload: UnsafeRawBufferPointer) {
        if h.kind == .senderReport {
            p.timeline.senderReport(ssrc: h.ssrc, rtpTimestamp: h.rtpTimestamp, ntpTimestamp: h.ntpTimestamp)
            return
        }
        if p.timeline.beginsStream(h.ssrc) {
            if p.timeline.ssrc != nil {
                // What the windows still hold belongs to the old stream.
                p.live.drain { out in self.handleLive(p, out) }
                p.jitter.drain { out in self.handle(p, out) }
            }
            p.jitter.resetStream(ssrc: h.ssrc)
            p.live.resetStream(ssrc: h.ssrc)
        }
        let a = p.timeline.arrive(
            ssrc: h.ssrc, sequenceNumber: h.sequenceNumber, rtpTimestamp: h.rtpTimestamp, arrivalNanos: h.arrivalNanos)
        if let hold = a.holdUntilNanos {
            p.jitter.holdUntilNanos = hold
            p.live.holdUntilNanos = hold
        }
        // The same packet goes to both windows: the live one (short) feeds the decoder,
        // the file's (long) the passthrough writer. Each copies it into its own arena.
        if p.decoder != nil {
            insertLoop: while true {
                switch p.live.insert(
                    sequence: a.sequence, timestamp: a.timestamp, arrivalNanos: h.arrivalNanos, ssrc: h.ssrc, payload: payload)
                {
                case .stored, .duplicate, .late: break insertLoop
                case .needsRoom: p.live.forceReleaseOne { out in self.handleLive(p, out) }
                }
            }
        }
        while true {
            switch p.jitter.insert(
                sequence: a.sequence, timestamp: a.timestamp, arrivalNanos: h.arrivalNanos, ssrc: h.ssrc, payload: payload)
            {
            case .stored, .duplicate, .late: return
            case .needsRoom: p.jitter.forceReleaseOne { out in self.handle(p, out) }
            }
        }
    }

    private func handle(_ p: ParticipantRecorder, _ out: JitterOutput) {
        switch out {
        case .lost: p.timeline.handle(.fileLost) { _ in }
        case .packet(let bp, let payload): write(p, bp, payload)
        }
    }

    private func handleLive(_ p: ParticipantRecorder, _ out: JitterOutput) {
        switch out {
        case .lost(let n): p.timeline.handle(.liveLost(count: n)) { _ in }
        case .packet(let bp, let payload): decodeLive(p, bp, payload)
        }
    }

    // MARK: - Writing one packet

    /// The file's window released a packet: the timeline places it (and what comes
    /// before it), this writes it.
    private func write(_ p: ParticipantRecorder, _ bp: BufferedPacket, _ payload: UnsafeRawBufferPointer) {
        let info = OpusPacketInfo.parse(payload)
        p.timeline.handle(
            .filePacket(timestamp: bp.timestamp, arrivalNanos: bp.arrivalNanos, samples: info?.samples, stereo: info?.isStereo ?? false)
        ) { action in
            switch action {
            case .write(let granule, let samples):
                p.stats.packets += 1
                p.stats.payloadBytes += payload.count
                p.writer?.packet(payload, granule: granule, samples: samples)
                if info?.isConcealmentRequest == false, let b = payload.baseAddress { p.lastTOC = b.load(as: UInt8.self) }
            case .dropCorrupt:
                p.stats.corrupt += 1
                warnLog.log(.warning, now: bp.arrivalNanos, "dropped a corrupt Opus packet from \(p.identity)")
            case .dropOverlap:
                p.stats.overlapDropped += 1
            default:
                perform(p, action)
            }
        }
    }

    // MARK: - Decoding one packet (the live path)

    /// Decodes a packet the live window released, at its place in the session, into the
    /// mix and the speech detector. A hole before it is concealed (FEC when exactly one
    /// packet is missing and the packet carries LBRR) or, when it is not loss, silence.
    private func decodeLive(_ p: ParticipantRecorder, _ bp: BufferedPacket, _ payload: UnsafeRawBufferPointer) {
        guard let d = p.decoder else { return }
        let info = OpusPacketInfo.parse(payload)
        p.timeline.handle(.livePacket(timestamp: bp.timestamp, arrivalNanos: bp.arrivalNanos, samples: info?.samples)) { action in
            switch action {
            case .conceal(let n, let at, let fec):
                if concealLive(p, d, samples: n, at: at, next: fec ? payload : nil) { p.stats.fecRecovered += 1 }
            case .decode(let at):
                var n = d.decode(payload, into: pcm, maxSamples: Self.pcmCapacity)
                var decoded = true
                if n < 0 {
                    p.stats.corrupt += 1
                    decoded = false
                    n = d.conceal(into: pcm, samples: min(info?.samples ?? 0, Self.pcmCapacity))
                }
                guard n > 0 else { return }
                if decoded { mixer?.offer(payload, source: p.streamID, at: at - Int64(Self.senderPreSkip), samples: n) }
                analyze(p, count: n, at: at - Int64(Self.senderPreSkip))
            default:
                perform(p, action)
            }
        }
    }

    /// Conceals `samples` of loss at `at` on the live path: FEC from `next` when it
    /// carries LBRR data (libopus returns a full frame for any FEC request, LBRR or not:
    /// only that is a recovery), else packet loss concealment.
    /// - Returns: whether FEC was used.
    private func concealLive(_ p: ParticipantRecorder, _ d: OpusDecoderBox, samples n: Int, at start: Int64, next: UnsafeRawBufferPointer?) -> Bool {
        p.stats.mixConcealedMillis += Int64(n / 48)
        var done = 0
        var fec = false
        if let next, n <= Self.pcmCapacity, OpusPacketInfo.hasLBRR(next) {
            let got = d.decode(next, into: pcm, maxSamples: n, fec: true)
            if got == n {
                analyze(p, count: got, at: start - Int64(Self.senderPreSkip))
                done = n
                fec = true
            }
        }
        while done < n {
            let chunk = min(n - done, Self.pcmCapacity)
            let got = d.conceal(into: pcm, samples: chunk)
            guard got > 0 else { break }
            analyze(p, count: got, at: start + Int64(done) - Int64(Self.senderPreSkip))
            done += got
        }
        return fec
    }

    /// The live path's time without audio: the speech detector hears silence.
    func liveSilence(_ p: ParticipantRecorder, samples n: Int64) {
        guard n > 0, p.decoder != nil else { return }
        let identity = p.identity
        p.vad.silence(samples: Int(n)) { s, e in
            self.emit(.speakingTurn(identity: identity, startMillis: SessionTime.millis(s), endMillis: SessionTime.millis(e)))
        }
    }

    func analyze(_ p: ParticipantRecorder, count n: Int, at: Int64) {
        mixer?.add(pcm, count: n, at: at, pan: p.pan, source: p.streamID)
        let identity = p.identity
        p.vad.feed(pcm, count: n, position: at) { s, e in
            self.emit(.speakingTurn(identity: identity, startMillis: SessionTime.millis(s), endMillis: SessionTime.millis(e)))
        }
    }

    /// Ends the session at `now`: drains every ring and jitter buffer, ends every file at
    /// the same instant, finishes the mix. Nothing is processed afterwards.
    public func finish(now: UInt64) {
        guard !finished else { return }
        let end = sessionSample(now)
        for p in participants where !p.timeline.finished {
            detach(p, now: now)
            finishParticipant(p, at: max(end, p.timeline.writtenEnd))
        }
        if let m = mixer, let w = mixWriter {
            m.finish(at: max(end, 0))
            w.flush()
            pages.close(0, clean: true)
            emit(.fileFinished(identity: "", output: .room, startOffsetMillis: SessionTime.millis(mixSegmentStart),
                               durationMillis: SessionTime.millis(max(end, 0) - mixSegmentStart)))
        }
        finished = true
    }

    // MARK: - Write errors

    /// A stream's granule span `[start, end)` was written as a gap because the disk
    /// failed (reported by the writer, see ``PageStreamRecovery``): the `gap` event with
    /// cause `write_error`, and the participant's gap time.
    public func noteWriteGap(streamID: Int, startGranule: Int64, endGranule: Int64) {
        guard endGranule > startGranule else { return }
        let samples = endGranule - startGranule
        if streamID == 0 {
            emit(.gap(identity: "", trackSid: "", startMillis: SessionTime.millis(startGranule), durationMillis: SessionTime.millis(samples), cause: .writeError))
            return
        }
        guard let p = participants.first(where: { $0.streamID == streamID }) else { return }
        send(p, .writeGap(startGranule: startGranule, endGranule: endGranule))
    }

    // MARK: - Stats

    /// - Parameter levels: include the level strips (once, at the end).
    public func stats(levels: Bool = false) -> MediaStats {
        var s = MediaStats()
        for p in participants {
            var ps = p.stats
            ps.lost = p.jitter.lostPackets
            ps.late = p.jitter.late
            ps.mixLate = p.live.late
            ps.duplicates = p.jitter.duplicates
            ps.levelDBFS = p.vad.levelDBFS
            ps.peakDBFS = p.vad.peakDBFS
            ps.speaking = p.vad.isSpeaking
            ps.clockAdjustments = p.timeline.clock.adjustments
            ps.ringDropped = p.stats.ringDropped + (p.ring?.droppedCount ?? 0)
            ps.gapMillis = p.timeline.gapMillis
            ps.concealedMillis = p.timeline.concealedMillis
            ps.fileDurationMillis = p.timeline.fileDurationSamples.map(SessionTime.millis) ?? 0
            s.participants.append(ps)
            if levels, p.decoder != nil {
                let strip = p.vad.strip.finished()
                s.levels[p.identity] = s.levels[p.identity].map { $0.merged(with: strip) } ?? strip
            }
        }
        if let m = mixer {
            if levels { s.levels[""] = m.strip.finished() }
            s.mixLateSamplesDropped = m.lateSamplesDropped
            s.mixLimitedFrames = m.limitedFrames
            s.mixFramesEncoded = m.framesEncoded
            s.mixPacketsPassedThrough = m.packetsPassedThrough
        }
        return s
    }

    /// Nanoseconds spent inside libopus calls (when `timeCodecCalls` is on).
    public var libopusNanos: UInt64 { libopusDecodeNanos &+ libopusEncodeNanos }
    public var libopusDecodeNanos: UInt64 { participants.reduce(0) { $0 &+ ($1.decoder?.libopusNanos ?? 0) } }
    public var libopusEncodeNanos: UInt64 { mixer?.encoder.libopusNanos ?? 0 }
}

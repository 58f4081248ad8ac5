import BedrudProtocol

// The participant's file: its start, the RFC 7845 §4.1 gap filling, and its end.
extension MediaEngine {
    func startFile(_ p: ParticipantRecorder, at audioStart: Int64, stereo: Bool) {
        // Aligned, the file's sample 0 is the session's; the stretch before the first
        // audio is written as padding below.
        // A later segment (rotation) starts where the previous one ended, never padded.
        let pos = config.alignToSession && p.segment == 1 ? 0 : audioStart
        p.fileStart = pos
        p.writtenEnd = pos
        p.stereo = stereo
        let serial = Self.serial(config.serialSeed &+ UInt32(truncatingIfNeeded: p.streamID) &* 0x9E37_79B9, segment: p.segment)
        let w = OggStreamWriter(serial: serial, streamID: p.streamID, consumer: pages, flushSamples: flushSamples)
        let output = RecordingOutput.participant(identity: p.identity, name: p.name)
        do {
            pages.open(p.streamID, sink: try p.segment == 1 ? sinks.makeSink(for: output) : sinks.makeSink(for: output, segment: p.segment))
        } catch {
            emit(.warning("No file for \(p.name.isEmpty ? p.identity : p.name): \(error)"))
        }
        let offsetNanos = Self.millis(pos) * 1_000_000
        let tags: [(key: String, value: String)] = [
            ("ROOM", config.room),
            ("PARTICIPANT_IDENTITY", p.identity),
            ("PARTICIPANT_NAME", p.name),
            ("ARTIST", p.name.isEmpty ? p.identity : p.name),
            ("TRACK_SID", p.trackSid),
            ("START_TIME", iso8601UTC(unixNanos: config.sessionStartUnixNanos + offsetNanos)),
            ("START_OFFSET_MS", String(Self.millis(pos))),
        ] + (config.alignToSession && p.segment == 1 ? [("AUDIO_START_OFFSET_MS", String(Self.millis(max(0, audioStart))))] : [])
            + (p.segment > 1 ? [("SEGMENT", String(p.segment))] : [])
        w.writeHeaders(
            head: OpusHead(channelCount: stereo ? 2 : 1, preSkip: UInt16(Self.senderPreSkip)).bytes,
            tags: OpusTags(vendor: "bedrud-bot", comments: tags).bytes)
        p.writer = w
        if audioStart > pos { padToAudioStart(p, w, audioStart) }
        emit(.fileStarted(identity: p.identity, output: output, startOffsetMillis: Self.millis(pos)))
    }

    /// `record.align = session`: fills the file from session sample 0 up to the first audio
    /// (rounded to 2.5 ms) with concealment packets, which decode to silence on a decoder
    /// that has heard nothing yet (RFC 7845 §4.1). Two bytes per 120 ms: a minute of
    /// padding is 1 KB of packets in 60 pages, 3.3 KB in all. It is not a gap: no gap event, no
    /// gap time, nothing fed to the decoder or the mix.
    func padToAudioStart(_ p: ParticipantRecorder, _ w: OggStreamWriter, _ audioStart: Int64) {
        guard let fileStart = p.fileStart else { return }
        let n = Int((audioStart - p.writtenEnd + 60) / 120 * 120)
        ConcealmentPackets.fill(samples: n, previousTOC: p.lastTOC) { pkt, dur in
            p.writtenEnd += Int64(dur)
            w.packet(pkt, granule: p.writtenEnd - fileStart, samples: dur)
        }
    }

    /// Writes `samples` (rounded to 2.5 ms) of concealment packets at the end of the file.
    /// The decoder never sees them: the live path conceals on its own window.
    func fillGap(_ p: ParticipantRecorder, samples: Int64, cause: GapCause, roundDown: Bool = false) {
        let n = Int((samples + (roundDown ? 0 : 60)) / 120 * 120)
        guard n > 0, let fileStart = p.fileStart else { return }
        let start = p.writtenEnd
        if let w = p.writer {
            ConcealmentPackets.fill(samples: n, previousTOC: p.lastTOC) { pkt, dur in
                p.writtenEnd += Int64(dur)
                w.packet(pkt, granule: p.writtenEnd - fileStart, samples: dur)
            }
        } else {
            p.writtenEnd += Int64(n)
        }
        // Gap time is counted in samples and only shown in ms: adding each fill's ms
        // rounded down and then moving the whole stretch's ms to another cause took away
        // more than was added (two 2.5 ms fills add 2 + 2 ms, their 240 samples move 5 ms),
        // which left `noPackets` at -1 ms.
        p.gapSamples[cause, default: 0] += Int64(n)
        if let o = p.openGap, o.end == start, o.cause == cause || o.cause == .noPackets {
            // A stretch filled while nothing was known gets the cause learned at its end.
            if o.cause != cause {
                let known = min(o.end - o.start, p.gapSamples[.noPackets, default: 0])
                p.gapSamples[.noPackets, default: 0] -= known
                p.gapSamples[cause, default: 0] += known
                p.stats.gapMillis[.noPackets] = Self.millis(p.gapSamples[.noPackets, default: 0])
            }
            p.openGap = (o.start, p.writtenEnd, cause)
        } else {
            closeGap(p)
            p.openGap = (start, p.writtenEnd, cause)
        }
        p.stats.gapMillis[cause] = Self.millis(p.gapSamples[cause, default: 0])
        // A loss short enough for a player's concealment (PLC) to bridge.
        if cause == .loss && n <= config.concealMaxMillis * 48 { p.stats.concealedMillis += Int64(n / 48) }
    }

    func closeGap(_ p: ParticipantRecorder) {
        guard let g = p.openGap else { return }
        p.openGap = nil
        if g.end - g.start >= Int64(config.gapEventMinMillis) * 48 {
            emit(.gap(identity: p.identity, trackSid: p.trackSid, startMillis: Self.millis(g.start),
                      durationMillis: Self.millis(g.end - g.start), cause: g.cause))
        }
    }

    /// Keeps a silent participant's file growing up to the mix edge. A participant who
    /// sends nothing at all (joined muted) gets a file from when their track was added.
    func liveFill(_ p: ParticipantRecorder, now: UInt64) {
        if p.fileStart == nil && !p.everReceived
            && now >= p.addedAt &+ UInt64(config.startHoldMillis + config.liveFillAfterMillis) * 1_000_000
        {
            startFile(p, at: sessionSample(p.addedAt), stereo: false)
        }
        // While we are cut off nobody knows whether they are still here: no filler.
        guard p.contactLostAt == nil else { return }
        if p.live.isEmpty, let le = p.liveEnd {
            let liveEdge = sessionSample(now) - config.mixLatencySamples
            if liveEdge - le >= Int64(config.liveFillAfterMillis) * 48 { liveSilence(p, upTo: liveEdge) }
        }
        // The file is filled only behind its own (longer) window: a retransmission on its
        // way still finds its place.
        guard p.fileStart != nil, p.jitter.isEmpty else { return }
        let edge = sessionSample(now) - config.fileLatencySamples
        guard edge - p.writtenEnd >= Int64(config.liveFillAfterMillis) * 48 else { return }
        fillGap(p, samples: edge - p.writtenEnd, cause: p.gapCause(endedBy: .nothing))
    }

    func finishParticipant(_ p: ParticipantRecorder, at requestedEnd: Int64) {
        guard !p.finished else { return }
        p.finished = true
        // Ended during an outage, or found gone after a rejoin: the file ends where they
        // were last known to be here, not at the end of the outage.
        let end = p.contactLostAt.map { min(requestedEnd, max($0, p.writtenEnd)) } ?? requestedEnd
        let identity = p.identity
        if let fileStart = p.fileStart, let w = p.writer {
            // Audio captured up to `end` leaves the decoder `senderPreSkip` samples later.
            let target = end + Int64(Self.senderPreSkip)
            if target - p.writtenEnd >= 120 {
                fillGap(p, samples: target - p.writtenEnd, cause: p.gapCause(endedBy: .nothing), roundDown: true)
            }
            closeGap(p)
            // EOS rides on a 2.5 ms concealment packet whose overhang end trimming
            // (RFC 7845 §4.4) removes, so the file ends exactly where the participant did.
            let finalGranule = max(target, p.writtenEnd) - fileStart
            var eos = ConcealmentPackets.endOfStream(previousTOC: p.lastTOC)
            withUnsafeBytes(of: &eos) { w.packet($0, granule: finalGranule, samples: 120, eos: true) }
            p.writtenEnd = fileStart + finalGranule
            pages.close(p.streamID, clean: true)
            let playable = finalGranule - Int64(Self.senderPreSkip)
            p.stats.fileDurationMillis = Self.millis(p.earlierSegmentsSamples + playable)
            emit(.fileFinished(identity: identity, output: .participant(identity: identity, name: p.name),
                               startOffsetMillis: Self.millis(fileStart), durationMillis: Self.millis(playable)))
        }
        liveSilence(p, upTo: end)
        p.vad.finish { s, e in self.emit(.speakingTurn(identity: identity, startMillis: Self.millis(s), endMillis: Self.millis(e))) }
    }

}

import BedrudProtocol

// The participant's file as the timeline decides it: the shell that performs a
// ``ParticipantTimeline``'s actions (its start, the RFC 7845 §4.1 filler, gap events,
// its end) on the Ogg writer and the event stream.
extension MediaEngine {
    /// Hands `event` to `p`'s timeline and performs what it decides.
    func send(_ p: ParticipantRecorder, _ event: TimelineEvent) {
        p.timeline.handle(event) { action in perform(p, action) }
    }

    /// Performs one action of `p`'s timeline. Never touches `p.timeline` (it is being
    /// mutated while this runs).
    func perform(_ p: ParticipantRecorder, _ action: TimelineAction, rotation: RotationCause = .duration) {
        switch action {
        case .startFile(let at, let audioStart, let stereo, let segment):
            openFile(p, at: at, audioStart: audioStart, stereo: stereo, segment: segment)
        case .fill(let samples, let fromGranule, _):
            // Concealment packets; the decoder never sees them (the live path conceals
            // on its own window).
            guard let w = p.writer else { return }
            var granule = fromGranule
            ConcealmentPackets.fill(samples: samples, previousTOC: p.lastTOC) { pkt, dur in
                granule += Int64(dur)
                w.packet(pkt, granule: granule, samples: dur)
            }
        case .gap(let start, let samples, let cause):
            emit(.gap(identity: p.identity, trackSid: p.trackSid, startMillis: SessionTime.millis(start),
                      durationMillis: SessionTime.millis(samples), cause: cause))
        case .endFile(let granule, let playable, let start):
            guard let w = p.writer else { return }
            // EOS rides on a 2.5 ms concealment packet whose overhang end trimming
            // (RFC 7845 §4.4) removes, so the file ends exactly where the timeline says.
            var eos = ConcealmentPackets.endOfStream(previousTOC: p.lastTOC)
            withUnsafeBytes(of: &eos) { w.packet($0, granule: granule, samples: 120, eos: true) }
            pages.close(p.streamID, clean: true)
            emit(.fileFinished(identity: p.identity, output: .participant(identity: p.identity, name: p.name),
                               startOffsetMillis: SessionTime.millis(start), durationMillis: SessionTime.millis(playable)))
        case .rotated(let segment, let at):
            p.writer = nil
            emit(.fileRotated(identity: p.identity, output: .participant(identity: p.identity, name: p.name), segment: segment,
                              atMillis: SessionTime.millis(at), cause: rotation))
        case .liveSilence(let n):
            liveSilence(p, samples: n)
        case .write, .dropCorrupt, .dropOverlap, .conceal, .decode:
            break  // packet actions: performed where the packet is (`write`, `decodeLive`)
        }
    }

    /// Opens segment `segment` of `p`'s file: sink, OpusHead and OpusTags.
    private func openFile(_ p: ParticipantRecorder, at pos: Int64, audioStart: Int64, stereo: Bool, segment: Int) {
        let serial = Self.serial(config.serialSeed &+ UInt32(truncatingIfNeeded: p.streamID) &* 0x9E37_79B9, segment: segment)
        let w = OggStreamWriter(serial: serial, streamID: p.streamID, consumer: pages, flushSamples: flushSamples)
        let output = RecordingOutput.participant(identity: p.identity, name: p.name)
        do {
            pages.open(p.streamID, sink: try segment == 1 ? sinks.makeSink(for: output) : sinks.makeSink(for: output, segment: segment))
        } catch {
            emit(.warning("No file for \(p.name.isEmpty ? p.identity : p.name): \(error)"))
        }
        writeSegmentHeaders(
            w, channels: stereo ? 2 : 1, preSkip: Self.senderPreSkip, at: pos, segment: segment,
            describing: [
                ("PARTICIPANT_IDENTITY", p.identity),
                ("PARTICIPANT_NAME", p.name),
                ("ARTIST", p.name.isEmpty ? p.identity : p.name),
                ("TRACK_SID", p.trackSid),
            ],
            extra: config.alignToSession && segment == 1 ? [("AUDIO_START_OFFSET_MS", String(SessionTime.millis(max(0, audioStart))))] : [])
        p.writer = w
        emit(.fileStarted(identity: p.identity, output: output, startOffsetMillis: SessionTime.millis(pos)))
    }

    /// Starts `p`'s file with its first audio at session sample `audioStart` (tests; the
    /// engine starts files through the timeline's own decisions).
    func startFile(_ p: ParticipantRecorder, at audioStart: Int64, stereo: Bool) {
        p.timeline.startFile(at: audioStart, stereo: stereo) { action in perform(p, action) }
    }

    /// Ends `p`'s file at session sample `requestedEnd` (or where they were last known to
    /// be here), and their speech turns.
    func finishParticipant(_ p: ParticipantRecorder, at requestedEnd: Int64) {
        guard !p.timeline.finished else { return }
        send(p, .end(at: requestedEnd))
        let identity = p.identity
        p.vad.finish { s, e in self.emit(.speakingTurn(identity: identity, startMillis: SessionTime.millis(s), endMillis: SessionTime.millis(e))) }
    }
}

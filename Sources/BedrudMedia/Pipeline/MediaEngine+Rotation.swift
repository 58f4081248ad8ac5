import BedrudProtocol

// Rotation (`--split`, `--split-size`, SIGHUP): every open file ends and continues in a
// numbered segment that is a valid Ogg Opus stream of its own (RFC 7845): a new serial,
// OpusHead and OpusTags, granules from 0 with the pre-skip, EOS on the previous stream.
//
// Passthrough files split between two packets: every packet is in exactly one segment,
// and the granules of the segments add up to the unsplit file's. A later segment's
// decoder starts cold, so its first `senderPreSkip` samples (6.5 ms) are its warm-up
// (pre-skip) and not played; its START_OFFSET_MS names its first played sample. The mix
// encoder keeps running and the same holds with its own pre-skip.
extension MediaEngine {
    /// Serials of later segments differ from the first's (and from each other).
    static func serial(_ base: UInt32, segment: Int) -> Int32 {
        Int32(bitPattern: base &+ UInt32(truncatingIfNeeded: segment - 1) &* 0x85EB_CA6B)
    }

    /// Ends `p`'s current segment where it is written up to and starts the next there
    /// (the timeline decides; a segment shorter than a frame past its pre-skip is not
    /// split off).
    func rotate(_ p: ParticipantRecorder, cause: RotationCause) {
        guard p.writer != nil else { return }
        p.timeline.handle(.rotate) { action in perform(p, action, rotation: cause) }
    }
    /// Ends room.opus's current segment after the frames encoded so far and continues
    /// in the next; the encoder is not restarted.
    func rotateMix(cause: RotationCause) {
        guard let m = mixer, mixWriter != nil else { return }
        guard m.cursor - mixSegmentStart - Int64(m.preSkip) >= 960 else { return }
        let next = OggStreamWriter(
            serial: Self.serial(config.serialSeed, segment: mixSegment + 1), streamID: 0, consumer: pages,
            flushSamples: max(960, config.roomPageFlushMillis * 48))
        let previousStart = mixSegmentStart
        let at = m.rotate(to: next)
        pages.close(0, clean: true)
        emit(.fileFinished(identity: "", output: .room, startOffsetMillis: SessionTime.millis(previousStart),
                           durationMillis: SessionTime.millis(at - previousStart - Int64(m.preSkip))))
        mixSegment += 1
        mixSegmentStart = at
        mixWriter = next
        emit(.fileRotated(identity: "", output: .room, segment: mixSegment, atMillis: SessionTime.millis(at), cause: cause))
        do {
            pages.open(0, sink: try sinks.makeSink(for: .room, segment: mixSegment))
        } catch {
            emit(.warning("The mixed recording's segment \(mixSegment) has no file: \(error)"))
        }
        writeMixHeaders(next, channels: m.channels, preSkip: m.preSkip, at: at)
        emit(.fileStarted(identity: "", output: .room, startOffsetMillis: SessionTime.millis(at)))
    }
}

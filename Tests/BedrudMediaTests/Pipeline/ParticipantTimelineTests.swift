import BedrudProtocol
import Testing

@testable import BedrudMedia

/// Transcripts of one participant's timeline: arrivals and sender reports in, the exact
/// places, filler and gap spans (with their causes) and file starts and ends out. The
/// reorder windows are the shell's; here each packet is released as soon as it arrives
/// unless a transcript says otherwise.
@Suite struct ParticipantTimelineTests {
    static let settings = ParticipantTimeline.Settings(
        startNanos: 0, startHoldNanos: 200_000_000, liveFillAfterSamples: 60 * 48, fileLatencySamples: 800 * 48,
        mixLatencySamples: 400 * 48, gapEventMinSamples: 100 * 48, concealMaxSamples: 120 * 48, alignToSession: false,
        decodes: true)

    /// One participant's timeline.
    struct Transcript {
        var t = ParticipantTimeline(settings: ParticipantTimelineTests.settings, addedAt: 900_000_000)
        var ssrc: UInt32 = 1
        /// Unwrapped (sequence, timestamp) of the arrivals, in order.
        var arrivals: [(Int64, Int64)] = []

        mutating func arrive(seq: UInt16, ts: UInt32, ms: UInt64) -> ParticipantTimeline.Arrival {
            let a = t.arrive(ssrc: ssrc, sequenceNumber: seq, rtpTimestamp: ts, arrivalNanos: ms * 1_000_000)
            arrivals.append((a.sequence, a.timestamp))
            return a
        }

        mutating func send(_ e: TimelineEvent) -> [TimelineAction] {
            var out: [TimelineAction] = []
            t.handle(e) { out.append($0) }
            return out
        }

        /// The file window releases an arrived packet (20 ms unless said).
        mutating func release(_ a: ParticipantTimeline.Arrival, ms: UInt64, samples: Int? = 960) -> [TimelineAction] {
            send(.filePacket(timestamp: a.timestamp, arrivalNanos: ms * 1_000_000, samples: samples, stereo: false))
        }

        /// Arrives and is released at once.
        mutating func packet(seq: UInt16, ts: UInt32, ms: UInt64, samples: Int? = 960) -> [TimelineAction] {
            let a = arrive(seq: seq, ts: ts, ms: ms)
            return release(a, ms: ms, samples: samples)
        }

        /// Five packets, 20 ms apart from 1 s: session samples 48000…52800.
        mutating func fiveFrom1s(seq: UInt16 = 100, ts: UInt32 = 1000) -> [[TimelineAction]] {
            (0..<5).map { k in packet(seq: seq &+ UInt16(k), ts: ts &+ UInt32(k) * 960, ms: 1000 + UInt64(k) * 20) }
        }

        /// Packets `k` of the steady stream (seq 100 + k, 20 ms each, from 1 s).
        mutating func steady(_ ks: Range<Int>) {
            for k in ks { _ = packet(seq: 100 + UInt16(k), ts: 1000 + UInt32(k) * 960, ms: 1000 + UInt64(k) * 20) }
        }
    }

    @Test func aSteadyStreamIsPlacedFrameByFrameAcrossSequenceAndTimestampWraps() {
        var r = Transcript()
        let out = r.fiveFrom1s(seq: 65534, ts: UInt32.max - 1919)
        #expect(out[0] == [.startFile(at: 48000, audioStart: 48000, stereo: false, segment: 1), .write(granule: 960, samples: 960)])
        #expect(out[1...] == [[.write(granule: 1920, samples: 960)], [.write(granule: 2880, samples: 960)],
                              [.write(granule: 3840, samples: 960)], [.write(granule: 4800, samples: 960)]])
        // Unwrapped once, for both windows: 65534, 65535, 0, 1, 2 run on; so do the timestamps.
        let (s0, t0) = r.arrivals[0]
        #expect(r.arrivals.map(\.0) == (0..<5).map { s0 + Int64($0) })
        #expect(r.arrivals.map(\.1) == (0..<5).map { t0 + Int64($0) * 960 })
        #expect(r.t.writtenEnd == 52800 && r.t.clock.adjustments == 0)
    }

    @Test func theFirstPacketStartsTheHoldOfBothWindows() {
        var r = Transcript()
        #expect(r.arrive(seq: 1, ts: 0, ms: 1000).holdUntilNanos == 1_200_000_000)
        #expect(r.arrive(seq: 2, ts: 960, ms: 1020).holdUntilNanos == nil)
    }

    @Test func aSenderPauseIsADTXGapAndLossIsALossGap() {
        var r = Transcript()
        _ = r.fiveFrom1s()
        // DTX: the timestamp jumps a second, the sequence number does not.
        #expect(r.packet(seq: 105, ts: 1000 + 5 * 960 + 48000, ms: 2100) == [
            .fill(samples: 48000, fromGranule: 4800, cause: .dtx), .gap(start: 52800, samples: 48000, cause: .dtx),
            .write(granule: 53760, samples: 960),
        ])
        // Loss: 106 given up by the window; 20 ms of filler, too short for a gap event.
        #expect(r.send(.fileLost) == [])
        #expect(r.packet(seq: 107, ts: 1000 + 7 * 960 + 48000, ms: 2140) == [
            .fill(samples: 960, fromGranule: 53760, cause: .loss), .write(granule: 55680, samples: 960),
        ])
        #expect(r.t.gapMillis == [.dtx: 1000, .loss: 20])
        #expect(r.t.concealedMillis == 20)
    }

    @Test func aCorruptPacketIsDroppedAndTheHoleItLeavesIsLoss() {
        var r = Transcript()
        _ = r.fiveFrom1s()
        #expect(r.packet(seq: 105, ts: 1000 + 5 * 960, ms: 1100, samples: nil) == [.dropCorrupt])
        #expect(r.packet(seq: 106, ts: 1000 + 6 * 960, ms: 1120) == [
            .fill(samples: 960, fromGranule: 4800, cause: .loss), .write(granule: 6720, samples: 960),
        ])
    }

    @Test func aPacketThatOverlapsWhatIsWrittenIsDropped() {
        var r = Transcript()
        _ = r.fiveFrom1s()
        // A resent copy with a new sequence number but an old timestamp.
        #expect(r.packet(seq: 105, ts: 1000 + 3 * 960, ms: 1100) == [.dropOverlap])
        #expect(r.t.writtenEnd == 52800)
    }

    @Test func aTimestampJumpForwardIsPlacedAtItsArrival() {
        var r = Transcript()
        r.steady(0..<15)  // past the 200 ms settle
        // Ten seconds ahead: the packet "travelled fastest", the anchor moves to it.
        #expect(r.packet(seq: 115, ts: 1000 + 15 * 960 + 480_000, ms: 1300) == [.write(granule: 15360, samples: 960)])
        #expect(r.packet(seq: 116, ts: 1000 + 16 * 960 + 480_000, ms: 1320) == [.write(granule: 16320, samples: 960)])
        #expect(r.t.clock.adjustments == 1)
    }

    /// The 1 s / 3 s rule: the anchor moved by a later packet (ten seconds ahead) while
    /// an earlier one was still in the window; released, that one would land ten seconds
    /// early, so it is placed at its arrival (and the clock re-anchored), and so is the
    /// jumped one after it.
    @Test func aPacketFarFromItsArrivalIsPlacedAtItsArrival() {
        var r = Transcript()
        r.steady(0..<14)
        let held = r.arrive(seq: 114, ts: 1000 + 14 * 960, ms: 1280)
        let jumped = r.arrive(seq: 115, ts: 1000 + 15 * 960 + 480_000, ms: 1300)
        #expect(r.t.clock.adjustments == 1)
        #expect(r.release(held, ms: 1280) == [.write(granule: 14400, samples: 960)])
        #expect(r.release(jumped, ms: 1300) == [.write(granule: 15360, samples: 960)])
        #expect(r.t.clock.adjustments == 3)
        #expect(r.t.writtenEnd == 63360)
    }

    @Test func aMuteGrowsTheFileAndANewStreamAfterItIsStillTheMute() {
        var r = Transcript()
        _ = r.fiveFrom1s()
        #expect(r.send(.setMuted(true)) == [])
        // Filled behind the file's window: up to 3 s − 800 ms.
        #expect(r.send(.tick(now: 3_000_000_000, fileWindowEmpty: true, liveWindowEmpty: true)) == [
            .fill(samples: 52800, fromGranule: 4800, cause: .mute)
        ])
        #expect(r.send(.setMuted(false)) == [])
        // They come back on a new SSRC (a republish after unmuting).
        r.ssrc = 2
        #expect(r.t.beginsStream(2))
        #expect(r.packet(seq: 7, ts: 123_456, ms: 4000) == [
            .fill(samples: 86400, fromGranule: 57600, cause: .mute), .gap(start: 52800, samples: 139_200, cause: .mute),
            .write(granule: 144_960, samples: 960),
        ])
        #expect(r.t.gapMillis == [.mute: 2900])
    }

    @Test func anOutageOfOurConnectionIsOneReconnectGapNotLoss() {
        var r = Transcript()
        _ = r.fiveFrom1s()
        #expect(r.send(.connectionLost(now: 1_200_000_000)) == [])
        #expect(r.t.contactLostAt == 57600)
        // Cut off: nobody knows whether they are still here, so no filler.
        #expect(r.send(.tick(now: 3_000_000_000, fileWindowEmpty: true, liveWindowEmpty: true)) == [])
        // Back in contact at 5 s: the outage so far is filled (behind the mix's edge).
        #expect(r.send(.contactRestored(now: 5_000_000_000, fileWindowEmpty: true, liveWindowEmpty: true)) == [
            .fill(samples: 168_000, fromGranule: 4800, cause: .reconnect)
        ])
        // A resume: same SSRC, the sender kept numbering; the numbers it used while we
        // were away are given up by the window, and the reconnect still explains them.
        #expect(r.send(.fileLost) == [])
        #expect(r.packet(seq: 300, ts: 1000 + 200 * 960, ms: 5020) == [
            .fill(samples: 19200, fromGranule: 172_800, cause: .reconnect),
            .gap(start: 52800, samples: 187_200, cause: .reconnect), .write(granule: 192_960, samples: 960),
        ])
        #expect(r.t.gapMillis == [.reconnect: 3900])
    }

    /// A packet the window still held when our connection was lost is written, and the
    /// outage stays a reconnect: it used to end it, so the gap after read as loss (or, with
    /// no loss, as DTX) and `ReportBrowserTests` found no reconnect gap on a loaded machine.
    @Test func aPacketFromBeforeTheOutageDoesNotEndIt() {
        var r = Transcript()
        _ = r.fiveFrom1s()
        let held = r.arrive(seq: 105, ts: 1000 + 5 * 960, ms: 1100)
        #expect(r.send(.connectionLost(now: 1_200_000_000)) == [])
        #expect(r.release(held, ms: 1100) == [.write(granule: 5760, samples: 960)])
        #expect(r.t.contactLostAt != nil)
        #expect(r.send(.fileLost) == [])
        // Media is back at 4 s, before the signalling says so: the gap is the reconnect's.
        let back = r.packet(seq: 250, ts: 1000 + 150 * 960, ms: 4000)
        #expect(back.contains { if case .gap(_, _, .reconnect) = $0 { true } else { false } }, "\(back)")
        #expect(r.t.contactLostAt == nil && r.t.gapMillis[.loss] == nil)
    }

    /// The same for a second outage that begins with no packet since the first ended: a
    /// packet held from between the two is still from before this outage (the first
    /// outage's start is not this one's).
    @Test func aSecondOutageIsTimedFromItsOwnStart() {
        var r = Transcript()
        _ = r.fiveFrom1s()
        #expect(r.send(.connectionLost(now: 1_200_000_000)) == [])
        #expect(r.send(.contactRestored(now: 1_300_000_000, fileWindowEmpty: false, liveWindowEmpty: false)) == [])
        let held = r.arrive(seq: 105, ts: 1000 + 5 * 960, ms: 1400)
        #expect(r.send(.connectionLost(now: 1_500_000_000)) == [])
        #expect(r.release(held, ms: 1400) == [.write(granule: 5760, samples: 960)])
        #expect(r.t.contactLostAt != nil)
    }

    @Test func endingFillsToTheEndAndEndsTheFileThere() {
        var r = Transcript()
        _ = r.fiveFrom1s()
        // Ends at 1.25 s: the decoder's output lags the capture by the pre-skip.
        #expect(r.send(.end(at: 60000)) == [
            .fill(samples: 7440, fromGranule: 4800, cause: .noPackets), .gap(start: 52800, samples: 7440, cause: .noPackets),
            .endFile(granule: 12312, playable: 12000, start: 48000),
        ])
        #expect(r.t.finished && r.t.fileDurationSamples == 12000)
        #expect(r.send(.end(at: 90000)) == [])
    }

    @Test func aParticipantWhoNeverSendsGetsAFileFromWhenTheirTrackWasAdded() {
        var r = Transcript()  // added at 900 ms
        #expect(r.t.fileDueNanos == 900_000_000 + 200_000_000 + 60_000_000)
        #expect(r.send(.tick(now: 1_159_000_000, fileWindowEmpty: true, liveWindowEmpty: true)) == [])
        #expect(r.send(.setMuted(true)) == [])
        #expect(r.send(.tick(now: 2_000_000_000, fileWindowEmpty: true, liveWindowEmpty: true)) == [
            .startFile(at: 43200, audioStart: 43200, stereo: false, segment: 1),
            .fill(samples: 14400, fromGranule: 0, cause: .mute),
        ])
        #expect(r.t.fileDueNanos == nil)
    }

    /// Sender reports: LiveKit passes each publisher's own report clock through, so each
    /// participant maps its NTP times through its own offset (its fastest packet's). A
    /// participant whose device clock is 2 s ahead is placed at its own arrival; with one
    /// offset for the session it pulled everyone else 2 s early, onto audio already
    /// written, and their packets were dropped from then on.
    @Test func eachParticipantsReportsMapThroughItsOwnOffset() {
        let ntpSeconds: UInt64 = 3_900_000_000
        var a = Transcript()
        a.t.senderReport(ssrc: 1, rtpTimestamp: 1000, ntpTimestamp: ntpSeconds << 32)
        #expect(a.packet(seq: 1, ts: 1000, ms: 1000)
            == [.startFile(at: 48000, audioStart: 48000, stereo: false, segment: 1), .write(granule: 960, samples: 960)])
        var b = Transcript()
        b.t.senderReport(ssrc: 1, rtpTimestamp: 5000, ntpTimestamp: (ntpSeconds + 2) << 32)
        #expect(b.packet(seq: 9, ts: 5000, ms: 1080)
            == [.startFile(at: 51840, audioStart: 51840, stereo: false, segment: 1), .write(granule: 960, samples: 960)])
        #expect(a.t.ntpOffset != b.t.ntpOffset)
        // Within one participant the report places a late packet at its capture time.
        #expect(a.packet(seq: 2, ts: 1960, ms: 1070) == [.write(granule: 1920, samples: 960)])
        #expect(a.t.ntpOffset == 1_000_000_000 - Int64(ntpSeconds) * 1_000_000_000)
    }

    /// An NTP timestamp (RFC 3550 §4) `ms` milliseconds after 3,900,000,000 s since 1900.
    static func ntp(_ ms: UInt64) -> UInt64 { (UInt64(3_900_000_000) << 32) + (ms << 32) / 1000 }

    /// One bad report (an SFU that paired a timestamp from 2.5 s earlier with the time it
    /// sent the report, as a server does that falls behind and catches up) between two
    /// good ones: it is held, not used, so the packets after it stay where they belong.
    /// Used, it moved them 2.5 s back, onto audio already written, and every one was
    /// dropped until the end of the session.
    @Test func aSenderReportThatDisagreesWithTheMappingIsHeldUntilAnotherConfirmsIt() {
        var r = Transcript()
        r.t.senderReport(ssrc: 1, rtpTimestamp: 1000, ntpTimestamp: Self.ntp(1000))
        var actions: [TimelineAction] = []
        for k in 0..<50 { actions += r.packet(seq: 100 + UInt16(k), ts: 1000 + UInt32(k) * 960, ms: 1000 + UInt64(k) * 20) }
        r.t.senderReport(ssrc: 1, rtpTimestamp: UInt32(1000 + 50 * 960) &- 120_000, ntpTimestamp: Self.ntp(2000))
        #expect(r.t.senderReportsHeld == 1)
        for k in 50..<60 { actions += r.packet(seq: 100 + UInt16(k), ts: 1000 + UInt32(k) * 960, ms: 1000 + UInt64(k) * 20) }
        let good = SenderReportMapping(rtp: 1000 + 60 * 960, ntpTimestamp: Self.ntp(2200))
        r.t.senderReport(ssrc: 1, rtpTimestamp: good.rtp, ntpTimestamp: Self.ntp(2200))
        #expect(r.t.senderReport == good && r.t.senderReportsHeld == 1)
        for k in 60..<70 { actions += r.packet(seq: 100 + UInt16(k), ts: 1000 + UInt32(k) * 960, ms: 1000 + UInt64(k) * 20) }
        let writes = actions.filter { if case .write = $0 { true } else { false } }
        #expect(writes.count == 70 && !actions.contains(.dropOverlap))
        #expect(r.t.writtenEnd == 48000 + 70 * 960)
    }

    /// A mapping that really moved (two reports in a row agree on it) is taken; a report
    /// that agrees with neither the mapping nor the one held is held in its turn.
    @Test func twoReportsInARowThatAgreeMoveTheMapping() {
        var r = Transcript()
        let first = SenderReportMapping(rtp: 1000, ntpTimestamp: Self.ntp(1000))
        r.t.senderReport(ssrc: 1, rtpTimestamp: 1000, ntpTimestamp: Self.ntp(1000))
        _ = r.packet(seq: 1, ts: 1000, ms: 1000)
        // Within the tolerance (50 ms off): taken at once.
        let close = SenderReportMapping(rtp: 1000 + 48000, ntpTimestamp: Self.ntp(2050))
        r.t.senderReport(ssrc: 1, rtpTimestamp: close.rtp, ntpTimestamp: Self.ntp(2050))
        #expect(r.t.senderReport == close && r.t.senderReportsHeld == 0)
        // 300 ms later than the mapping, then 900 ms: neither confirms the other.
        r.t.senderReport(ssrc: 1, rtpTimestamp: 1000 + 96000, ntpTimestamp: Self.ntp(3350))
        r.t.senderReport(ssrc: 1, rtpTimestamp: 1000 + 144_000, ntpTimestamp: Self.ntp(4950))
        #expect(r.t.senderReport == close && r.t.senderReportsHeld == 2)
        // A second report 900 ms later confirms the one held.
        let moved = SenderReportMapping(rtp: 1000 + 192_000, ntpTimestamp: Self.ntp(5950))
        r.t.senderReport(ssrc: 1, rtpTimestamp: moved.rtp, ntpTimestamp: Self.ntp(5950))
        #expect(r.t.senderReport == moved && r.t.senderReportsHeld == 2)
        #expect(first.agrees(with: close) && !close.agrees(with: moved))
        // A confirmed move is learned anew: moved 1.5 s earlier, the offset the stream had
        // would place every packet 0.55 s onto audio already written.
        #expect(r.t.ntpOffset == nil)
        r.t.senderReport(ssrc: 1, rtpTimestamp: 1000 + 240_000, ntpTimestamp: Self.ntp(5450))
        r.t.senderReport(ssrc: 1, rtpTimestamp: 1000 + 288_000, ntpTimestamp: Self.ntp(6450))
        #expect(r.t.senderReport?.rtp == 1000 + 288_000 && r.t.senderReportsHeld == 3 && r.t.ntpOffset == nil)
        var actions: [TimelineAction] = []
        for k in 1..<20 { actions += r.packet(seq: 1 + UInt16(k), ts: 1000 + UInt32(k) * 960, ms: 1000 + UInt64(k) * 20) }
        #expect(!actions.contains(.dropOverlap) && r.t.writtenEnd == 48000 + 20 * 960)
        // A new stream starts from its own first report.
        r.ssrc = 2
        _ = r.packet(seq: 1, ts: 5, ms: 7000)
        #expect(r.t.senderReport == nil)
    }

    @Test func theLivePathConcealsOneLostPacketWithFECAndSilencesAMute() {
        var r = Transcript()
        let a = (0..<6).map { k in r.arrive(seq: 100 + UInt16(k), ts: 1000 + UInt32(k) * 960, ms: 1000 + UInt64(k) * 20) }
        func live(_ k: Int) -> TimelineEvent { .livePacket(timestamp: a[k].timestamp, arrivalNanos: 1_000_000_000 + UInt64(k) * 20_000_000, samples: 960) }
        #expect(r.send(live(0)) == [.decode(at: 48000)])
        #expect(r.send(live(1)) == [.decode(at: 48960)])
        #expect(r.send(.liveLost(count: 1)) == [])
        #expect(r.send(live(3)) == [.conceal(samples: 960, at: 49920, fec: true), .decode(at: 50880)])
        #expect(r.send(.setMuted(true)) == [])
        #expect(r.send(.liveLost(count: 1)) == [])
        #expect(r.send(live(5)) == [.liveSilence(samples: 960), .decode(at: 52800)])
        #expect(r.t.liveEnd == 53760)
    }
}

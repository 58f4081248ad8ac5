import BedrudProtocol
import Foundation
import Testing

@testable import BedrudMedia

/// The two reorder windows: a participant's file waits `fileJitterWaitMillis`
/// (400 ms) for a late packet, the live path (mix, speech detection) `jitterWaitMillis`
/// (60 ms). Virtual time; arrival = media time + 30 ms.
@Suite(.serialized) struct MediaEngineJitterWindowTests {
    static let ms: UInt64 = 1_000_000
    let origin = VirtualRecording.origin

    struct Outcome {
        let file: [UInt8]
        let room: [UInt8]
        let stats: ParticipantMediaStats
        let gaps: [(Int64, Int64, GapCause)]
        let turns: [(Int64, Int64)]
    }

    /// Records 4 s of speech; `delays` holds packets back by that many ms, `drop` never
    /// delivers them.
    func record(delays: [Int: UInt64] = [:], drop: Set<Int> = [], config: MediaPipelineConfig = MediaPipelineConfig()) throws -> Outcome {
        let opus = TestEncoder.encode(TestSignal.speech(seconds: 4, seed: 11))
        var script = PacketScript()
        script.append(opus, firstSequence: 65000, firstTimestamp: 7000, startSeconds: 0)
        var list: [ScriptedPacket] = []
        for (i, p) in script.packets.enumerated() where !drop.contains(i) {
            var q = p
            q.arrivalNanos += (delays[i] ?? 0) * Self.ms
            list.append(q)
        }
        let rec = VirtualRecording(config: config)
        let ring = rec.add("alice")
        let end = origin + 4030 * Self.ms
        rec.run([(ring, list)], until: end + 1000 * Self.ms)
        rec.finish(at: end + 1000 * Self.ms)
        let file = try #require(rec.sinks.participant("alice")).bytes
        let room = try #require(rec.sinks.room).bytes
        // The stretch after the last packet (up to `finish`) is `noPackets`; the rest is
        // what the test is about.
        let gaps = rec.allEvents.compactMap { e -> (Int64, Int64, GapCause)? in
            if case .gap(_, _, let s, let d, let c) = e, c != .noPackets { return (s, d, c) } else { return nil }
        }
        let turns = rec.allEvents.compactMap { e -> (Int64, Int64)? in
            if case .speakingTurn(_, let s, let e) = e { return (s, e) } else { return nil }
        }
        return Outcome(file: file, room: room, stats: rec.engine.stats().participants[0], gaps: gaps, turns: turns)
    }

    func direct(_ count: Int = 200) -> [Float] {
        let opus = TestEncoder.encode(TestSignal.speech(seconds: 4, seed: 11))
        return Array(TestEncoder.decode(Array(opus.prefix(count))).dropFirst(MediaEngine.senderPreSkip))
    }

    /// The first packet from `index` on whose 20 ms are speech, not a pause.
    func loudPacket(from index: Int) -> Int {
        let pcm = TestSignal.speech(seconds: 4, seed: 11)
        var i = index
        while i < 190 {
            let frame = pcm[(i * 960)..<((i + 1) * 960)]
            if (frame.reduce(0) { $0 + $1 * $1 } / 960).squareRoot() > 0.05 { return i }
            i += 1
        }
        return index
    }

    @Test func aPacket200msLateLandsInTheFileButNotInTheMix() throws {
        let k = loudPacket(from: 50)
        let late = try record(delays: [k: 200])
        let never = try record(drop: [k])
        let clean = try record()
        // The file: as if nothing had been late, bit for bit.
        #expect(late.file == clean.file)
        let fromFile = TestOggReader.decode(late.file)
        let want = direct()
        #expect(fromFile.count >= want.count)
        #expect(Array(fromFile.prefix(want.count)) == want)
        #expect(late.stats.lost == 0)
        #expect(late.stats.late == 0)
        #expect(late.stats.concealedMillis == 0)
        #expect(late.stats.gapMillis[.loss, default: 0] == 0)
        #expect(late.stats.packets == 200)
        // The mix and speech detection: as if the packet had never come.
        #expect(late.stats.mixLate == 1)
        #expect(late.stats.mixConcealedMillis == 20)
        let mixLate = TestOggReader.decode(late.room)
        #expect(mixLate.count > 4 * 48000)
        #expect(mixLate == TestOggReader.decode(never.room))
        #expect(mixLate != TestOggReader.decode(clean.room))
        #expect(late.turns.map(\.0) == never.turns.map(\.0))
        #expect(late.turns.map(\.1) == never.turns.map(\.1))
        // Never arriving is loss in both.
        #expect(never.stats.lost == 1)
        #expect(never.stats.concealedMillis == 20)
        #expect(never.stats.gapMillis[.loss] == 20)
        #expect(never.stats.mixConcealedMillis == 20)
        #expect(never.stats.mixLate == 0)
    }

    @Test func severalLateRetransmissionsAreReorderedIntoPlace() throws {
        // A single, a burst of two overtaken by later packets, one just inside the window,
        // and a pair swapped by 10 ms.
        let delays: [Int: UInt64] = [30: 120, 80: 300, 81: 280, 120: 360, 150: 10, 151: 0]
        var script = try record(delays: delays)
        #expect(script.file == (try record()).file)
        #expect(script.stats.lost == 0)
        #expect(script.stats.late == 0)
        #expect(script.stats.overlapDropped == 0)
        #expect(script.gaps.isEmpty)
        // 30, 80, 81 and 120 missed the live window; 150 (10 ms) did not.
        #expect(script.stats.mixLate == 4)
        #expect(script.stats.mixConcealedMillis == 80)
        // With the file's window as short as the live one, the same packets are lost.
        var short = MediaPipelineConfig()
        short.fileJitterWaitMillis = 60
        script = try record(delays: delays, config: short)
        #expect(script.stats.lost == 4)
        #expect(script.stats.late == 4)
        #expect(script.stats.concealedMillis == 80)
        #expect(script.stats.gapMillis[.loss] == 80)
    }

    @Test func aPacketLaterThanTheFileWindowIsLostAndLate() throws {
        let o = try record(delays: [60: 600, 61: 600])
        #expect(o.stats.lost == 2)
        #expect(o.stats.late == 2)
        #expect(o.stats.mixLate == 2)
        #expect(o.stats.concealedMillis == 40)
        #expect(o.stats.gapMillis[.loss] == 40)
        #expect(o.stats.packets == 198)
        #expect(o.stats.gapMillis[.noPackets] == (try record()).stats.gapMillis[.noPackets])
        // 40 ms is below the gap-event minimum: counted, not an event; the timeline holds.
        #expect(o.gaps.isEmpty)
        let report = OggOpusVerifier.verify(o.file)
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - (try OggOpusVerifier.verify(record().file)).durationMillis) < 1)
        let want = direct(60)
        #expect(Array(TestOggReader.decode(o.file).prefix(want.count)) == want)
    }

    @Test func aLongLossBurstIsOneLossGapAfterTheFileWindow() throws {
        let o = try record(drop: Set(100..<115))
        #expect(o.stats.lost == 15)
        #expect(o.stats.gapMillis[.loss] == 300)
        // 300 ms is longer than the concealment limit: a gap, not concealment.
        #expect(o.stats.concealedMillis == 0)
        #expect(o.gaps.count == 1)
        #expect(o.gaps.first?.2 == .loss)
        #expect(o.gaps.first?.1 == 300)
        #expect(abs((o.gaps.first?.0 ?? 0) - 2030) <= 2)
    }
}


import BedrudProtocol
import BedrudRuntime
import Foundation
import Testing

@testable import BedrudMedia

/// Scripted packet streams through the whole engine in virtual time. Arrival = media
/// time + 30 ms, so a stream that starts at media time t starts at session t + 30 ms.
@Suite(.serialized) struct PipelineScenarioTests {
    static let sec: UInt64 = 1_000_000_000
    let origin = VirtualRecording.origin

    func participantReport(_ rec: VirtualRecording, _ id: String) throws -> (OggOpusReport, [UInt8]) {
        let bytes = try #require(rec.sinks.participant(id)).bytes
        return (OggOpusVerifier.verify(bytes), bytes)
    }

    func opusinfoAccepts(_ bytes: [UInt8]) throws -> Bool {
        let path = try temporaryFile(bytes)
        let (status, out) = try runTool("/usr/bin/opusinfo", [path])
        let ok = status == 0 && !out.contains("WARNING") && !out.contains("ERROR") && !out.lowercased().contains("error")
        if !ok { print("opusinfo said:\n\(out)") }
        return ok
    }

    func gaps(_ rec: VirtualRecording) -> [(Int64, Int64, GapCause)] {
        rec.allEvents.compactMap { if case .gap(_, _, let s, let d, let c) = $0 { return (s, d, c) } else { return nil } }
    }

    // MARK: -

    @Test func cleanStreamWithReorderAndDuplicatesIsBitExact() throws {
        let pcm = TestSignal.speech(seconds: 5)
        let opus = TestEncoder.encode(pcm)
        var script = PacketScript()
        script.append(opus, firstSequence: 100, firstTimestamp: 5000, startSeconds: 0)
        // Swap neighbours every 7 packets and duplicate every 11th.
        var list = script.packets
        for i in stride(from: 5, to: list.count - 1, by: 7) { list.swapAt(i, i + 1) }
        for i in stride(from: 3, to: list.count, by: 11) { list.insert(list[i], at: i + 2) }
        let rec = VirtualRecording()
        let ring = rec.add("alice")
        let end = origin + 5 * Self.sec + 30_000_000
        rec.run([(ring, list)], until: end)
        rec.finish(at: origin + 5 * Self.sec + 30_000_000)
        let (report, bytes) = try participantReport(rec, "alice")
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - 5000) <= 20)
        // Only the encoder-delay tail after the last packet (6.5 ms) is concealment.
        #expect(report.gaps.filter { $0.durationMillis > 10 }.isEmpty, "\(report.gaps)")
        #expect(abs((Int(report.tags?.value("START_OFFSET_MS") ?? "") ?? 0) - 30) <= 1)
        #expect(report.tags?.value("PARTICIPANT_IDENTITY") == "alice")
        #expect(report.tags?.vendor == "bedrud-bot")
        // What a player decodes is exactly what libopus gives for the original packets.
        let direct = Array(TestEncoder.decode(opus).dropFirst(MediaEngine.senderPreSkip))
        let fromFile = TestOggReader.decode(bytes)
        #expect(fromFile.count >= direct.count)
        #expect(Array(fromFile.prefix(direct.count)) == direct)
        #expect(try opusinfoAccepts(bytes))
        let stats = rec.engine.stats().participants[0]
        #expect(stats.duplicates > 0)
        #expect(stats.lost == 0)
    }

    @Test func lossBurstsAndSingleLossesKeepTheTimelineAndUseFEC() throws {
        let pcm = TestSignal.speech(seconds: 6, seed: 3)
        let opus = TestEncoder.encode(pcm, fec: true, lossPercent: 20)
        var script = PacketScript()
        script.append(opus, firstSequence: 65500, firstTimestamp: UInt32.max - 48000, startSeconds: 0)
        // Single losses at 50, 120, 200; a 10-packet burst at 150.
        let lost: Set<Int> = Set([50, 120, 200]).union(150..<160)
        let list = script.packets.enumerated().filter { !lost.contains($0.offset) }.map(\.element)
        let rec = VirtualRecording()
        let ring = rec.add("bob")
        rec.run([(ring, list)], until: origin + 6 * Self.sec + 30_000_000)
        rec.finish(at: origin + 6 * Self.sec + 30_000_000)
        let (report, bytes) = try participantReport(rec, "bob")
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - 6000) <= 20)
        let real = report.gaps.filter { $0.durationMillis > 10 }
        #expect(abs(real.reduce(0) { $0 + $1.durationMillis } - Double(lost.count * 20)) <= 1)
        #expect(real.count == 4)
        // Before the first loss the PCM is identical to a direct decode.
        let direct = Array(TestEncoder.decode(Array(opus.prefix(50))).dropFirst(MediaEngine.senderPreSkip))
        let fromFile = TestOggReader.decode(bytes)
        #expect(Array(fromFile.prefix(direct.count)) == direct)
        let stats = rec.engine.stats().participants[0]
        #expect(stats.lost == lost.count)
        // Packet 51 carries no LBRR data, so the loss at 50 is concealment (FECCountTests).
        #expect(stats.fecRecovered == 2)
        // The 200 ms burst is reported as one loss gap; single losses are only counted.
        let lossGaps = gaps(rec)
        #expect(lossGaps.count == 1)
        #expect(lossGaps.allSatisfy { $0.2 == .loss })
        #expect(try opusinfoAccepts(bytes))
    }

    @Test func ssrcChangeMidStreamIsAReconnectGap() throws {
        let a = TestEncoder.encode(TestSignal.speech(seconds: 3, seed: 5))
        let b = TestEncoder.encode(TestSignal.speech(seconds: 3, seed: 6))
        var script = PacketScript()
        script.append(a, ssrc: 0xAAAA, firstSequence: 10, firstTimestamp: 1000, startSeconds: 0)
        script.append(b, ssrc: 0xBBBB, firstSequence: 40000, firstTimestamp: 3_000_000_000, startSeconds: 5)
        let rec = VirtualRecording()
        let ring = rec.add("carol")
        rec.run([(ring, script.packets)], until: origin + 8 * Self.sec + 30_000_000)
        rec.finish(at: origin + 8 * Self.sec + 30_000_000)
        let (report, bytes) = try participantReport(rec, "carol")
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - 8000) <= 20)
        let g = gaps(rec)
        #expect(g.count == 1)
        #expect(g.first?.2 == .reconnect)
        #expect(abs((g.first?.1 ?? 0) - 2000) <= 20)
        #expect(abs((g.first?.0 ?? 0) - 3030) <= 20)
        #expect(try opusinfoAccepts(bytes))
    }

    @Test func tenSecondMuteIsFilledAndAttributed() throws {
        let a = TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 7))
        let b = TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 8))
        var script = PacketScript()
        script.append(a, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        // Muted from 2 s to 12 s: no packets; timestamps follow the sender's clock.
        script.append(b, firstSequence: 101, firstTimestamp: 12 * 48000, startSeconds: 12)
        let rec = VirtualRecording()
        let ring = rec.add("dave")
        rec.run(
            [(ring, script.packets)], until: origin + 14 * Self.sec + 30_000_000,
            controls: [
                (origin + 2_050_000_000, .setMuted(identity: "dave", muted: true)),
                (origin + 12 * Self.sec, .setMuted(identity: "dave", muted: false)),
            ])
        rec.finish(at: origin + 14 * Self.sec + 30_000_000)
        let (report, bytes) = try participantReport(rec, "dave")
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - 14000) <= 20)
        let g = gaps(rec)
        #expect(g.map(\.2) == [.mute])
        #expect(abs((g.first?.1 ?? 0) - 10000) <= 20)
        let muteStats = rec.engine.stats().participants[0].gapMillis
        #expect(abs((muteStats[.mute] ?? 0) - 10000) <= 20)
        #expect(try opusinfoAccepts(bytes))
    }

    /// Someone who joins muted and stays silent still gets a file from when they joined.
    @Test func participantWhoJoinsMutedGetsAFileFromTheJoin() throws {
        let talk = TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 90))
        var s = PacketScript()
        s.append(talk, firstSequence: 1, firstTimestamp: 0, startSeconds: 5)
        let rec = VirtualRecording()
        let ring = rec.add("muted-joiner", at: origin + 1 * Self.sec)
        rec.engine.apply(.setMuted(identity: "muted-joiner", muted: true), now: origin + 1 * Self.sec)
        rec.run([(ring, s.packets)], until: origin + 8 * Self.sec, controls: [(origin + 4_900_000_000, .setMuted(identity: "muted-joiner", muted: false))])
        rec.finish(at: origin + 8 * Self.sec)
        let (report, bytes) = try participantReport(rec, "muted-joiner")
        #expect(report.isValid, "\(report.problems)")
        #expect(report.tags?.value("START_OFFSET_MS") == "1000")
        #expect(abs(report.durationMillis - 7000) <= 20)
        let g = gaps(rec)
        #expect(g.first?.2 == .mute)
        #expect(abs((g.first?.1 ?? 0) - 4030) <= 20)
        #expect(try opusinfoAccepts(bytes))
    }

    @Test func dtxSilenceIsFilledAsDTX() throws {
        // 1 s talk, 3 s DTX (a packet every 400 ms, contiguous sequence numbers), 1 s talk.
        let talk = TestEncoder.encode(TestSignal.speech(seconds: 1, seed: 9))
        var script = PacketScript()
        script.append(talk, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        var seq: UInt16 = 51
        for k in 0..<7 {
            let t = 1.0 + Double(k) * 0.4
            script.append([[UInt8(0x08)]], firstSequence: seq, firstTimestamp: UInt32(t * 48000), startSeconds: t)
            seq &+= 1
        }
        script.append(talk, firstSequence: seq, firstTimestamp: 4 * 48000, startSeconds: 4)
        let rec = VirtualRecording()
        let ring = rec.add("erin")
        rec.run([(ring, script.packets)], until: origin + 5 * Self.sec + 30_000_000)
        rec.finish(at: origin + 5 * Self.sec + 30_000_000)
        let (report, bytes) = try participantReport(rec, "erin")
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - 5000) <= 20)
        let stats = rec.engine.stats().participants[0]
        #expect(stats.lost == 0)
        let dtxMillis: Int64 = stats.gapMillis[.dtx] ?? 0
        #expect(abs(dtxMillis - 2860) <= 40)
        #expect(gaps(rec).allSatisfy { $0.2 == .dtx })
        #expect(try opusinfoAccepts(bytes))
    }

    @Test func reconnectContinuesTheSameFile() throws {
        let a = TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 11))
        let b = TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 12))
        var s1 = PacketScript()
        s1.append(a, ssrc: 1, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        var s2 = PacketScript()
        s2.append(b, ssrc: 2, firstSequence: 9, firstTimestamp: 777, startSeconds: 5)
        let rec = VirtualRecording()
        let ring1 = rec.add("frank", sid: "TR_1")
        let ring2 = PacketRing(capacity: 256)
        rec.run(
            [(ring1, s1.packets), (ring2, s2.packets)], until: origin + 7 * Self.sec + 30_000_000,
            controls: [
                (origin + 2_500_000_000, .participantReconnecting(identity: "frank")),
                (origin + 2_600_000_000, .removeTrack(trackSid: "TR_1")),
                (origin + 4_900_000_000, .addTrack(MediaTrackSpec(trackSid: "TR_2", participantIdentity: "frank", participantName: "frank"), ring2)),
            ])
        rec.finish(at: origin + 7 * Self.sec + 30_000_000)
        #expect(rec.sinks.sinks.count == 2)  // room + one participant file
        let (report, bytes) = try participantReport(rec, "frank")
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - 7000) <= 20)
        let g = gaps(rec)
        #expect(g.map(\.2) == [.reconnect])
        #expect(abs((g.first?.1 ?? 0) - 3000) <= 20)
        #expect(try opusinfoAccepts(bytes))
    }

    @Test func startBurstAfterSubscribingDoesNotShiftTheStart() throws {
        let opus = TestEncoder.encode(TestSignal.speech(seconds: 3, seed: 13))
        var script = PacketScript()
        script.append(opus, firstSequence: 1, firstTimestamp: 0, startSeconds: 1)
        // The first 20 packets (400 ms) were queued at the SFU and arrive in one burst
        // with packet 20.
        let burstArrival = script.packets[20].arrivalNanos
        for i in 0..<20 { script.packets[i].arrivalNanos = burstArrival - UInt64(20 - i) * 100_000 }
        let rec = VirtualRecording()
        let ring = rec.add("gina")
        rec.run([(ring, script.packets)], until: origin + 4 * Self.sec + 30_000_000)
        rec.finish(at: origin + 4 * Self.sec + 30_000_000)
        let (report, _) = try participantReport(rec, "gina")
        #expect(report.isValid, "\(report.problems)")
        let offset = Int64(report.tags?.value("START_OFFSET_MS") ?? "") ?? -1
        #expect(abs(offset - 1030) <= 20, "start offset \(offset) ms")
        #expect(abs(report.durationMillis - 3000) <= 20)
    }

    @Test func lateJoinerLinesUpWithTheMixedFile() throws {
        // Two speakers who never overlap: the room file must hold each one at the
        // offset their own file says.
        let aPCM = TestSignal.speech(seconds: 6, pitch: 120, seed: 20, talkUntil: 3)
        let bPCM = TestSignal.speech(seconds: 4, pitch: 210, seed: 21, talkFrom: 1)
        var sa = PacketScript()
        sa.append(TestEncoder.encode(aPCM), ssrc: 1, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        var sb = PacketScript()
        sb.append(TestEncoder.encode(bPCM), ssrc: 2, firstSequence: 500, firstTimestamp: 12345, startSeconds: 2)
        var config = MediaPipelineConfig()
        config.mixBitrate = 64000
        let rec = VirtualRecording(config: config)
        let ra = rec.add("ann")
        let rb = rec.add("ben", at: origin + 2 * Self.sec)
        rec.run([(ra, sa.packets), (rb, sb.packets)], until: origin + 6 * Self.sec + 30_000_000)
        rec.finish(at: origin + 6 * Self.sec + 30_000_000)
        let (repA, bytesA) = try participantReport(rec, "ann")
        let (repB, bytesB) = try participantReport(rec, "ben")
        let roomBytes = try #require(rec.sinks.room).bytes
        let room = OggOpusVerifier.verify(roomBytes)
        #expect(room.isValid, "\(room.problems)")
        #expect(repA.isValid && repB.isValid)
        #expect(abs(room.durationMillis - 6030) <= 20)
        let offA = Int(repA.tags?.value("START_OFFSET_MS") ?? "") ?? -1
        let offB = Int(repB.tags?.value("START_OFFSET_MS") ?? "") ?? -1
        #expect(abs(offA - 30) <= 20 && abs(offB - 2030) <= 20)
        // Place each decoded participant file at its offset and compare with the room.
        let mixed = TestOggReader.decode(roomBytes)
        // Offsets are whole milliseconds: find each file's sub-millisecond lag (≤ 1 ms).
        var sum = [Float](repeating: 0, count: mixed.count)
        for (bytes, off) in [(bytesA, offA), (bytesB, offB)] {
            var placed = [Float](repeating: 0, count: mixed.count)
            for (i, x) in TestOggReader.decode(bytes).enumerated() where off * 48 + i < placed.count { placed[off * 48 + i] = x }
            let (_, lag) = bestCorrelation(mixed, placed, maxLag: 48)
            for i in 0..<placed.count where i - lag >= 0 && i - lag < placed.count { sum[i] += placed[i - lag] }
        }
        let c = correlation(mixed, sum)
        let codecOnly = bestCorrelation(TestOggReader.decode(bytesA), aPCM, maxLag: 48).0
        print("late joiner: mix vs participant files at their offsets: \(c); one Opus pass (file A vs its source): \(codecOnly)")
        #expect(c > 0.9)
        // Shifted by 20 ms it is clearly worse: the files line up by their offsets.
        let shifted = Array(repeating: Float(0), count: 960) + sum.dropLast(960)
        #expect(correlation(mixed, shifted) < c - 0.1)
        #expect(try opusinfoAccepts(roomBytes))
    }

    @Test func twoSpeakerMixCorrelatesAndNeverWrapsAround() throws {
        // Two loud overlapping speakers: their sum exceeds full scale.
        let aPCM = TestSignal.speech(seconds: 5, pitch: 110, seed: 30, amplitude: 0.9)
        let bPCM = TestSignal.speech(seconds: 5, pitch: 190, seed: 31, amplitude: 0.9)
        var sa = PacketScript()
        sa.append(TestEncoder.encode(aPCM, bitrate: 64000), ssrc: 1, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        var sb = PacketScript()
        sb.append(TestEncoder.encode(bPCM, bitrate: 64000), ssrc: 2, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        var config = MediaPipelineConfig()
        config.mixBitrate = 64000
        let rec = VirtualRecording(config: config)
        let ra = rec.add("p1")
        let rb = rec.add("p2")
        rec.run([(ra, sa.packets), (rb, sb.packets)], until: origin + 5 * Self.sec + 30_000_000)
        rec.finish(at: origin + 5 * Self.sec + 30_000_000)
        let roomBytes = try #require(rec.sinks.room).bytes
        let mixed = TestOggReader.decode(roomBytes)
        // The mixer's input: each participant's file decoded, placed at its offset.
        var decodedSum = [Float](repeating: 0, count: mixed.count)
        for id in ["p1", "p2"] {
            let (rep, bytes) = try participantReport(rec, id)
            let off = (Int(rep.tags?.value("START_OFFSET_MS") ?? "") ?? 0) * 48
            for (i, x) in TestOggReader.decode(bytes).enumerated() where off + i < decodedSum.count { decodedSum[off + i] += x }
        }
        // The raw sources, at their send time + 30 ms.
        var sum = [Float](repeating: 0, count: mixed.count)
        for (pcm, off) in [(aPCM, 30 * 48), (bPCM, 30 * 48)] {
            for (i, x) in pcm.enumerated() where off + i < sum.count { sum[off + i] += x }
        }
        let (cDecoded, lagDecoded) = bestCorrelation(mixed, decodedSum, maxLag: 96)
        let (cSources, lagSources) = bestCorrelation(mixed, sum, maxLag: 96)
        print("two loud speakers: mix vs sum of decoded tracks \(cDecoded) (lag \(lagDecoded)), vs sum of raw sources \(cSources) (lag \(lagSources)); source peak \(sum.map(abs).max() ?? 0), mix peak \(mixed.map(abs).max() ?? 0)")
        #expect((sum.map(abs).max() ?? 0) > 1.0)
        #expect(cDecoded > 0.8)
        // Decoded Opus may ring slightly past the limiter's −1 dBFS, never far.
        #expect((mixed.map(abs).max() ?? 2) <= 1.05)
        // No wrap-around: where the mixer's input is loud the mix keeps its sign
        // (compared at the best lag, since offsets are whole milliseconds).
        var flips = 0, loud = 0
        for i in max(0, lagDecoded)..<min(decodedSum.count, mixed.count) where abs(decodedSum[i - lagDecoded]) > 0.8 {
            loud += 1
            if (decodedSum[i - lagDecoded] > 0) != (mixed[i] > 0) { flips += 1 }
        }
        #expect(loud > 1000)
        #expect(flips <= loud / 200, "\(flips) of \(loud) loud samples changed sign")
        #expect(rec.engine.stats().mixLimitedFrames > 0)
    }

    /// `mixCoder`: CELT packets only (TOC configurations 16–31) with CELT's 2.5 ms pre-skip,
    /// or the voice coder's SILK/hybrid packets (0–15) with 6.5 ms; both carry the room.
    @Test(arguments: MixCoder.allCases)
    func theMixIsWrittenWithTheChosenCoder(coder: MixCoder) throws {
        let pcm = TestSignal.speech(seconds: 3, pitch: 140, seed: 40, amplitude: 0.5)
        var script = PacketScript()
        script.append(TestEncoder.encode(pcm, bitrate: 32000), ssrc: 1, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        var config = MediaPipelineConfig()
        config.mixCoder = coder
        config.mixBitrate = coder == .celt ? 64000 : 32000
        config.mixPassthrough = false  // one voice alone would go into the mix as its own packets
        let rec = VirtualRecording(config: config)
        let r = rec.add("p1")
        rec.run([(r, script.packets)], until: origin + 3 * Self.sec + 30_000_000)
        rec.finish(at: origin + 3 * Self.sec + 30_000_000)
        let roomBytes = try #require(rec.sinks.room).bytes
        #expect(OggOpusVerifier.verify(roomBytes).isValid)
        let packets = TestOggReader.packets(roomBytes)
        let head = try #require(packets.first.flatMap(OpusHead.parse))
        // Audio packets: concealment packets of the silent stretches repeat the last TOC.
        let configs = Set(packets.dropFirst(2).filter { $0.count > 3 }.map { $0[0] >> 3 })
        if coder == .celt {
            #expect(head.preSkip == 120)
            #expect(!configs.isEmpty && configs.allSatisfy { $0 >= 16 }, "\(configs)")
        } else {
            #expect(head.preSkip == 312)
            #expect(!configs.isEmpty && configs.allSatisfy { $0 < 16 }, "\(configs)")
        }
        let (rep, bytes) = try participantReport(rec, "p1")
        let off = (Int(rep.tags?.value("START_OFFSET_MS") ?? "") ?? 0) * 48
        let mixed = TestOggReader.decode(roomBytes)
        var placed = [Float](repeating: 0, count: mixed.count)
        for (i, x) in TestOggReader.decode(bytes).enumerated() where off + i < placed.count { placed[off + i] = x }
        let (c, _) = bestCorrelation(mixed, placed, maxLag: 96)
        #expect(c > (coder == .celt ? 0.95 : 0.8), "mix against the participant's file: \(c)")
    }

    @Test func stereoMixPansSpeakers() throws {
        let aPCM = TestSignal.tone(seconds: 2, frequency: 300, amplitude: 0.3)
        var sa = PacketScript()
        sa.append(TestEncoder.encode(aPCM), ssrc: 1, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        var sb = PacketScript()
        sb.append(TestEncoder.encode(aPCM), ssrc: 2, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        var config = MediaPipelineConfig()
        config.mixChannels = 2
        config.mixBitrate = 64000
        let rec = VirtualRecording(config: config)
        _ = rec.add("center")
        let rb = rec.add("left")  // second participant is panned to −0.8
        rec.run([(rb, sb.packets)], until: origin + 2 * Self.sec + 30_000_000)
        rec.finish(at: origin + 2 * Self.sec + 30_000_000)
        let roomBytes = try #require(rec.sinks.room).bytes
        let report = OggOpusVerifier.verify(roomBytes)
        #expect(report.head?.channelCount == 2)
        let st = TestOggReader.decode(roomBytes, channels: 2)
        var l = 0.0, r = 0.0
        for i in stride(from: 0, to: st.count - 1, by: 2) {
            l += Double(st[i] * st[i])
            r += Double(st[i + 1] * st[i + 1])
        }
        #expect(l > 4 * r, "left \(l) right \(r)")
        _ = sa
    }

    @Test func speakingTurnsFollowTheSpeech() throws {
        // Talk 0.5–1.5 s and 3–4 s only.
        var pcm = TestSignal.tone(seconds: 5, frequency: 220, amplitude: 0.2)
        for i in 0..<pcm.count {
            let t = Double(i) / 48000
            if !((t >= 0.5 && t < 1.5) || (t >= 3 && t < 4)) { pcm[i] = 0 }
        }
        var s = PacketScript()
        s.append(TestEncoder.encode(pcm), firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        let rec = VirtualRecording()
        let ring = rec.add("hana")
        rec.run([(ring, s.packets)], until: origin + 5 * Self.sec + 30_000_000)
        rec.finish(at: origin + 5 * Self.sec + 30_000_000)
        let turns = rec.allEvents.compactMap { e -> (Int64, Int64)? in
            if case .speakingTurn("hana", let a, let b) = e { return (a, b) } else { return nil }
        }
        #expect(turns.count == 2, "\(turns)")
        if turns.count == 2 {
            #expect(abs(turns[0].0 - 530) <= 40 && abs(turns[0].1 - 1530) <= 40)
            #expect(abs(turns[1].0 - 3030) <= 40 && abs(turns[1].1 - 4030) <= 40)
        }
    }

    @Test func corruptPacketsAreCountedAndConcealed() throws {
        var opus = TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 40))
        opus[10] = [UInt8(31 << 3 | 3), 0]  // zero frames: invalid
        opus[20] = []  // empty payload
        var s = PacketScript()
        s.append(opus, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        let rec = VirtualRecording()
        let ring = rec.add("ivan")
        rec.run([(ring, s.packets)], until: origin + 2 * Self.sec + 30_000_000)
        rec.finish(at: origin + 2 * Self.sec + 30_000_000)
        let (report, _) = try participantReport(rec, "ivan")
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - 2000) <= 20)
        #expect(rec.engine.stats().participants[0].corrupt == 2)
    }

    @Test func participantWhoLeavesGetsAFinishedFileEndingThen() throws {
        let opus = TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 41))
        var s = PacketScript()
        s.append(opus, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        let rec = VirtualRecording()
        let ring = rec.add("jo")
        rec.run([(ring, s.packets)], until: origin + 6 * Self.sec, controls: [(origin + 4 * Self.sec, .participantLeft(identity: "jo"))])
        let sink = try #require(rec.sinks.participant("jo"))
        #expect(sink.isClosed && sink.closedCleanly)
        let report = OggOpusVerifier.verify(sink.bytes)
        #expect(report.isValid)
        #expect(abs(report.durationMillis - 3970) <= 20)
        #expect(rec.allEvents.contains { if case .gap(_, _, _, _, .noPackets) = $0 { return true } else { return false } })
        rec.finish(at: origin + 6 * Self.sec)
    }
    /// Two tracks sent at the same instant, one with 80 ms more network delay, each with
    /// sender reports from its publisher's own clock (LiveKit passes them through): the
    /// clocks agree, or B's runs 2 s ahead. Either way each participant is placed by its
    /// own packets, B 80 ms after A as it arrived, and every packet is in the files. With
    /// one NTP offset for the session, B's fast clock placed A 2 s early and A lost its audio.
    @Test(arguments: [0, 2000])
    func eachPublishersReportClockPlacesOnlyItsOwnTrack(skewMillis: Int) throws {
        let opus = TestEncoder.encode(TestSignal.speech(seconds: 3, seed: 70))
        var sa = PacketScript()
        sa.append(opus, ssrc: 1, firstSequence: 1, firstTimestamp: 1000, startSeconds: 0, networkDelayMillis: 30)
        var sb = PacketScript()
        sb.append(opus, ssrc: 2, firstSequence: 1, firstTimestamp: 777_777, startSeconds: 0, networkDelayMillis: 110)
        // NTP time (RFC 3550 §4) of media time 0 on each publisher's clock: seconds since 1900.
        let ntp0: UInt64 = UInt64(3_970_000_000) << 32
        let ntpB = ntp0 + (UInt64(skewMillis) << 32) / 1000
        sa.packets.insert(ScriptedPacket(sequence: 0, timestamp: 1000, arrivalNanos: 1_029_000_000, ssrc: 1, payload: [], ntp: ntp0), at: 0)
        sb.packets.insert(ScriptedPacket(sequence: 0, timestamp: 777_777, arrivalNanos: 1_109_000_000, ssrc: 2, payload: [], ntp: ntpB), at: 0)
        let rec = VirtualRecording()
        let ra = rec.add("sr-a")
        let rb = rec.add("sr-b")
        rec.run([(ra, sa.packets), (rb, sb.packets)], until: origin + 3 * Self.sec + 200_000_000)
        rec.finish(at: origin + 3 * Self.sec + 200_000_000)
        let (a, _) = try participantReport(rec, "sr-a")
        let (b, _) = try participantReport(rec, "sr-b")
        #expect(a.isValid && b.isValid)
        let offA = Int(a.tags?.value("START_OFFSET_MS") ?? "") ?? -1
        let offB = Int(b.tags?.value("START_OFFSET_MS") ?? "") ?? -1
        #expect(abs(offB - offA - 80) <= 20, "A \(offA) ms, B \(offB) ms")
        let stats = rec.engine.stats().participants
        #expect(stats.map(\.packets) == [opus.count, opus.count] && stats.map(\.overlapDropped) == [0, 0])
    }

    /// Stereo senders and every Opus frame size from 2.5 to 120 ms keep duration and PCM.
    @Test(arguments: [(1, 120), (1, 480), (1, 2880), (1, 5760), (2, 960), (2, 1920)])
    func frameSizesAndStereoArePassedThroughExactly(channels: Int, frame: Int) throws {
        var pcm = TestSignal.speech(seconds: 3, seed: 80)
        if channels == 2 { pcm = pcm.flatMap { [$0, $0 * 0.5] } }
        let opus = TestEncoder.encode(pcm, channels: channels, frameSamples: frame, bitrate: 48000, application: 2049)
        var s = PacketScript()
        s.append(opus, firstSequence: 60000, firstTimestamp: 123, startSeconds: 0, frameSamples: frame)
        let rec = VirtualRecording()
        let ring = rec.add("fs")
        let mediaEnd = Double(opus.count * frame) / 48000
        let end = origin + UInt64((mediaEnd + 0.03) * 1e9)
        rec.run([(ring, s.packets)], until: end)
        rec.finish(at: end)
        let (report, bytes) = try participantReport(rec, "fs")
        #expect(report.isValid, "\(report.problems)")
        #expect(report.head?.channelCount == UInt8(channels))
        #expect(abs(report.durationMillis - mediaEnd * 1000) <= 20)
        let direct = Array(TestEncoder.decode(opus, channels: channels).dropFirst(MediaEngine.senderPreSkip * channels))
        let fromFile = TestOggReader.decode(bytes, channels: channels)
        #expect(Array(fromFile.prefix(direct.count)) == Array(direct.prefix(fromFile.count)))
        #expect(fromFile.count >= direct.count - 960 * channels)
        #expect(try opusinfoAccepts(bytes))
    }
}

extension PipelineScenarioTests {
    /// A room that is silent for 3 s, then has a speaker for 2 s: the silent stretch is
    /// written without encoding (concealment packets after a few encoded frames), the
    /// file keeps its full duration, decodes to silence there and to the speech after.
    @Test func silentMixIsWrittenWithoutEncoding() throws {
        let pcm = TestSignal.speech(seconds: 2, seed: 7)
        let opus = TestEncoder.encode(pcm)
        var script = PacketScript()
        script.append(opus, firstSequence: 1, firstTimestamp: 0, startSeconds: 3)
        let rec = VirtualRecording()
        let ring = rec.add("alice")
        let end = origin + 6 * Self.sec
        rec.run([(ring, script.packets)], until: end)
        rec.finish(at: end)
        let mixer = try #require(rec.engine.mixer)
        // About 3 s + mix latency of silence, less the warm-up frames, were not encoded.
        #expect(mixer.silentFramesSkipped > 140, "\(mixer.silentFramesSkipped)")
        #expect(mixer.framesEncoded < 200, "\(mixer.framesEncoded)")
        let bytes = try #require(rec.sinks.room).bytes
        let report = OggOpusVerifier.verify(bytes)
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - 6000) <= 20, "\(report.durationMillis)")
        #expect(try opusinfoAccepts(bytes))
        let mixed = TestOggReader.decode(bytes)
        #expect(mixed.count >= 5 * 48000)
        // Silence decodes to silence (nothing before the speaker started at ~3 s).
        #expect(mixed[0..<(2 * 48000)].allSatisfy { abs($0) < 1e-4 })
        // The speech after it is intact: the room matches the participant's file placed
        // at its offset (one codec pass each, as in the late-joiner test).
        let (_, aliceBytes) = try participantReport(rec, "alice")
        let off = Int(OggOpusVerifier.verify(aliceBytes).tags?.value("START_OFFSET_MS") ?? "") ?? -1
        var placed = [Float](repeating: 0, count: mixed.count)
        for (i, x) in TestOggReader.decode(aliceBytes).enumerated() where off >= 0 && off * 48 + i < placed.count { placed[off * 48 + i] = x }
        let (c, _) = bestCorrelation(Array(mixed[(3 * 48000)...]), Array(placed[(3 * 48000)...]), maxLag: 48)
        // Always encoding gives 0.895 on this signal; the bypass and reset give 0.891.
        #expect(c > 0.85, "correlation \(c)")
    }
}

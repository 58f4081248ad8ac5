import BedrudProtocol
import Foundation
import Testing

@testable import BedrudMedia

/// `record.align = session`: a late joiner's file starts at session sample 0,
/// padded with two-byte concealment packets that decode to silence, so it lines up with
/// everyone else's in an audio editor.
@Suite(.serialized) struct MediaEngineAlignToSessionTests {
    static let sec: UInt64 = 1_000_000_000
    let origin = VirtualRecording.origin

    /// Host talks from 0 s; the late joiner's 550 Hz tone starts at media time 3 s (session
    /// 3.03 s: arrival is media time + 30 ms); the session ends at 6.1 s.
    func record(align: Bool) -> VirtualRecording {
        var config = MediaPipelineConfig()
        config.alignToSession = align
        let rec = VirtualRecording(config: config)
        var host = PacketScript()
        host.append(TestEncoder.encode(TestSignal.speech(seconds: 6, seed: 3)), firstSequence: 10, firstTimestamp: 1000, startSeconds: 0)
        var late = PacketScript()
        late.append(TestEncoder.encode(TestSignal.tone(seconds: 3, frequency: 550, amplitude: 0.3)), ssrc: 0x2222,
                    firstSequence: 60000, firstTimestamp: 4_000_000_000, startSeconds: 3)
        let hostRing = rec.add("host")
        let lateRing = rec.add("late", at: origin + 3 * Self.sec)
        rec.run([(hostRing, host.packets), (lateRing, late.packets)], until: origin + 6 * Self.sec + 100_000_000)
        rec.finish(at: origin + 6 * Self.sec + 100_000_000)
        return rec
    }

    @Test func lateJoinerIsPaddedFromTheSessionStart() throws {
        let rec = record(align: true)
        let hostBytes = try #require(rec.sinks.participant("host")).bytes
        let lateBytes = try #require(rec.sinks.participant("late")).bytes
        let host = OggOpusVerifier.verify(hostBytes), late = OggOpusVerifier.verify(lateBytes)
        #expect(host.isValid, "\(host.problems)")
        #expect(late.isValid, "\(late.problems)")
        // Both files run from the session's start to its end: equal within a frame.
        #expect(abs(host.durationMillis - 6100) <= 20, "\(host.durationMillis)")
        #expect(abs(late.durationMillis - host.durationMillis) <= 20, "\(late.durationMillis) vs \(host.durationMillis)")
        // The tags say the truth: the file starts at 0; the audio at about 3030 ms.
        #expect(late.tags?.value("START_OFFSET_MS") == "0")
        let audioStart = try #require(Int(late.tags?.value("AUDIO_START_OFFSET_MS") ?? ""))
        #expect(abs(audioStart - 3030) <= 3, "\(audioStart)")

        // Decoded as a player would: the length is the granule's, the padding silent, the
        // tone's onset where it was in the session (± one 20 ms frame).
        let pcm = TestOggReader.decode(lateBytes)
        #expect(abs(Double(pcm.count) - late.durationMillis * 48) <= 1, "\(pcm.count)")
        let onset = try #require(pcm.firstIndex { abs($0) > 0.05 })
        #expect(abs(Double(onset) / 48 - 3030) <= 20, "onset at \(Double(onset) / 48) ms")
        let padding = pcm[0..<(audioStart - 20) * 48]
        #expect(padding.allSatisfy { abs($0) < 1e-4 }, "padding peak \(padding.map { abs($0) }.max() ?? 0)")

        // The padding costs next to nothing: a handful of two-byte packets, no gap event.
        let packets = TestOggReader.packets(lateBytes).dropFirst(2)
        let pad = packets.prefix { $0.count == 2 }
        #expect(pad.count <= 3030 / 120 + 2, "\(pad.count) padding packets")
        #expect(pad.reduce(0) { $0 + (OpusPacketInfo.parse($1.withUnsafeBytes { $0 })?.samples ?? 0) } >= (audioStart - 3) * 48)
        let unaligned = try #require(record(align: false).sinks.participant("late")).bytes
        #expect(lateBytes.count - unaligned.count < 600, "padding took \(lateBytes.count - unaligned.count) bytes")
        let lateGaps = rec.allEvents.filter { if case .gap(let id, _, let start, _, _) = $0 { return id == "late" && start < 3000 } else { return false } }
        #expect(lateGaps.isEmpty, "\(lateGaps)")
        let started = rec.allEvents.compactMap { if case .fileStarted("late", _, let s) = $0 { return s } else { return nil } }
        #expect(started == [0])
    }

    /// A minute of padding in passthrough: 500 two-byte packets and a page a second.
    @Test func aMinuteOfPaddingCostsAFewKilobytes() throws {
        var config = MediaPipelineConfig()
        config.alignToSession = true
        config.decode = false
        let rec = VirtualRecording(config: config)
        let p = ParticipantRecorder(
            spec: MediaTrackSpec(trackSid: "TR_x", participantIdentity: "x", participantName: "x"), streamID: 7, config: config, pan: 0)
        rec.engine.startFile(p, at: 60 * 48000, stereo: false)
        rec.engine.finishParticipant(p, at: 60 * 48000)
        let bytes = try #require(rec.sinks.participant("x")).bytes
        let report = OggOpusVerifier.verify(bytes)
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - 60000) <= 3, "\(report.durationMillis)")
        #expect(report.audioPackets <= 60000 / 120 + 3, "\(report.audioPackets) packets")
        #expect(bytes.count < 4000, "a minute of padding took \(bytes.count) bytes")
        print("60 s of padding: \(bytes.count) bytes, \(report.pages) pages, \(report.audioPackets) packets")
        #expect(TestOggReader.decode(bytes).allSatisfy { $0 == 0 })
    }

    @Test func joinAlignmentStartsAtTheFirstAudio() throws {
        let rec = record(align: false)
        let late = OggOpusVerifier.verify(try #require(rec.sinks.participant("late")).bytes)
        #expect(late.isValid, "\(late.problems)")
        #expect(abs((Int(late.tags?.value("START_OFFSET_MS") ?? "") ?? 0) - 3030) <= 3)
        #expect(late.tags?.value("AUDIO_START_OFFSET_MS") == nil)
        #expect(abs(late.durationMillis - 3070) <= 20, "\(late.durationMillis)")
    }
}

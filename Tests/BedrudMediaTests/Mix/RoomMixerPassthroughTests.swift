import Testing

@testable import BedrudMedia

/// While one voice alone is heard, its packets go into `room.opus` as they are
/// (``RoomMixer``): the mix sounds the same as the encoded one, without clicks or a shift
/// where the runs begin and end, and most of it costs no encoding.
@Suite(.serialized) struct RoomMixerPassthroughTests {
    static let sec: UInt64 = 1_000_000_000

    /// A talks alone 0–2.5 s, A and B together 2.5–3 s, B alone 3–6 s, A alone again
    /// 6–8 s. Returns the engine's mix and the mixer's counters.
    static func record(passthrough: Bool) throws -> (pcm: [Float], stats: MediaStats, switches: [Int64]) {
        var config = MediaPipelineConfig()
        config.mixPassthrough = passthrough
        let rec = VirtualRecording(config: config)
        let a = zip(TestSignal.speech(seconds: 8, seed: 1, talkUntil: 3), TestSignal.speech(seconds: 8, seed: 5, talkFrom: 6)).map { $0 + $1 }
        let b = TestSignal.speech(seconds: 8, pitch: 210, seed: 2, talkFrom: 2.5, talkUntil: 6)
        var sa = PacketScript(), sb = PacketScript()
        sa.append(TestEncoder.encode(a, signalVoice: true), firstSequence: 10, firstTimestamp: 1000, startSeconds: 0)
        // B's clock is 7 ms off A's grid: its packets never line up with the mix's frames.
        sb.append(TestEncoder.encode(b, signalVoice: true), ssrc: 0x2222, firstSequence: 500, firstTimestamp: 90_000, startSeconds: 0.007)
        let ra = rec.add("a"), rb = rec.add("b")
        let end = VirtualRecording.origin + 8 * Self.sec + 200_000_000
        rec.run([(ra, sa.packets), (rb, sb.packets)], until: end)
        rec.finish(at: end)
        let bytes = try #require(rec.sinks.room).bytes
        let report = OggOpusVerifier.verify(bytes)
        #expect(report.isValid, "\(report.problems)")
        let switches = rec.engine.mixer?.switches ?? []
        return (TestOggReader.decode(bytes), rec.engine.stats(), switches)
    }

    @Test func oneVoiceIsPassedThroughAndSoundsLikeTheEncodedMix() throws {
        let on = try Self.record(passthrough: true), off = try Self.record(passthrough: false)
        // Most of the meeting is one voice: most of the mix is passed through.
        #expect(on.stats.mixPacketsPassedThrough > 200, "\(on.stats.mixPacketsPassedThrough)")
        #expect(on.stats.mixFramesEncoded * 3 < off.stats.mixFramesEncoded, "\(on.stats.mixFramesEncoded) vs \(off.stats.mixFramesEncoded)")
        #expect(off.stats.mixPacketsPassedThrough == 0)
        #expect(abs(on.pcm.count - off.pcm.count) == 0, "\(on.pcm.count) vs \(off.pcm.count)")
        // The same audio at the same time: correlated as two codings of one signal are.
        let (c, lag) = bestCorrelation(on.pcm, off.pcm, maxLag: 96)
        #expect(c > 0.9, "correlation \(c)")
        #expect(abs(lag) <= 60, "lag \(lag)")
        // Runs begin and end (at least A, B, A again).
        #expect(on.switches.count >= 6, "\(on.switches)")
        // No click at a switch: within 10 ms of it, the largest step from one sample to
        // the next is no larger than the encoded mix's there, give or take 0.05.
        for sw in on.switches {
            let lo = max(1, Int(sw) - 480), hi = min(on.pcm.count, Int(sw) + 480)
            guard lo < hi else { continue }
            let stepOn = (lo..<hi).map { abs(on.pcm[$0] - on.pcm[$0 - 1]) }.max() ?? 0
            let stepOff = (lo..<hi).map { abs(off.pcm[$0] - off.pcm[$0 - 1]) }.max() ?? 0
            #expect(stepOn <= stepOff + 0.05, "switch at \(Double(sw) / 48) ms: step \(stepOn) vs \(stepOff)")
        }
        // No dip or burst: every 100 ms with sound holds the encoded mix's energy within 3 dB.
        for b in stride(from: 0, to: off.pcm.count - 4800, by: 4800) {
            let eOff = off.pcm[b..<b + 4800].reduce(0) { $0 + $1 * $1 }, eOn = on.pcm[b..<b + 4800].reduce(0) { $0 + $1 * $1 }
            guard eOff > 1 else { continue }
            #expect(eOn > eOff / 2 && eOn < eOff * 2, "at \(b / 48) ms: energy \(eOn) vs \(eOff)")
        }
    }
}

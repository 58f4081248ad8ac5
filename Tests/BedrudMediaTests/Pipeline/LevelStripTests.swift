import Testing

@testable import BedrudMedia

/// The report's level strips as the live path keeps them (``LevelStrip``), against the
/// strips a decode of the finished files gives (``OggOpusLevels``).
@Suite(.serialized) struct LevelStripTests {
    static let sec: UInt64 = 1_000_000_000

    @Test func framesFillTheirBucketsAndUnfedBucketsAreSilent() {
        var s = LevelStrip()
        // 0.5 s of frames at RMS 0.5 (−6 dBFS → level 57) from 1 s, then 0.4 s unfed, then
        // one frame at RMS 0.05 (−26 dBFS → 36) at 1.9 s.
        for i in 0..<25 { s.add(start: 48000 + Int64(i) * 960, meanSquare: 0.25) }
        s.add(start: 48000 + 45 * 960, meanSquare: 0.0025)
        let f = s.finished()
        #expect(f.firstBucket == 5)
        #expect(f.values == [57, 57, 57, 0, 36])
        // A file that starts at 0.8 s and lasts 1.4 s: one silent step before the strip,
        // the strip, and a silent step after it.
        #expect(f.levels(startMs: 800, durationMs: 1400).values == [0, 57, 57, 57, 0, 36, 0])
        // Frames that go back before the open bucket are ignored; negative ones too.
        var back = f
        back.add(start: 0, meanSquare: 1)
        back.add(start: -960, meanSquare: 1)
        #expect(back.finished().values == f.values)
    }

    @Test func twoVisitsMergeIntoOneStrip() {
        var a = LevelStrip(), b = LevelStrip()
        a.add(start: 0, meanSquare: 0.25)
        b.add(start: 3 * 9600, meanSquare: 0.0025)
        let m = a.finished().merged(with: b.finished())
        #expect(m.firstBucket == 0)
        #expect(m.values == [57, 0, 0, 36])
        #expect(LevelStrip().merged(with: m) == m)
    }

    /// A speaker from 0 s and a late tone from 3 s, 6.1 s in all: every strip the engine
    /// keeps is, step by step, the strip decoding its file gives: within 3 levels (about
    /// 3 dB: the files are coded, and the decode for the strip runs at 8 kHz) of the
    /// decoded step or a neighbour (the live steps start on the session's 200 ms grid, a
    /// file's on its start offset, up to half a step apart).
    @Test func theLiveStripsAreTheFilesStrips() throws {
        let rec = VirtualRecording(config: MediaPipelineConfig())
        var host = PacketScript()
        host.append(TestEncoder.encode(TestSignal.speech(seconds: 6, seed: 3)), firstSequence: 10, firstTimestamp: 1000, startSeconds: 0)
        var late = PacketScript()
        late.append(TestEncoder.encode(TestSignal.tone(seconds: 3, frequency: 550, amplitude: 0.3)), ssrc: 0x2222,
                    firstSequence: 60000, firstTimestamp: 4_000_000_000, startSeconds: 3)
        let hostRing = rec.add("host")
        let lateRing = rec.add("late", at: VirtualRecording.origin + 3 * Self.sec)
        let end = VirtualRecording.origin + 6 * Self.sec + 100_000_000
        rec.run([(hostRing, host.packets), (lateRing, late.packets)], until: end)
        rec.finish(at: end)
        let strips = rec.engine.stats(levels: true).levels
        #expect(Set(strips.keys) == ["host", "late", ""])
        for (key, sink) in [("host", rec.sinks.participant("host")), ("late", rec.sinks.participant("late")), ("", rec.sinks.room)] {
            let bytes = try #require(sink).bytes
            let report = OggOpusVerifier.verify(bytes)
            let start = Int64(report.tags?.value("START_OFFSET_MS") ?? "") ?? -1
            let decoded = try OggOpusLevels.measure(bytes).values
            let live = try #require(strips[key]).levels(startMs: start, durationMs: Int64(report.durationMillis.rounded(.up))).values
            #expect(live.count == decoded.count, "\(key): \(live.count) vs \(decoded.count)")
            let off = live.indices.filter { i in
                let near = decoded[max(0, i - 1)...min(decoded.count - 1, i + 1)].map(Int.init)
                return Int(live[i]) < near.min()! - 3 || Int(live[i]) > near.max()! + 3
            }
            #expect(off.isEmpty, "\(key): steps \(off) differ; live \(live) decoded \(decoded)")
            #expect(live.filter { $0 > 30 }.count >= 10, "\(key): \(live)")
        }
    }
}

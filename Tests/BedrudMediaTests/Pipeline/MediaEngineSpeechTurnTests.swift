import BedrudProtocol
import Foundation
import Testing

@testable import BedrudBench
@testable import BedrudMedia

@Suite(.serialized) struct MediaEngineSpeechTurnTests {
    /// Real synthetic speech (espeak-ng, resampled by sox): the detector finds turns inside
    /// the speech and none in the silence around it.
    @Test func espeakSpeechMakesTurnsWhereItTalks() throws {
        let dir = try temporaryDirectory()
        let (s1, t1) = try runTool("/usr/bin/espeak-ng", ["-w", dir + "/raw.wav", "Good morning. Can everybody hear me? Let us begin."])
        #expect(s1 == 0, "\(t1)")
        let (s2, t2) = try runTool("/usr/bin/sox", [dir + "/raw.wav", "-r", "48000", "-b", "16", "-c", "1", dir + "/s.wav", "pad", "2", "3"])
        #expect(s2 == 0, "\(t2)")
        let pcm = try #require(MediaBenchmark.readWAV48k(Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/s.wav")))))
        let opus = TestEncoder.encode(pcm)
        var s = PacketScript()
        s.append(opus, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        let rec = VirtualRecording()
        let ring = rec.add("tts")
        let end = VirtualRecording.origin + UInt64(Double(opus.count) * 0.02 * 1e9) + 30_000_000
        rec.run([(ring, s.packets)], until: end)
        rec.finish(at: end)
        let turns = rec.allEvents.compactMap { e -> (Int64, Int64)? in
            if case .speakingTurn("tts", let a, let b) = e { return (a, b) } else { return nil }
        }
        let speechEnd = Int64(Double(pcm.count) / 48) - 3000 + 30
        #expect(!turns.isEmpty)
        #expect(turns.allSatisfy { $0.0 >= 2000 && $0.1 <= speechEnd + 400 }, "\(turns), speech 2030–\(speechEnd) ms")
        let talked = turns.reduce(0) { $0 + $1.1 - $1.0 }
        #expect(talked >= (speechEnd - 2030) / 2, "\(turns)")
    }
}

import COpus
import Testing
@testable import BedrudMedia

@Suite struct OggOpusLevelsTests {
    /// One second each of silence, a tone at RMS −9 dBFS and one at −29 dBFS, 20 ms a packet,
    /// one packet a page.
    static func file() -> [UInt8] {
        let pcm = [Float](repeating: 0, count: 48000) + TestSignal.tone(seconds: 1, frequency: 440, amplitude: 0.5)
            + TestSignal.tone(seconds: 1, frequency: 440, amplitude: 0.05)
        let packets = TestEncoder.encode(pcm, bitrate: 48000, application: OPUS_APPLICATION_AUDIO)
        return PlaySourceTests.ogg(head: OpusHead(channelCount: 1, preSkip: 0).bytes,
                                   pages: packets.enumerated().map { ([$1], Int64($0 + 1) * 960) })
    }

    @Test func theStripFollowsTheDecodedLevelAtItsPlaceInTheFile() throws {
        let l = try OggOpusLevels.measure(Self.file(), stepMs: 200)
        #expect(l.stepMs == 200)
        #expect(l.values.count == 15)
        #expect(l.values[0..<4].allSatisfy { $0 == 0 }, "\(l.values)")
        // RMS of a 0.5 sine: −9.0 dBFS → (−9 + 60) / 60 × 63 ≈ 54; of 0.05: −29 dBFS → 33.
        #expect(l.values[6..<9].allSatisfy { (53...55).contains($0) }, "\(l.values)")
        #expect(l.values[11..<14].allSatisfy { (32...34).contains($0) }, "\(l.values)")
    }

    @Test func levelsOfKnownAmplitudes() {
        #expect(AudioLevels.level(rms: 0) == 0)
        #expect(AudioLevels.level(rms: 0.001) == 0)  // −60 dBFS
        #expect(AudioLevels.level(rms: 1) == 63)
        #expect(AudioLevels.level(rms: 2) == 63)
    }

    @Test func notAnOggFileIsAnErrorNotACrash() {
        #expect(throws: OggOpusPackets.ReadError.notOggOpus) { try OggOpusLevels.measure(Array("not ogg at all".utf8)) }
    }
}

import Testing
@testable import BedrudMedia

/// The mix limiter in a room that has gone quiet: it must settle, so silence costs nothing.
@Suite("Room mixer in silence")
struct RoomMixerSilenceTests {
    @Test("After a loud burst the limiter's envelope settles at exactly 0 (no denormal left on every silent sample); the silence is not encoded; the next burst is limited again")
    func settlesAfterSound() throws {
        let pages = DirectPageWriter()
        let writer = OggStreamWriter(serial: 1, streamID: 1, consumer: pages)
        let mixer = try #require(RoomMixer(channels: 1, bitrate: 32_000, complexity: 5, coder: MediaPipelineConfig().mixCoder, writer: writer))
        let loud = [Float](repeating: 0.99, count: RoomMixer.frame)
        loud.withUnsafeBufferPointer { mixer.add($0.baseAddress!, count: $0.count, at: 0, pan: 0) }
        mixer.advance(to: Int64(RoomMixer.frame))
        #expect(mixer.limitedFrames == 1 && mixer.envelope > 0)
        // 8 s of silence: with a ~100 ms release the envelope is below 1e-20 after ~4.6 s.
        let silentFrames = 8 * 50
        mixer.advance(to: Int64(RoomMixer.frame * (1 + silentFrames)))
        #expect(mixer.envelope == 0)
        #expect(mixer.silentFramesSkipped == silentFrames - RoomMixer.silenceWarmupFrames)
        // (The first silent frame was limited too: the release starts above the threshold.)
        let limited = mixer.limitedFrames
        let at = mixer.cursor
        loud.withUnsafeBufferPointer { mixer.add($0.baseAddress!, count: $0.count, at: at, pan: 0) }
        mixer.advance(to: at + Int64(RoomMixer.frame))
        #expect(mixer.limitedFrames == limited + 1 && mixer.envelope > 0)
    }
}

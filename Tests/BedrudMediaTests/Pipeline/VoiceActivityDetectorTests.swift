import BedrudProtocol
import COpus
import Foundation
import Testing

@testable import BedrudMedia

/// Speaking turns last as long as the sound, and steady noise is no turn.
@Suite struct VoiceActivityDetectorTests {

    /// Connected speech with no silent pauses: a harmonic voice whose level swings with
    /// the syllables (about 9 dB) but never drops to silence, as a monologue or music does.
    static func continuousSpeech(seconds: Double, amplitude: Float = 0.3) -> [Float] {
        let n = Int(seconds * 48000)
        var out = [Float](repeating: 0, count: n)
        var phase: Float = 0
        for i in 0..<n {
            let t = Float(i) / 48000
            let env = 0.35 + 0.65 * abs(sinf(2 * .pi * 2.3 * t)) * (0.8 + 0.2 * sinf(2 * .pi * 0.13 * t))
            let f: Float = 140 * (1 + 0.08 * sinf(2 * .pi * 0.7 * t))
            phase += 2 * .pi * f / 48000
            if phase > 2 * .pi { phase -= 2 * .pi }
            var s: Float = 0
            for h in 1...6 { s += sinf(phase * Float(h)) / Float(h) }
            out[i] = amplitude * env * s * 0.5
        }
        return out
    }

    /// Steady white noise at an RMS of `rmsDBFS`.
    static func noise(seconds: Double, rmsDBFS: Float, seed: UInt64 = 7) -> [Float] {
        var rng = SplitMix(seed: seed)
        let scale = powf(10, rmsDBFS / 20) * sqrtf(3)
        return (0..<Int(seconds * 48000)).map { _ in (Float(rng.next() % 20001) / 10000 - 1) * scale }
    }

    /// Runs the detector over `pcm` in 20 ms chunks; turns in ms.
    static func turns(_ pcm: [Float]) -> [(Int64, Int64)] {
        var vad = VoiceActivityDetector()
        var out: [(Int64, Int64)] = []
        pcm.withUnsafeBufferPointer { b in
            var i = 0
            while i < b.count {
                let n = min(960, b.count - i)
                vad.feed(b.baseAddress! + i, count: n, position: Int64(i)) { out.append(($0 / 48, $1 / 48)) }
                i += n
            }
        }
        vad.finish { out.append(($0 / 48, $1 / 48)) }
        return out
    }

    /// Milliseconds of [from, to) inside some turn.
    static func covered(_ turns: [(Int64, Int64)], from: Int64, to: Int64) -> Int64 {
        turns.reduce(0) { $0 + max(0, min($1.1, to) - max($1.0, from)) }
    }

    @Test func sixtySecondsOfContinuousSpeechIsSpeechThroughout() {
        let pcm = [Float](repeating: 0, count: 96000) + Self.continuousSpeech(seconds: 60) + [Float](repeating: 0, count: 96000)
        let t = Self.turns(pcm)
        #expect(Self.covered(t, from: 2000, to: 62000) >= 57000, "\(t)")
        #expect(t.allSatisfy { $0.0 >= 1980 && $0.1 <= 62020 }, "\(t)")
    }

    @Test func speechOverSteadyNoiseIsSpeechThroughoutAndTheNoiseIsNot() {
        var pcm = Self.noise(seconds: 64, rmsDBFS: -40)
        let speech = Self.continuousSpeech(seconds: 60)
        for i in speech.indices { pcm[96000 + i] += speech[i] }
        let t = Self.turns(pcm)
        #expect(Self.covered(t, from: 2000, to: 62000) >= 57000, "\(t)")
        #expect(t.allSatisfy { $0.0 >= 1980 && $0.1 <= 62020 }, "\(t)")
    }

    @Test func steadyNoiseOrSilenceAloneMakesNoTurn() {
        #expect(Self.turns(Self.noise(seconds: 60, rmsDBFS: -35)).isEmpty)
        #expect(Self.turns([Float](repeating: 0, count: 60 * 48000)).isEmpty)
    }

    /// A fan switched on mid-call is taken for speech only until the floor has followed it
    /// (about 6 s of a 58 s hum), not for as long as it runs.
    @Test func noiseThatStartsLaterBecomesFloorWithinSeconds() {
        let pcm = [Float](repeating: 0, count: 96000) + Self.noise(seconds: 58, rmsDBFS: -35)
        let t = Self.turns(pcm)
        #expect(t.allSatisfy { $0.1 <= 10000 }, "\(t)")
    }
}

/// Level metering and a speech/non-speech decision for one track, on 20 ms frames of
/// decoded 48 kHz PCM, turned into speaking turns.
///
/// The decision is energy based with an adaptive noise floor: a frame is speech when its
/// RMS is at least `marginDB` above the floor and above `minSpeechDBFS`. The floor starts
/// at the first frame's level, falls to any quieter frame, and rises only toward steady
/// sound (or slowly while no turn is open), so continuous speech or music stays speech
/// for as long as it lasts while a steady hum or hiss becomes floor within seconds. A turn starts
/// after `onsetFrames` speech frames in a row (at the first of them) and ends
/// `hangoverFrames` non-speech frames after the last speech frame (at that frame's end).
/// Turns shorter than `minTurnSamples` are dropped as clicks. Pure value; no allocation.
struct VoiceActivityDetector {
    static let frame = 960
    var minSpeechDBFS: Float = -50
    var marginDB: Float = 10
    var onsetFrames = 2
    var hangoverFrames = 15  // 300 ms
    var minTurnSamples: Int64 = 4800  // 100 ms

    private var sumSquares: Float = 0
    private var peak: Float = 0
    private var filled = 0
    private var frameStart: Int64 = 0
    private var noiseFloorDB: Float = -70
    /// One-second running mean of frame levels and of their distance from it: a spread
    /// under `steadySpreadDB` is steady noise, which the floor follows.
    private var levelMeanDB: Float = -70
    private var levelSpreadDB: Float = 10
    var steadySpreadDB: Float = 1.0
    private var speechRun = 0
    private var silenceRun = 0
    private var candidateStart: Int64 = 0
    private(set) var turnStart: Int64?
    private var lastSpeechEnd: Int64 = 0
    /// RMS and peak of the last full frame, in dBFS.
    private(set) var levelDBFS: Float = -120
    private(set) var peakDBFS: Float = -120
    private(set) var speechFrames = 0
    private(set) var frames = 0
    /// Every frame's level, kept for the report (``LevelStrip``).
    private(set) var strip = LevelStrip()

    var isSpeaking: Bool { turnStart != nil }

    /// Feeds `count` samples that start at session sample `position`. A jump in
    /// `position` (a gap) is treated as silence first. Calls `turn(start, end)` for
    /// every finished turn.
    mutating func feed(
        _ pcm: UnsafePointer<Float>, count: Int, position: Int64, turn: (Int64, Int64) -> Void
    ) {
        if filled == 0 { frameStart = position }
        let expected = frameStart + Int64(filled)
        if position != expected {
            if position > expected { silence(samples: Int(position - expected), turn: turn) }
            filled = 0
            frameStart = position
        }
        var i = 0
        while i < count {
            let n = min(count - i, Self.frame - filled)
            var ss = sumSquares
            var pk = peak
            for k in i..<(i + n) {
                let x = pcm[k]
                ss += x * x
                let a = abs(x)
                if a > pk { pk = a }
            }
            sumSquares = ss
            peak = pk
            filled += n
            i += n
            if filled == Self.frame { endFrame(turn: turn) }
        }
    }

    /// Advances over `samples` of silence (a gap, a mute).
    mutating func silence(samples: Int, turn: (Int64, Int64) -> Void) {
        var left = samples
        if filled > 0 {
            let n = min(left, Self.frame - filled)
            filled += n
            left -= n
            if filled == Self.frame { endFrame(turn: turn) }
        }
        while left >= Self.frame {
            sumSquares = 0
            peak = 0
            filled = Self.frame
            endFrame(turn: turn)
            left -= Self.frame
            if turnStart == nil && speechRun == 0 {
                // Nothing more can happen during the rest of a long silence.
                frameStart += Int64(left / Self.frame * Self.frame)
                frames += left / Self.frame
                left %= Self.frame
            }
        }
        if left > 0 {
            sumSquares = 0
            peak = 0
            filled = left
        }
    }

    /// Ends any open turn at the last speech frame (end of a track or session).
    mutating func finish(turn: (Int64, Int64) -> Void) {
        if let s = turnStart, lastSpeechEnd - s >= minTurnSamples { turn(s, lastSpeechEnd) }
        turnStart = nil
        speechRun = 0
    }

    private mutating func endFrame(turn: (Int64, Int64) -> Void) {
        let meanSquare = sumSquares / Float(Self.frame)
        let db = meanSquare > 1e-12 ? 10 * log10f(meanSquare) : -120
        strip.add(start: frameStart, meanSquare: meanSquare)
        levelDBFS = db
        peakDBFS = peak > 1e-6 ? 20 * log10f(peak) : -120
        frames += 1
        let start = frameStart
        let end = frameStart + Int64(Self.frame)
        frameStart = end
        filled = 0
        sumSquares = 0
        peak = 0
        // Noise floor. It falls at once to any quieter frame. It rises only toward sound
        // that is steady (frame levels within about a dB of their one-second mean, as
        // a fan or hiss is), or slowly while nobody is speaking. Speech and music keep
        // changing level, so during them the floor stays put: it used to creep up 3 dB/s
        // whatever the sound, and a monologue or music vanished after about 25 s.
        if frames == 1 { levelMeanDB = db; noiseFloorDB = max(-100, db) }
        levelMeanDB += 0.05 * (db - levelMeanDB)
        levelSpreadDB += 0.05 * (abs(db - levelMeanDB) - levelSpreadDB)
        if db < noiseFloorDB {
            noiseFloorDB = max(-100, db)
        } else if levelSpreadDB < steadySpreadDB {
            noiseFloorDB += min(0.3, db - noiseFloorDB)
        } else if turnStart == nil && db < noiseFloorDB + marginDB {
            noiseFloorDB += 0.06
        }
        let isSpeech = db > minSpeechDBFS && db > noiseFloorDB + marginDB
        if isSpeech {
            speechFrames += 1
            if speechRun == 0 { candidateStart = start }
            speechRun += 1
            silenceRun = 0
            lastSpeechEnd = end
            if turnStart == nil && speechRun >= onsetFrames { turnStart = candidateStart }
        } else {
            speechRun = 0
            silenceRun += 1
            if let s = turnStart, silenceRun >= hangoverFrames {
                if lastSpeechEnd - s >= minTurnSamples { turn(s, lastSpeechEnd) }
                turnStart = nil
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

import BedrudMedia
import FoundationEssentials

/// A 16-bit mono 48 kHz WAV file (``WAVAudio/pcm16(_:sampleRate:channels:)``).
enum WAVFile {
    static func write(_ pcm: [Float], to path: String) throws {
        try Data(WAVAudio.pcm16(pcm.lazy.map { Int16(max(-1, min(1, $0)) * 32767) })).write(to: URL(fileURLWithPath: path))
    }
}

import Glibc

/// A level strip of a recording: the RMS level of each `stepMs` of the playable audio,
/// from sample 0 after the pre-skip, quantised to 0…63 (0: −60 dBFS or quieter, 63: 0 dBFS;
/// about 0.95 dB a step).
public struct AudioLevels: Sendable, Equatable {
    public static let maxLevel: UInt8 = 63
    public var stepMs: Int
    public var values: [UInt8]

    public init(stepMs: Int, values: [UInt8]) {
        self.stepMs = stepMs
        self.values = values
    }

    /// The level of an RMS amplitude (full scale 1.0).
    public static func level(rms: Double) -> UInt8 {
        guard rms > 0 else { return 0 }
        let db = 20 * log10(rms)
        return UInt8(max(0, min(63, ((db + 60) / 60 * 63).rounded())))
    }
}

/// Decodes an Ogg Opus file with libopus to measure its level strip (for the session
/// report). Run once, when a session finishes or is repaired, never on the live path.
/// Packets are placed by their granule positions (``OggOpusPackets``), so a level lands at
/// the moment the player plays it.
public enum OggOpusLevels {
    /// - Parameter stepMs: the strip's resolution (200 ms: 300 points a minute).
    public static func measure(_ bytes: [UInt8], stepMs: Int = 200) throws(OggOpusPackets.ReadError) -> AudioLevels {
        let ogg = try OggOpusPackets.read(bytes)
        let channels = ogg.isStereo ? 2 : 1
        // Decoded at 8 kHz: a level strip needs no full bandwidth, and a sixth of the samples
        // pass through the loop below (packet positions are in 48 kHz units, hence `ratio`).
        let rate: Int64 = 8000, ratio: Int64 = 48000 / rate
        guard let decoder = OpusDecoderBox(channels: channels, sampleRate: Int32(rate)) else { throw .notOggOpus }
        let stepMs = max(10, stepMs)
        let step = Int64(stepMs) * rate / 1000
        let buckets = Int((ogg.playableSamples / ratio + step - 1) / step)
        var sums = [Double](repeating: 0, count: buckets)
        var counts = [Int](repeating: 0, count: buckets)
        let maxSamples = Int(rate) * 120 / 1000
        let pcm = UnsafeMutablePointer<Float>.allocate(capacity: maxSamples * channels)
        defer { pcm.deallocate() }
        let preSkip = Int64(ogg.head.preSkip)
        for i in ogg.entries.indices {
            let n = ogg.packet(i).withUnsafeBytes { decoder.decode($0, into: pcm, maxSamples: maxSamples) }
            guard n > 0 else { continue }
            var at = (ogg.entries[i].start - preSkip) / ratio
            for s in 0..<n {
                defer { at += 1 }
                guard at >= 0 else { continue }
                let b = Int(at / step)
                guard b < buckets else { break }
                var v: Double = 0
                for c in 0..<channels { let x = Double(pcm[s * channels + c]); v += x * x }
                sums[b] += v / Double(channels)
                counts[b] += 1
            }
        }
        let values = (0..<buckets).map { counts[$0] > 0 ? AudioLevels.level(rms: (sums[$0] / Double(counts[$0])).squareRoot()) : 0 }
        return AudioLevels(stepMs: stepMs, values: values)
    }
}

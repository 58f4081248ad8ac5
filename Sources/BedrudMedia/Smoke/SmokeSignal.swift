import BedrudProtocol
import COpus
import Glibc

/// The test signal of `bedrud-bot smoke`: a second of silence, then one tone burst per
/// second (1 kHz, 200 ms, amplitude 0.3) with silence between, so each burst's onset can
/// be found in the listener's decoded audio and timed against its send deadline.
/// Bursts start on 20 ms frame boundaries.
public struct SmokeSignal: Sendable, Equatable {
    public static let sampleRate = 48_000
    public static let frameSamples = 960
    public var leadInSamples = 48_000
    public var periodSamples = 48_000
    public var burstSamples = 9_600
    public var frequency = 1_000.0
    public var amplitude: Float = 0.3
    /// Number of bursts.
    public var bursts: Int

    /// A signal lasting about `seconds` (at least 2 bursts).
    public init(seconds: Double) {
        bursts = max(2, Int(seconds.rounded(.down)) - 1)
    }

    /// Total length in samples: the lead-in, the bursts, and a last quiet period.
    public var totalSamples: Int { leadInSamples + bursts * periodSamples }
    public var totalFrames: Int { totalSamples / Self.frameSamples }

    /// First sample of burst `k` (from the start of the signal).
    public func burstStart(_ k: Int) -> Int { leadInSamples + k * periodSamples }

    /// The PCM (mono, 48 kHz).
    public func pcm() -> [Float] {
        var out = [Float](repeating: 0, count: totalSamples)
        for k in 0..<bursts {
            let s = burstStart(k)
            for i in 0..<burstSamples {
                // 2 ms ramps so the burst has no click (which would smear the onset).
                let edge = Double(min(i, burstSamples - 1 - i))
                let ramp = Float(min(1.0, edge / 96.0))
                let phase: Double = 2.0 * Double.pi * frequency * Double(i) / Double(Self.sampleRate)
                out[s + i] = amplitude * ramp * Float(sin(phase))
            }
        }
        return out
    }

    /// The burst whose send deadline comes last before `offsetNanos` (time since the
    /// signal's first sample was due), or nil before the first. Latencies of a period or
    /// more cannot be told apart from the next burst: they are reported as that one's.
    public func burst(before offsetNanos: Int64) -> Int? {
        let sample = offsetNanos * Int64(Self.sampleRate) / 1_000_000_000
        guard sample >= Int64(leadInSamples) else { return nil }
        let k = Int((sample - Int64(leadInSamples)) / Int64(periodSamples))
        return k < bursts ? k : bursts - 1
    }

    /// Nanoseconds from the signal's start to burst `k`'s first sample.
    public func burstOffsetNanos(_ k: Int) -> Int64 { Int64(burstStart(k)) * 1_000_000_000 / Int64(Self.sampleRate) }
}

/// Decodes the listener's copy of the smoke signal and finds burst onsets: the arrival
/// time of the first loud 20 ms frame after a quiet one. Keeps the decoded PCM (for
/// `--keep`) in a buffer allocated once. Thread contract: one thread calls `feed`;
/// results are read after it stops.
public final class ToneBurstDetector {
    public private(set) var onsets: [UInt64] = []
    public private(set) var packets = 0
    /// Arrival of the first packet (0 before it).
    public private(set) var firstArrivalNanos: UInt64 = 0
    public private(set) var decodeErrors = 0
    public private(set) var pcm: [Float]
    public private(set) var samples = 0
    private var loud = false
    private var quietFrames = 0
    private let decoder: OpaquePointer
    private let frame: UnsafeMutablePointer<Float>
    private static let maxFrame = 5760
    /// RMS above which a frame is loud (the burst's is ~0.2), and below which it is quiet.
    public static let onThreshold: Float = 0.05
    public static let offThreshold: Float = 0.02

    /// - Parameter capacitySamples: how much decoded audio to keep (the rest is analysed, not kept).
    public init?(capacitySamples: Int, expectedBursts: Int) {
        var err: Int32 = 0
        guard let d = opus_decoder_create(48_000, 1, &err), err == OPUS_OK else { return nil }
        decoder = d
        frame = .allocate(capacity: Self.maxFrame)
        pcm = [Float](repeating: 0, count: max(0, capacitySamples))
        onsets.reserveCapacity(expectedBursts * 2 + 4)
    }

    deinit {
        opus_decoder_destroy(decoder)
        frame.deallocate()
    }

    /// One received Opus packet (its arrival time on the monotonic clock).
    public func feed(_ payload: UnsafeRawBufferPointer, arrivalNanos: UInt64) {
        packets += 1
        if firstArrivalNanos == 0 { firstArrivalNanos = arrivalNanos }
        guard let base = payload.baseAddress?.assumingMemoryBound(to: UInt8.self), payload.count > 0 else { return }
        let n = Int(opus_decode_float(decoder, base, Int32(payload.count), frame, Int32(Self.maxFrame), 0))
        guard n > 0 else {
            decodeErrors += 1
            return
        }
        var sum: Float = 0
        for i in 0..<n { sum += frame[i] * frame[i] }
        let rms = (sum / Float(n)).squareRoot()
        let keep = min(n, pcm.count - samples)
        if keep > 0 {
            pcm.withUnsafeMutableBufferPointer { b in
                for i in 0..<keep { b[samples + i] = frame[i] }
            }
            samples += keep
        }
        if loud {
            quietFrames = rms < Self.offThreshold ? quietFrames + 1 : 0
            if quietFrames >= 2 { loud = false }
        } else if rms > Self.onThreshold {
            loud = true
            quietFrames = 0
            if onsets.count < onsets.capacity { onsets.append(arrivalNanos) }
        }
    }
}

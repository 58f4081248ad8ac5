import BedrudProtocol
import BedrudRuntime
import COpus

/// A libopus decoder for one track, decoding to 48 kHz float PCM.
///
/// Owns the C object (freed in deinit) and maps its return codes. Calls never allocate.
/// Optionally times the libopus calls themselves so the benchmark can separate codec
/// cost from pipeline overhead. Thread contract: owned by the media thread.
package final class OpusDecoderBox {
    private let decoder: OpaquePointer
    let channels: Int
    var timeCalls = false
    private(set) var libopusNanos: UInt64 = 0
    private(set) var calls = 0

    /// - Parameter sampleRate: 48000 (the pipeline), or 8000/12000/16000/24000 where
    ///   full bandwidth is not needed (the report's level strip: cheaper to decode).
    package init?(channels: Int, sampleRate: Int32 = 48000) {
        var err: Int32 = 0
        guard let d = opus_decoder_create(sampleRate, Int32(channels), &err), err == OPUS_OK else { return nil }
        decoder = d
        self.channels = channels
    }

    deinit { opus_decoder_destroy(decoder) }

    /// Decodes one packet (or, with `fec`, the in-band FEC copy of the packet before it,
    /// concealing all but its last frame) into `pcm`, which must hold `maxSamples` ×
    /// channels floats. - Returns: samples per channel, or a negative libopus error.
    package func decode(_ packet: UnsafeRawBufferPointer, into pcm: UnsafeMutablePointer<Float>, maxSamples: Int, fec: Bool = false) -> Int {
        guard let base = packet.baseAddress?.assumingMemoryBound(to: UInt8.self), packet.count > 0 else {
            return conceal(into: pcm, samples: maxSamples)
        }
        let t0 = timeCalls ? MonotonicClock.nanos() : 0
        let n = opus_decode_float(decoder, base, Int32(packet.count), pcm, Int32(maxSamples), fec ? 1 : 0)
        if timeCalls { libopusNanos &+= MonotonicClock.nanos() &- t0 }
        calls += 1
        return Int(n)
    }

    /// Runs packet-loss concealment for `samples` (a multiple of 120, at most 5760).
    package func conceal(into pcm: UnsafeMutablePointer<Float>, samples: Int) -> Int {
        let t0 = timeCalls ? MonotonicClock.nanos() : 0
        let n = opus_decode_float(decoder, nil, 0, pcm, Int32(samples), 0)
        if timeCalls { libopusNanos &+= MonotonicClock.nanos() &- t0 }
        calls += 1
        return Int(n)
    }

    func reset() { _ = shim_opus_decoder_reset(decoder) }
}

/// Which of libopus's coders encodes the room mix (`record.mix_coder`).
public enum MixCoder: String, Sendable, CaseIterable {
    /// CELT alone (libopus's restricted-low-delay application): a transform coder of the
    /// full band. At 64 kbit/s it matches the voice coder's PESQ for one talker, beats it
    /// for several at once, keeps the waveform (correlation 0.99 against 0.93–0.96 on speech) and costs
    /// less than half as much per frame (docs/BENCHMARKS.md, *The mix encoder*).
    case celt
    /// libopus's voice application: SILK, or hybrid (SILK below 8 kHz, CELT above) at
    /// these bit rates. The default before 2026-12-02, at 32 kbit/s.
    case voice

    /// The encoder's delay at 48 kHz (OPUS_GET_LOOKAHEAD), known before one is made.
    public var lookahead: Int { self == .celt ? 120 : 312 }
}

/// A libopus encoder for the mixed room recording.
package final class OpusEncoderBox {
    private let encoder: OpaquePointer
    let channels: Int
    package let lookahead: Int
    var timeCalls = false
    private(set) var libopusNanos: UInt64 = 0

    /// - Parameter dtx: libopus discontinuous transmission: after about 200 ms the encoder
    ///   judges inactive, it returns packets of one or two bytes (decoded as concealment or
    ///   comfort noise) with a full one every 400 ms.
    package init?(channels: Int, bitrate: Int, complexity: Int, dtx: Bool = false, coder: MixCoder) {
        var err: Int32 = 0
        let application = coder == .celt ? OPUS_APPLICATION_RESTRICTED_LOWDELAY : OPUS_APPLICATION_VOIP
        guard let e = opus_encoder_create(48000, Int32(channels), application, &err), err == OPUS_OK else {
            return nil
        }
        encoder = e
        self.channels = channels
        _ = shim_opus_encoder_set_bitrate(e, Int32(bitrate))
        _ = shim_opus_encoder_set_complexity(e, Int32(max(0, min(10, complexity))))
        if coder == .voice { _ = shim_opus_encoder_set_signal_voice(e) }
        if dtx { _ = shim_opus_encoder_set_dtx(e, 1) }
        var la: Int32 = 0
        _ = shim_opus_encoder_get_lookahead(e, &la)
        lookahead = Int(la)
    }

    deinit { opus_encoder_destroy(encoder) }

    /// Forgets the encoder's history (after a stretch the mixer wrote without encoding).
    func reset() { _ = shim_opus_encoder_reset(encoder) }

    /// With `true`, frames are coded without prediction from earlier ones (for a frame a
    /// decoder reaches from another stream's packets).
    func setPredictionDisabled(_ on: Bool) { _ = shim_opus_encoder_set_prediction_disabled(encoder, on ? 1 : 0) }

    /// Encodes one frame of `frameSamples` per channel into `out` (capacity `outCapacity`).
    /// - Returns: the packet length, or a negative libopus error.
    package func encode(_ pcm: UnsafePointer<Float>, frameSamples: Int, into out: UnsafeMutablePointer<UInt8>, outCapacity: Int) -> Int {
        let t0 = timeCalls ? MonotonicClock.nanos() : 0
        let n = opus_encode_float(encoder, pcm, Int32(frameSamples), out, Int32(outCapacity))
        if timeCalls { libopusNanos &+= MonotonicClock.nanos() &- t0 }
        return Int(n)
    }
}

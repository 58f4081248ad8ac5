import COpus
#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import BedrudBench
@testable import BedrudMedia

/// The mix encoder figures of `bedrud-bot bench` and the packet
/// activity flag the decode-skip analysis counts.
@Suite struct OpusCodecMixEncoderTests {
    /// libopus in SILK mode (VOIP, wide-band, voice): a packet of digital silence carries
    /// VAD flag 0, one of a loud voiced signal flag 1; DTX and CELT packets as documented.
    @Test func voiceActivityFlagFollowsTheSendersDecision() throws {
        var err: Int32 = 0
        let enc = try #require(opus_encoder_create(48000, 1, OPUS_APPLICATION_VOIP, &err))
        defer { opus_encoder_destroy(enc) }
        _ = shim_opus_encoder_set_bitrate(enc, 16000)
        _ = shim_opus_encoder_set_signal_voice(enc)
        var out = [UInt8](repeating: 0, count: 4000)
        func encode(_ pcm: [Float]) -> [UInt8] {
            let n = pcm.withUnsafeBufferPointer { p in out.withUnsafeMutableBufferPointer { o in
                opus_encode_float(enc, p.baseAddress!, 960, o.baseAddress!, 4000) } }
            return Array(out[0..<Int(max(0, n))])
        }
        var phase: Float = 0
        var voiced: [[UInt8]] = []
        for _ in 0..<25 {
            var pcm = [Float](repeating: 0, count: 960)
            for i in 0..<960 {
                phase += 2 * .pi * 140 / 48000
                for h in 1...6 { pcm[i] += 0.3 * sinf(phase * Float(h)) / Float(h) }
            }
            voiced.append(encode(pcm))
        }
        var silent: [[UInt8]] = []
        for _ in 0..<25 { silent.append(encode([Float](repeating: 0, count: 960))) }
        // SILK or hybrid packets (configs 0…15), so the flag is there to read.
        #expect(voiced.allSatisfy { !$0.isEmpty && $0[0] >> 3 < 16 })
        #expect(voiced.suffix(20).allSatisfy { OpusPacketInfo.hasVoiceActivity($0) })
        #expect(silent.suffix(10).allSatisfy { !OpusPacketInfo.hasVoiceActivity($0) })
        #expect(!OpusPacketInfo.hasVoiceActivity([UInt8(1 << 3)]))  // DTX: TOC alone
        #expect(OpusPacketInfo.hasVoiceActivity([UInt8(31 << 3), 0x12, 0x34]))  // CELT: no flag, counted active
        #expect(!OpusPacketInfo.hasVoiceActivity([]))
    }

    /// Every setting is measured; the decoded mix lines up with its input (the lag search
    /// finds each coder's delay), the bit rate asked for is what gets written, and the CELT
    /// coder writes CELT packets only (TOC configurations 16–31), the voice coder none.
    @Test func figuresCoverEverySettingAndDecodeAligned() throws {
        let signal = MediaBenchmark.roomMixSignal(frames: 50, speech: nil, talkers: 1)
        let figures = MediaBenchmark.mixEncoderFigures(signal: signal, bitrate: 64000)
        #expect(figures.count == MediaBenchmark.mixEncoderSettings.count)
        let celt = try #require(figures.first { $0.coder == .celt && $0.complexity == 5 && !$0.dtx && $0.bitrate == 64000 })
        let voice = try #require(figures.first { $0.coder == .voice && $0.complexity == 5 && !$0.dtx && $0.bitrate == 32000 })
        // The synthetic voice keeps less of its waveform through SILK than speech does
        // (0.65 here, 0.96 for espeak speech); CELT keeps it; decoded out of line either
        // would be near 0.
        #expect(voice.correlation > 0.5)
        #expect(celt.correlation > 0.9)
        let low = try #require(figures.first { $0.coder == .celt && $0.bitrate == 48000 })
        #expect(low.bitsPerSecond > 40000 && low.bitsPerSecond < 56000 && celt.bitsPerSecond > 56000)
        #expect(voice.bitsPerSecond < 40000)
    }

    @Test func theCELTCoderWritesOnlyCELTPackets() throws {
        let signal = MediaBenchmark.roomMixSignal(frames: 50, speech: nil, talkers: 4)
        var out = [UInt8](repeating: 0, count: 4000)
        for coder in MixCoder.allCases {
            let enc = try #require(OpusEncoderBox(channels: 1, bitrate: coder == .celt ? 64000 : 32000, complexity: 5, coder: coder))
            var configs = Set<UInt8>()
            signal.withUnsafeBufferPointer { p in
                out.withUnsafeMutableBufferPointer { o in
                    for k in 0..<50 where enc.encode(p.baseAddress! + k * 960, frameSamples: 960, into: o.baseAddress!, outCapacity: 4000) > 0 {
                        configs.insert(o[0] >> 3)
                    }
                }
            }
            if coder == .celt {
                #expect(configs == [31], "CELT full band 20 ms: \(configs)")
                #expect(enc.lookahead == 120, "restricted low delay: 2.5 ms of lookahead")
            } else {
                #expect(!configs.isEmpty && configs.allSatisfy { $0 < 16 }, "SILK or hybrid: \(configs)")
            }
        }
    }

    /// `bench --speech` reads its WAV through WAVAudio: the first channel at 48 kHz, nothing else.
    @Test func speechWAVIsTheFirstChannelAt48kHz() {
        let stereo = WAVAudio.pcm16([16384, -16384, -32768, 0], sampleRate: 48_000, channels: 2)
        #expect(MediaBenchmark.readWAV48k(stereo) == [0.5, -1])
        #expect(MediaBenchmark.readWAV48k(WAVAudio.pcm16([16384, 0], sampleRate: 48_000)) == [0.5, 0])
        #expect(MediaBenchmark.readWAV48k(WAVAudio.pcm16([16384, 0], sampleRate: 44_100)) == nil)
        #expect(MediaBenchmark.readWAV48k(Array("RIFF....WAVE".utf8)) == nil)
    }
}

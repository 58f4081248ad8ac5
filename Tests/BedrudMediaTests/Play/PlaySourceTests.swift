import COgg
import Foundation
import Testing

@testable import BedrudMedia

/// The pure parts of `play`: placing an Ogg Opus file's packets on the timeline from its
/// granule positions, reading WAV encodings, resampling, and the source's loop timeline.
@Suite struct PlaySourceTests {
    /// An Ogg Opus file with the given pages (packets and granule of each), built with libogg.
    static func ogg(head: [UInt8], pages: [(packets: [[UInt8]], granule: Int64)]) -> [UInt8] {
        var os = ogg_stream_state()
        ogg_stream_init(&os, 1234)
        defer { ogg_stream_clear(&os) }
        var out: [UInt8] = []
        var og = ogg_page()
        var packetNo: Int64 = 0
        func put(_ bytes: [UInt8], granule: Int64, bos: Bool, eos: Bool) {
            var b = bytes
            b.withUnsafeMutableBufferPointer { p in
                var op = ogg_packet(packet: p.baseAddress, bytes: p.count, b_o_s: bos ? 1 : 0, e_o_s: eos ? 1 : 0, granulepos: granule, packetno: packetNo)
                ogg_stream_packetin(&os, &op)
            }
            packetNo += 1
        }
        func flush() {
            while ogg_stream_flush(&os, &og) != 0 {
                out += Array(UnsafeBufferPointer(start: og.header, count: og.header_len))
                out += Array(UnsafeBufferPointer(start: og.body, count: og.body_len))
            }
        }
        put(head, granule: 0, bos: true, eos: false); flush()
        put(OpusTags(vendor: "test", comments: []).bytes, granule: 0, bos: false, eos: false); flush()
        for (i, page) in pages.enumerated() {
            for (k, p) in page.packets.enumerated() {
                put(p, granule: k == page.packets.count - 1 ? page.granule : -1, bos: false, eos: i == pages.count - 1 && k == page.packets.count - 1)
            }
            flush()
        }
        return out
    }

    // TOC bytes (RFC 6716 §3.1), code 0: CELT FB 20 ms, CELT FB 2.5 ms, SILK NB 60 ms.
    static let p20: [UInt8] = [0xF8, 1, 2, 3, 4], p2_5: [UInt8] = [0xE0, 9, 9], p60: [UInt8] = [0x18, 7, 7, 7]
    static let dtx: [UInt8] = [0xF8]

    @Test func packetsArePlacedByTheirPagesGranulePositions() throws {
        let head = OpusHead(channelCount: 2, preSkip: 312).bytes
        // Page 1 ends at 1080 (960 + 120), page 2 at 3960 (+2880); the EOS page is trimmed to 500 of its 960.
        let file = Self.ogg(head: head, pages: [([Self.p20, Self.p2_5], 1080), ([Self.p60], 3960), ([Self.p20, Self.dtx], 3960 + 960 + 500)])
        let f = try OggOpusPackets.read(file)
        #expect(f.isStereo)
        #expect(f.head.preSkip == 312)
        #expect(f.entries.map(\.start) == [0, 960, 1080, 3960, 4920])
        #expect(f.entries.map(\.samples) == [960, 120, 2880, 960, 960])
        #expect(f.endSample == 5880)
        #expect(f.playableSamples == 5880 - 312)
        #expect(f.problems == 0)
        #expect(Array(f.packet(2)) == Self.p60)
    }

    @Test func aStreamThatStartsLaterAndAPauseAreKept() throws {
        // The first page says its packet ends at 48960 (a stream cut from a longer one), the
        // next page leaves a 0.5 s gap (a pause); the timeline starts at the first packet.
        let file = Self.ogg(head: OpusHead(channelCount: 1, preSkip: 0).bytes, pages: [([Self.p20], 48_960), ([Self.p20], 48_960 + 24_000 + 960), ([Self.p20], 48_960 + 24_000 + 1920)])
        let f = try OggOpusPackets.read(file)
        #expect(f.entries.map(\.start) == [0, 24_960, 25_920])
        #expect(!f.isStereo)
    }

    @Test func aGranuleThatGoesBackIsCountedAndPlayedContiguously() throws {
        let file = Self.ogg(head: OpusHead(channelCount: 1, preSkip: 0).bytes, pages: [([Self.p20, Self.p20], 1920), ([Self.p20], 960), ([Self.p20], 1920),
                                                                                      ([Self.p20], 10_000_000_000), ([Self.p20], 10_000_000_960), ([Self.p20], 10_000_001_920)])
        let f = try OggOpusPackets.read(file)
        // Back to 960 (then on from there), a jump of 10⁹ s (then on from there): each once.
        #expect(f.entries.map(\.start) == [0, 960, 1920, 2880, 3840, 4800, 5760])
        #expect(f.problems == 2)
    }

    @Test func filesPlayCannotSendAreRefused() {
        var six = OpusHead(channelCount: 6, preSkip: 312)
        six.mappingFamily = 1
        let sixBytes = six.bytes + [4, 2, 0, 4, 1, 2, 3, 5]
        #expect(throws: OggOpusPackets.ReadError.multichannel(6, family: 1)) { try OggOpusPackets.read(Self.ogg(head: sixBytes, pages: [([Self.p20], 960)])) }
        #expect(throws: OggOpusPackets.ReadError.noAudio) { try OggOpusPackets.read(Self.ogg(head: OpusHead(channelCount: 1, preSkip: 0).bytes, pages: [])) }
        #expect(throws: OggOpusPackets.ReadError.notOggOpus) { try OggOpusPackets.read(Array("OggS but not really".utf8)) }
    }

    @Test func aLoopedFileContinuesOnTheTimelineAndDTXIsMarkedSilent() throws {
        let f = try OggOpusPackets.read(Self.ogg(head: OpusHead(channelCount: 1, preSkip: 312).bytes, pages: [([Self.p20, Self.dtx, Self.p60], 4800)]))
        let s = try PlaySource(.ogg(f), loop: true)
        #expect(s.leadIn == 312)
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500, alignment: 16)
        defer { buf.deallocate() }
        var got: [PlaySource.Packet] = []
        for _ in 0..<6 { if let p = s.next(into: buf) { got.append(p) } }
        #expect(got.map(\.start) == [0, 960, 1920, 4800, 5760, 6720])
        #expect(got.map(\.voice) == [true, false, true, true, false, true])
        #expect(got.map(\.length) == [5, 1, 4, 5, 1, 4])
        let once = try PlaySource(.ogg(f), loop: false)
        var n = 0
        while once.next(into: buf) != nil { n += 1 }
        #expect(n == 3)
    }

    @Test func pcmIsEncodedInTwentyMillisecondFramesAndLoopsSeamlessly() throws {
        let pcm = (0..<(960 * 3 + 100)).map { Float(0.3 * sin(2 * Double.pi * 440 * Double($0) / 48_000)) }
        let s = try PlaySource(.pcm(samples: pcm, channels: 1), loop: true)
        #expect(s.passSamples == Int64(960 * 4))  // the last partial frame padded
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500, alignment: 16)
        defer { buf.deallocate() }
        var starts: [UInt64] = []
        for _ in 0..<6 {
            let p = try #require(s.next(into: buf))
            #expect(p.samples == 960 && p.length > 0)
            #expect(OpusPacketInfo.parse(UnsafeRawBufferPointer(start: buf.baseAddress, count: p.length))?.samples == 960)
            starts.append(p.start)
        }
        #expect(starts == [0, 960, 1920, 2880, 3840, 4800])
        #expect(throws: PlaySourceError.self) { try PlaySource(.pcm(samples: [], channels: 1), loop: false) }
    }

    static func wav(format: Int, channels: Int, rate: Int, bits: Int, data: [UInt8], extensible: Bool = false) -> [UInt8] {
        var b: [UInt8] = []
        func u32(_ v: Int) { b += [UInt8(v & 255), UInt8(v >> 8 & 255), UInt8(v >> 16 & 255), UInt8(v >> 24 & 255)] }
        func u16(_ v: Int) { b += [UInt8(v & 255), UInt8(v >> 8 & 255)] }
        let fmtSize = extensible ? 40 : 16
        b += Array("RIFF".utf8); u32(4 + 8 + fmtSize + 8 + 8 + data.count); b += Array("WAVE".utf8)
        b += Array("LIST".utf8); u32(0)  // an empty chunk before fmt, to be skipped
        b += Array("fmt ".utf8); u32(fmtSize)
        u16(extensible ? 0xFFFE : format); u16(channels); u32(rate); u32(rate * channels * bits / 8); u16(channels * bits / 8); u16(bits)
        if extensible { u16(22); u16(bits); u32(3); u16(format); b += [UInt8](repeating: 0, count: 14) }
        b += Array("data".utf8); u32(data.count)
        return b + data
    }

    @Test func wavEncodingsAreRead() throws {
        let pcm16 = try WAVAudio.read(Self.wav(format: 1, channels: 1, rate: 48_000, bits: 16, data: [0x00, 0x40, 0x00, 0x80, 0xFF, 0x7F]))
        #expect(pcm16.samples == [0.5, -1, Float(32767) / 32768])
        let pcm24 = try WAVAudio.read(Self.wav(format: 1, channels: 2, rate: 44_100, bits: 24, data: [0, 0, 0x40, 0, 0, 0xC0]))
        #expect(pcm24.samples == [0.5, -0.5] && pcm24.channels == 2 && pcm24.sampleRate == 44_100)
        var float: [UInt8] = []
        for v: Float in [0.25, -0.75] { withUnsafeBytes(of: v.bitPattern.littleEndian) { float += $0 } }
        let f32 = try WAVAudio.read(Self.wav(format: 3, channels: 2, rate: 48_000, bits: 32, data: float, extensible: true))
        #expect(f32.samples == [0.25, -0.75])
        #expect(throws: WAVAudio.ReadError.channels(3)) { try WAVAudio.read(Self.wav(format: 1, channels: 3, rate: 48_000, bits: 16, data: [0, 0, 0, 0, 0, 0])) }
        #expect(throws: WAVAudio.ReadError.unsupportedFormat(tag: 1, bits: 8)) { try WAVAudio.read(Self.wav(format: 1, channels: 1, rate: 48_000, bits: 8, data: [0])) }
        #expect(throws: WAVAudio.ReadError.rate(4000)) { try WAVAudio.read(Self.wav(format: 1, channels: 1, rate: 4000, bits: 16, data: [0, 0])) }
        #expect(throws: WAVAudio.ReadError.notWAV) { try WAVAudio.read(Array("RIFFxxxxAVI LIST".utf8)) }
        #expect(throws: WAVAudio.ReadError.truncated) { try WAVAudio.read(Array(Self.wav(format: 1, channels: 1, rate: 48_000, bits: 16, data: []).prefix(30))) }
    }

    @Test func wavWriterWritesTheHeaderTheReaderReads() throws {
        let samples: [Int16] = [0, 16384, -32768, 32767, -1, 7]
        let bytes = WAVAudio.pcm16(samples, sampleRate: 48_000, channels: 2)
        // The 44-byte header the bench and `smoke --keep` wrote before they shared this writer.
        var header = Array("RIFF".utf8) + [48, 0, 0, 0] + Array("WAVEfmt ".utf8) + [16, 0, 0, 0, 1, 0, 2, 0]
        header += [0x80, 0xBB, 0, 0] + [0x00, 0xEE, 0x02, 0] + [4, 0, 16, 0] + Array("data".utf8) + [12, 0, 0, 0]
        #expect(Array(bytes.prefix(44)) == header)
        #expect(Array(bytes.dropFirst(44)) == [0, 0, 0x00, 0x40, 0x00, 0x80, 0xFF, 0x7F, 0xFF, 0xFF, 7, 0])
        let back = try WAVAudio.read(bytes)
        #expect(back.sampleRate == 48_000 && back.channels == 2 && back.samples == samples.map { Float($0) / 32768 })
        #expect(WAVAudio.pcm16([Int16]()).count == 44)
    }

    @Test func resamplingKeepsTheFrequencyAndTheLength() {
        for rate in [8000, 22_050, 44_100, 96_000] {
            let n = rate  // 1 s
            let w = WAVAudio(sampleRate: rate, channels: 2, samples: (0..<n).flatMap { i -> [Float] in
                let t = Double(i) / Double(rate)
                return [Float(0.5 * sin(2 * .pi * 1000 * t)), Float(0.5 * sin(2 * .pi * 300 * t))]
            })
            let r = w.resampled48k()
            #expect(r.sampleRate == 48_000 && r.channels == 2)
            #expect(abs(r.frames - 48_000) <= 1, "\(rate): \(r.frames)")
            // Compare with the ideal 48 kHz signal away from the edges.
            var err = 0.0, ref = 0.0
            for i in 2000..<46_000 {
                let t = Double(i) / 48_000
                let a = 0.5 * sin(2 * .pi * 1000 * t), b = 0.5 * sin(2 * .pi * 300 * t)
                err += pow(Double(r.samples[2 * i]) - a, 2) + pow(Double(r.samples[2 * i + 1]) - b, 2)
                ref += a * a + b * b
            }
            #expect(10 * log10(ref / err) > 40, "\(rate) Hz: SNR \(10 * log10(ref / err)) dB")
        }
    }
}

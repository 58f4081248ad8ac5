import COpus
import Testing

@testable import BedrudMedia

@Suite struct OpusPacketTests {
    @Test(arguments: [
        // (TOC, extra bytes, frames, samples per frame)
        ([UInt8(0 << 3 | 0), 0xAA], 1, 480),  // SILK NB 10 ms, code 0
        ([UInt8(1 << 3 | 0), 0xAA], 1, 960),  // SILK NB 20 ms
        ([UInt8(3 << 3 | 0), 0xAA], 1, 2880),  // SILK NB 60 ms
        ([UInt8(13 << 3 | 0), 0xAA], 1, 960),  // hybrid SWB 20 ms
        ([UInt8(16 << 3 | 0), 0xAA], 1, 120),  // CELT NB 2.5 ms
        ([UInt8(31 << 3 | 1), 0xAA, 0xBB], 2, 960),  // code 1: two equal frames
        ([UInt8(31 << 3 | 2), 1, 0xAA, 0xBB, 0xCC], 2, 960),  // code 2: first frame 1 byte
        ([UInt8(16 << 3 | 3), 48], 48, 120),  // code 3: 48 empty 2.5 ms frames = 120 ms
    ] as [([UInt8], Int, Int)])
    func parsesTOCAndFrameCounts(packet: [UInt8], frames: Int, perFrame: Int) throws {
        let info = try #require(packet.withUnsafeBytes { OpusPacketInfo.parse($0) })
        #expect(info.frameCount == frames)
        #expect(info.samplesPerFrame == perFrame)
        #expect(info.config == packet[0] >> 3)
    }

    @Test(arguments: [
        [UInt8](),  // empty
        [UInt8(31 << 3 | 1), 0xAA, 0xBB, 0xCC],  // code 1 with odd payload
        [UInt8(31 << 3 | 2), 9, 0xAA],  // code 2 first length beyond packet
        [UInt8(31 << 3 | 3)],  // code 3 without count byte
        [UInt8(31 << 3 | 3), 0],  // code 3 with zero frames
        [UInt8(31 << 3 | 3), 7],  // code 3: 7 × 20 ms = 140 ms > 120 ms
    ])
    func rejectsMalformedPackets(packet: [UInt8]) {
        #expect(packet.withUnsafeBytes { OpusPacketInfo.parse($0) } == nil)
    }

    @Test func frameSizeTableMatchesLibopus() {
        for config in UInt8(0)...31 {
            var toc = config << 3
            let lib = Int(opus_packet_get_samples_per_frame(&toc, 48000))
            #expect(OpusPacketInfo.samplesPerFrame(config: config) == lib, "config \(config)")
        }
    }

    /// Every gap length (multiple of 2.5 ms) becomes concealment packets whose durations
    /// libopus agrees with and which decode to exactly that many samples.
    @Test(arguments: [120, 480, 960, 1080, 2760, 2880 * 3, 5760 + 120, 48000, 48000 * 10 + 360])
    func concealmentPacketsCoverGapsExactly(samples: Int) throws {
        for prev: UInt8 in [9 << 3, 1 << 3 | 4, 13 << 3, 31 << 3, 3 << 3] {
            var err: Int32 = 0
            let dec = try #require(opus_decoder_create(48000, 1, &err))
            defer { opus_decoder_destroy(dec) }
            var total = 0
            var decoded = 0
            var pcm = [Float](repeating: 0, count: 5760)
            var bad = false
            ConcealmentPackets.fill(samples: samples, previousTOC: prev) { pkt, dur in
                guard let info = OpusPacketInfo.parse(pkt) else { bad = true; return }
                if !info.isConcealmentRequest || info.samples != dur || pkt.count != 2 { bad = true }
                if (pkt[0] & 4) != (prev & 4) { bad = true }  // channel flag copied
                total += dur
                let n = pcm.withUnsafeMutableBufferPointer {
                    opus_decode_float(dec, pkt.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(pkt.count), $0.baseAddress!, 5760, 0)
                }
                decoded += Int(n)
            }
            #expect(!bad)
            #expect(total == samples)
            #expect(decoded == samples)
        }
    }
}

@Suite struct OpusHeaderTests {
    @Test func opusHeadRoundTripsAndHasRFCLayout() throws {
        let h = OpusHead(channelCount: 2, preSkip: 312, inputSampleRate: 48000)
        let b = h.bytes
        #expect(b.count == 19)
        #expect(Array(b[0..<8]) == Array("OpusHead".utf8))
        #expect(b[8] == 1 && b[9] == 2 && b[10] == 0x38 && b[11] == 0x01)  // 312 little-endian
        #expect(OpusHead.parse(b) == h)
        #expect(OpusHead.parse(Array(b[0..<18])) == nil)
    }

    @Test func opusTagsRoundTrip() throws {
        let t = OpusTags(vendor: "bedrud-bot", comments: [("ROOM", "all hands"), ("PARTICIPANT_NAME", "Zoë = ok")])
        let parsed = try #require(OpusTags.parse(t.bytes))
        #expect(parsed == t)
        #expect(parsed.value("participant_name") == "Zoë = ok")
        // A comment count larger than the packet cannot make the parser read past it.
        var b = t.bytes
        b[8 + 4 + 10] = 0xFF
        #expect(OpusTags.parse(b) == nil)
    }

    @Test func formatsUTCTimes() {
        #expect(iso8601UTC(unixNanos: 0) == "1970-01-01T00:00:00.000Z")
        #expect(iso8601UTC(unixNanos: 1_795_000_000_123_000_000) == "2026-11-18T11:06:40.123Z")
        #expect(iso8601UTC(unixNanos: 951_782_400_000_000_000) == "2000-02-29T00:00:00.000Z")
    }
}

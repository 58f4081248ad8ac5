import BedrudProtocol
import COpus
import Foundation
import Testing

@testable import BedrudMedia

/// `fec_recovered` counts only losses the next packet's LBRR data recovered.
@Suite struct FECCountTests {

    /// Single losses at 50, 120 and 200 in 6 s of speech; the engine's FEC count.
    static func fecRecovered(_ opus: [[UInt8]]) -> (fec: Int, lost: Int) {
        var script = PacketScript()
        script.append(opus, firstSequence: 100, firstTimestamp: 0, startSeconds: 0)
        let lost: Set<Int> = [50, 120, 200]
        let list = script.packets.enumerated().filter { !lost.contains($0.offset) }.map(\.element)
        let rec = VirtualRecording()
        let ring = rec.add("bob")
        let end = VirtualRecording.origin + 6_030_000_000
        rec.run([(ring, list)], until: end)
        rec.finish(at: end)
        let s = rec.engine.stats().participants[0]
        return (s.fecRecovered, s.lost)
    }

    @Test func celtOnlyStreamRecoversNothingByFEC() {
        let pcm = TestSignal.speech(seconds: 6, seed: 3)
        let opus = TestEncoder.encode(pcm, bitrate: 64000, fec: true, lossPercent: 20, application: OPUS_APPLICATION_RESTRICTED_LOWDELAY)
        #expect(opus.allSatisfy { $0[0] >> 3 >= 16 }, "RESTRICTED_LOWDELAY makes CELT-only packets")
        let r = Self.fecRecovered(opus)
        #expect(r.lost == 3)
        #expect(r.fec == 0)
    }

    @Test func silkStreamWithoutFECRecoversNothingAndWithFECRecoversTheSingleLosses() {
        let pcm = TestSignal.speech(seconds: 6, seed: 3)
        let plain = TestEncoder.encode(pcm, fec: false)
        #expect(Self.fecRecovered(plain).fec == 0)
        // Packets 121 and 201 carry LBRR for the lost 120 and 200; packet 51 does not
        // (the quiet tail of a pause before it was not worth redundancy), so the loss at
        // 50 is concealed, not recovered.
        let withFEC = TestEncoder.encode(pcm, fec: true, lossPercent: 20)
        #expect([51, 121, 201].map { withFEC[$0].withUnsafeBytes { OpusPacketInfo.hasLBRR($0) } } == [false, true, true])
        #expect(Self.fecRecovered(withFEC).fec == 2)
    }

    @Test func lbrrFlagIsReadOnlyFromSILKAndHybridPackets() {
        let pcm = TestSignal.speech(seconds: 2, seed: 5)
        func flags(_ p: [[UInt8]]) -> Int { p.filter { $0.withUnsafeBytes { OpusPacketInfo.hasLBRR($0) } }.count }
        #expect(flags(TestEncoder.encode(pcm, fec: false)) == 0)
        #expect(flags(TestEncoder.encode(pcm, bitrate: 64000, fec: true, lossPercent: 20, application: OPUS_APPLICATION_RESTRICTED_LOWDELAY)) == 0)
        let silk = TestEncoder.encode(pcm, fec: true, lossPercent: 20)
        #expect(flags(silk) > silk.count / 2)
        #expect(!([UInt8]()).withUnsafeBytes { OpusPacketInfo.hasLBRR($0) })
        #expect(!([UInt8(0x08)]).withUnsafeBytes { OpusPacketInfo.hasLBRR($0) })
    }
}

import BedrudProtocol
import BedrudRuntime
import Testing
@testable import BedrudRTC

@Suite("MediaSender (pacing ring entries by their sample offsets)")
struct MediaSenderTests {
    @Test("A sample offset that wraps past 2³² keeps growing: the packet after the wrap is due one frame later, not 24 hours earlier")
    func sampleOffsetsUnwrapAcrossTwoToThe32() {
        let track = LocalAudioTrack(mid: "1", ssrc: 7, cname: "c", streamID: "s", trackID: "t")
        let rtp = RTPSender(ssrc: 7, payloadType: 111, audioLevelID: nil, sequenceNumber: 1, timestampBase: 0)
        let ring = PacketRing(capacity: 8)
        let sender = MediaSender(track: track, rtp: rtp, ring: ring, startNanos: 1_000)
        let payload: [UInt8] = [0xFC, 1, 2]
        for ts: UInt32 in [UInt32.max - 1919, UInt32.max - 959, 0] {
            _ = payload.withUnsafeBytes { ring.push(MediaPacketHeader(ssrc: 7, rtpTimestamp: ts, arrivalNanos: 0, payloadLength: 3), payload: $0) }
        }
        var sent = 0
        let last = sender.pacer.deadline(samples: UInt64(UInt32.max) - 959)
        let next = sender.tick(nowNanos: last, srtp: IdentitySRTPTransform()) { _, _ in sent += 1; return true }
        #expect(sent == 2)
        #expect(next == sender.pacer.deadline(samples: 1 << 32))
        #expect(sender.hasPending)
    }
}

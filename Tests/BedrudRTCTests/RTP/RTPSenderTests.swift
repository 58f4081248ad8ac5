import Testing
@testable import BedrudRTC

@Suite("RTP send side (packets, audio level, NACK history, sender reports, pacing)")
struct RTPSenderTests {
    func sender(level: UInt8? = 3) -> RTPSender {
        RTPSender(ssrc: 0xCAFE_F00D, payloadType: 111, audioLevelID: level, sequenceNumber: 0xFFFE, timestampBase: 0xFFFF_FF00, historySize: 4, maxPacketBytes: 64)
    }

    @Test func packetsParseBackWithTheAudioLevel() throws {
        let s = sender()
        var buf = [UInt8](repeating: 0, count: 64)
        let payload: [UInt8] = [0xFC, 1, 2, 3]
        var seen: [(UInt16, UInt32)] = []
        for i in 0..<3 {
            let n = try #require(buf.withUnsafeMutableBytes { b in
                payload.withUnsafeBytes { s.write(payload: $0, sample: UInt64(i) * 960, marker: i == 0, audioLevel: 30, voice: true, into: b) }
            })
            #expect(n == 20 + payload.count)
            let h = try buf.withUnsafeBytes { try RTPHeader.parse(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            #expect(h.ssrc == 0xCAFE_F00D && h.payloadType == 111 && h.marker == (i == 0))
            #expect(h.extensionProfile == 0xBEDE && h.payloadOffset == 20 && h.payloadLength == 4)
            var level: [UInt8] = []
            _ = buf.withUnsafeBytes { b in h.forEachExtension(in: UnsafeRawBufferPointer(rebasing: b[0..<n])) { id, data in if id == 3 { level = Array(data) } } }
            #expect(level == [0x80 | 30])
            seen.append((h.sequenceNumber, h.timestamp))
        }
        // Sequence and timestamp wrap.
        #expect(seen.map(\.0) == [0xFFFE, 0xFFFF, 0])
        #expect(seen.map(\.1) == [0xFFFF_FF00, 0xFFFF_FF00 &+ 960, 0xFFFF_FF00 &+ 1920])
        #expect(s.packetsSent == 3 && s.octetsSent == 12)
    }

    @Test func withoutTheExtensionTheHeaderIsTwelveBytes() throws {
        let s = sender(level: nil)
        var buf = [UInt8](repeating: 0, count: 64)
        let n = buf.withUnsafeMutableBytes { b in [UInt8]([1]).withUnsafeBytes { s.write(payload: $0, sample: 0, marker: false, audioLevel: 0, voice: false, into: b) } }
        #expect(n == 13 && buf[0] == 0x80)
        // Too big for the buffer: nothing written, the sequence number unchanged.
        let big = [UInt8](repeating: 0, count: 60)
        #expect(buf.withUnsafeMutableBytes { b in big.withUnsafeBytes { s.write(payload: $0, sample: 0, marker: false, audioLevel: 0, voice: false, into: b) } } == nil)
        #expect(s.nextSequenceNumber == 0xFFFF)
    }

    @Test func nackAnswersComeFromTheHistoryUntilOverwritten() {
        let s = sender()
        for seq: UInt16 in [10, 11, 12, 13, 14] {
            let packet = [UInt8](repeating: UInt8(seq), count: Int(seq))
            packet.withUnsafeBytes { s.store($0, sequenceNumber: seq) }
        }
        // History of 4: 10 was overwritten by 14.
        #expect(s.retransmission(of: 10) == nil)
        #expect(s.retransmission(of: 11).map(Array.init) == [UInt8](repeating: 11, count: 11))
        #expect(s.retransmission(of: 14).map(Array.init) == [UInt8](repeating: 14, count: 14))
        #expect(s.retransmission(of: 99) == nil)
        #expect(s.retransmitted == 2 && s.retransmissionMisses == 2)
    }

    @Test func senderReportExtrapolatesTheTimestampToItsNTPTime() throws {
        let s = sender()
        var pkt = [UInt8](repeating: 0, count: 64)
        _ = pkt.withUnsafeMutableBytes { b in [UInt8]([1, 2]).withUnsafeBytes { s.write(payload: $0, sample: 4800, marker: false, audioLevel: 0, voice: false, into: b) } }
        var out = [UInt8](repeating: 0, count: 64)
        var w = out.withUnsafeMutableBytes { RTCPWriter(buffer: $0) }
        #expect(!s.appendSenderReport(to: &w, ntp: 1, nowNanos: 0), "no SR before the first packet left")
        s.noteSent(nowNanos: 1_000_000_000)
        let ntp = RTPSender.ntp(unixNanos: 1_700_000_000_500_000_000)
        #expect(ntp >> 32 == 1_700_000_000 + 2_208_988_800 && ntp & 0xFFFF_FFFF == 1 << 31)
        #expect(s.appendSenderReport(to: &w, ntp: ntp, nowNanos: 1_020_000_000))
        #expect(w.count == 28)
        try out.withUnsafeBytes { b in
            try RTCPCompound.forEach(UnsafeRawBufferPointer(rebasing: b[0..<28])) { v in
                let sr = RTCPSenderReport(v)
                #expect(sr?.ssrc == 0xCAFE_F00D && sr?.ntpTimestamp == ntp && sr?.packetCount == 1 && sr?.octetCount == 2)
                // 20 ms after the packet at sample 4800: 960 samples later.
                #expect(sr?.rtpTimestamp == 0xFFFF_FF00 &+ 4800 &+ 960)
            }
        }
    }

    @Test func pacingDoesNotDriftOverAnHour() {
        let p = RTPPacer(startNanos: 5_000, clockRate: 48_000)
        #expect(p.deadline(samples: 0) == 5_000)
        #expect(p.deadline(samples: 960) == 5_000 + 20_000_000)
        // One hour of 20 ms packets: exactly 3600 s after the start.
        #expect(p.deadline(samples: 180_000 * 960) == 5_000 + 3_600_000_000_000)
        // 10 ms packets at an odd rate still land on the exact sample time.
        let q = RTPPacer(startNanos: 0, clockRate: 44_100)
        #expect(q.deadline(samples: 44_100 * 3600 + 441) == 3_600_010_000_000)
    }
}

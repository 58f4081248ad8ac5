import BedrudProtocol
import BedrudRuntime
import Testing
@testable import BedrudRTC

/// The packet path without a network: protected packets in, ring entries and counters out.
@Suite("Packet path (MediaReceiver)")
struct MediaReceiverTests {
    final class Events: MediaReceiverDelegate {
        var unknown: [(UInt32, UInt8)] = []
        var byes: [UInt32] = []
        var nackTimerStarts = 0
        func mediaUnknownSSRC(_ ssrc: UInt32, payloadType: UInt8) { unknown.append((ssrc, payloadType)) }
        func mediaBye(_ ssrc: UInt32) { byes.append(ssrc) }
        func mediaNACKPending() { nackTimerStarts += 1 }
    }

    func track(_ ssrc: UInt32, nack: Bool = true) -> RemoteTrack {
        RemoteTrack(ssrc: ssrc, mid: "1", kind: "audio", streamID: "PA_a|TR_a", trackID: "TR_a", participantSID: "PA_a", trackSID: "TR_a", payloadType: 111, clockRate: 48000, stereo: false, nack: nack)
    }

    /// summary.json's network.tracks was empty whenever the speakers left before the bot:
    /// a stream's figures went with it.
    @Test("A stream that ends keeps its last figures in endedTrackStats")
    func endedStreamsKeepTheirFigures() throws {
        let (sender, receiverSRTP) = try srtpPair(.aeadAES128GCM)
        let r = MediaReceiver(maxDatagram: 1500, nack: .init())
        r.sendDatagram = { _, _ in true }
        r.srtp = receiverSRTP
        r.setTracks([track(10), track(20)])
        let ring = PacketRing(capacity: 64, maxPayload: 1500)
        #expect(r.attach(ring, ssrc: 10))
        var now: UInt64 = 5_000_000_000
        for seq: UInt16 in [1, 2, 4, 5] {
            let p = try #require(protect(sender, makeRTP(seq: seq, ts: UInt32(seq) * 960, ssrc: 10, payload: [1, 2]), rtcp: false))
            p.withUnsafeBytes { r.handle($0.baseAddress!, count: $0.count, isRTCP: false, nowNanos: now) }
            now += 20_000_000
        }
        let before = try #require(r.trackStats().first { $0.ssrc == 10 })
        #expect(before.packetsReceived == 4 && before.packetsLost == 1)
        r.setTracks([track(20)])  // the speaker of 10 left
        #expect(r.trackStats().map(\.ssrc) == [20])
        var expected = before
        expected.attached = false
        #expect(r.endedTrackStats == [expected])
        r.setTracks([])
        #expect(r.endedTrackStats.map(\.ssrc) == [10, 20] && r.endedTracksForgotten == 0)
    }

    @Test("RTP and sender reports reach the attached ring in order; others are counted; NACK and RR go out")
    func routing() throws {
        let (sender, receiverSRTP) = try srtpPair(.aeadAES128GCM)
        let r = MediaReceiver(maxDatagram: 1500, nack: .init())
        let events = Events()
        r.delegate = events
        var sent: [[UInt8]] = []
        r.sendDatagram = { p, n in
            sent.append(Array(UnsafeRawBufferPointer(start: p, count: n)))
            return true
        }
        r.srtp = receiverSRTP
        r.setTracks([track(10), track(20)])
        let ring = PacketRing(capacity: 64, maxPayload: 1500)
        #expect(r.attach(ring, ssrc: 10))
        #expect(!r.attach(ring, ssrc: 99))
        var now: UInt64 = 5_000_000_000
        func feed(_ plain: [UInt8], rtcp: Bool = false) throws {
            let p = try #require(protect(sender, plain, rtcp: rtcp))
            p.withUnsafeBytes { r.handle($0.baseAddress!, count: $0.count, isRTCP: rtcp, nowNanos: now) }
            now += 20_000_000
        }
        // Track 10: seq 1, 2, (3 lost), 4; then an SR; track 20 has no ring; SSRC 30 is unknown (twice).
        for seq: UInt16 in [1, 2, 4] { try feed(makeRTP(seq: seq, ts: UInt32(seq) * 960, ssrc: 10, payload: [UInt8(seq), 0xAA])) }
        var sr: [UInt8] = [0x80, 200, 0, 6, 0, 0, 0, 10]
        sr += [0x83, 0xAA, 0x7E, 0x80, 0x80, 0, 0, 0] + [0, 0, 0x0F, 0] + [0, 0, 0, 3] + [0, 0, 0, 6]
        try feed(sr, rtcp: true)
        try feed(makeRTP(seq: 7, ts: 7, ssrc: 20))
        try feed(makeRTP(seq: 8, ts: 8, ssrc: 30))
        try feed(makeRTP(seq: 9, ts: 9, ssrc: 30))
        try feed(makeRTP(seq: 5, ts: 5 * 960, ssrc: 10, payload: []))  // padding-only probe
        try feed([0x81, 203, 0, 1, 0, 0, 0, 20], rtcp: true)

        var entries: [MediaPacketHeader] = []
        var payloads: [[UInt8]] = []
        while ring.pop({ h, p in entries.append(h); payloads.append(Array(p)) }) {}
        #expect(entries.map(\.kind) == [.rtp, .rtp, .rtp, .senderReport])
        #expect(entries.prefix(3).map(\.sequenceNumber) == [1, 2, 4])
        #expect(payloads.prefix(3).map { $0 } == [[1, 0xAA], [2, 0xAA], [4, 0xAA]])
        #expect(entries[3].ntpTimestamp == 0x83AA_7E80_8000_0000 && entries[3].rtpTimestamp == 0x0F00)
        #expect(entries[0].payloadType == 111 && entries[0].ssrc == 10 && entries[1].arrivalNanos > entries[0].arrivalNanos)
        #expect(r.counters.unattachedPackets == 1 && r.counters.unknownSSRCPackets == 2 && r.counters.paddingOnlyPackets == 1)
        #expect(events.unknown.count == 1 && events.unknown[0].0 == 30)
        #expect(events.byes == [20])

        // Loss of seq 3 is requested once the reordering window has passed.
        r.sendNACKs(nowNanos: now + 100_000_000)
        r.sendReceiverReports(nowNanos: now + 200_000_000)
        #expect(sent.count == 2 && r.counters.nacksSent == 1 && r.counters.receiverReportsSent == 1)
        // What went out is valid SRTCP carrying a NACK for 3, then an RR with blocks for 10 and 20 and an SDES.
        let peer = sender  // protects with what the receiver unprotects, and the other way round
        var lost: [UInt16] = []
        var blocks: [RTCPReportBlock] = []
        for d in sent {
            let (status, plain) = unprotect(peer, d, rtcp: true)
            guard case .ok = status else {
                Issue.record("outgoing RTCP did not authenticate")
                continue
            }
            try plain.withUnsafeBytes { b in
                try RTCPCompound.forEach(b) { v in
                    RTCPGenericNACK.forEachLost(v) { lost.append($0) }
                    for i in 0..<RTCPReceiverReport.reportCount(v) { blocks.append(RTCPReceiverReport.reportBlock(i, in: v)) }
                }
            }
        }
        #expect(lost == [3])
        try #require(blocks.map(\.ssrc) == [10, 20])
        #expect(blocks[0].cumulativeLost == 1 && blocks[0].lastSenderReport == 0x7E80_8000 && blocks[0].delaySinceLastSenderReport > 0)
        let stats = r.trackStats()
        #expect(stats.first { $0.ssrc == 10 }?.packetsReceived == 4 && stats.first { $0.ssrc == 10 }?.senderReports == 1)
        #expect(stats.first { $0.ssrc == 10 }?.attached == true && stats.first { $0.ssrc == 20 }?.attached == false)
    }

    @Test("A full ring drops and counts; a re-offer keeps the state of tracks that stay and forgets the others")
    func ringFullAndReoffer() throws {
        let (sender, receiverSRTP) = try srtpPair(.aeadAES128GCM)
        let r = MediaReceiver(maxDatagram: 1500, nack: .init())
        r.srtp = receiverSRTP
        r.setTracks([track(10), track(20)])
        let ring = PacketRing(capacity: 4, maxPayload: 100)
        #expect(r.attach(ring, ssrc: 10))
        for seq: UInt16 in 1...6 {
            let p = try #require(protect(sender, makeRTP(seq: seq, ts: 0, ssrc: 10)))
            p.withUnsafeBytes { r.handle($0.baseAddress!, count: $0.count, isRTCP: false, nowNanos: UInt64(seq)) }
        }
        #expect(ring.count == 4 && r.trackStats().first?.ringDrops == 2)
        r.setTracks([track(10), track(40)])
        #expect(r.trackStats().map(\.ssrc) == [10, 40])
        #expect(r.trackStats().first?.packetsReceived == 6 && r.trackStats().first?.attached == true)
    }

    @Test("The NACK timer is asked for only when a gap opens, keeps running while packets are missing, and stops when none are")
    func nackTimerOnlyWhileMissing() throws {
        let (sender, receiverSRTP) = try srtpPair(.aeadAES128GCM)
        let r = MediaReceiver(maxDatagram: 1500, nack: .init())
        let events = Events()
        r.delegate = events
        r.sendDatagram = { _, _ in true }
        r.srtp = receiverSRTP
        r.setTracks([track(10), track(20, nack: false)])
        var now: UInt64 = 1_000_000_000
        func feed(_ seq: UInt16, ssrc: UInt32 = 10) throws {
            let p = try #require(protect(sender, makeRTP(seq: seq, ts: UInt32(seq) * 960, ssrc: ssrc)))
            p.withUnsafeBytes { r.handle($0.baseAddress!, count: $0.count, isRTCP: false, nowNanos: now) }
            now += 20_000_000
        }
        // In order, and a gap on a track without NACK: no timer.
        for seq: UInt16 in 1...50 { try feed(seq) }
        for seq: UInt16 in [1, 2, 5] { try feed(seq, ssrc: 20) }
        #expect(events.nackTimerStarts == 0 && !r.nackTimerRunning)
        // 51 is lost: one start, however many packets follow while it is running.
        for seq: UInt16 in 52...55 { try feed(seq) }
        #expect(events.nackTimerStarts == 1 && r.nackTimerRunning)
        #expect(r.sendNACKs(nowNanos: now))
        #expect(r.counters.nacksSent == 1)
        // The retransmission arrives: nothing is missing, the next tick stops the timer.
        try feed(51)
        #expect(!r.sendNACKs(nowNanos: now) && !r.nackTimerRunning)
        #expect(r.counters.nackTimerTicks == 2)
        for seq: UInt16 in 56...80 { try feed(seq) }
        #expect(events.nackTimerStarts == 1)
        // A loss that is never repaired: requested up to maxRetries, then given up; the timer stops then.
        try feed(82)
        #expect(events.nackTimerStarts == 2)
        var ticks = 0
        while r.sendNACKs(nowNanos: now), ticks < 1000 {
            now += 20_000_000
            ticks += 1
        }
        #expect(!r.nackTimerRunning && r.counters.nacksSent == 4)
        #expect(ticks < 60, "the timer ran \(ticks) ticks for one lost packet")
    }
}

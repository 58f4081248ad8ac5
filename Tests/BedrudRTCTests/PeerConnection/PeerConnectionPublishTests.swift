import BedrudProtocol
import BedrudRuntime
import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

/// The publisher's media path, bot to bot on loopback: our offer with an audio section,
/// our own answer, RTP paced from a send ring, SRTP-protected on one side and unprotected
/// into the receive ring on the other.
@Suite("Publishing audio (PeerConnection → PeerConnection)", .serialized)
struct PeerConnectionPublishTests {
    @Test("Packets go out paced by their sample offsets and arrive in order, decryptable, with their payloads")
    func pacedAndReceived() async throws {
        try await PeerPair.run { p in
            let track = LocalAudioTrack(mid: "1", ssrc: 4242, cname: await p.offerer.cname, streamID: "stream", trackID: "TR_cid")
            try await p.offerer.addAudioTrack(track)
            await p.offerer.createDataChannel(label: "_reliable")
            let offer = try await p.offerer.createOffer()
            let update = try await p.answerer.setRemoteOffer(offer)
            let tracks = update.tracks
            #expect(tracks.map(\.ssrc) == [4242])
            #expect(update.added == tracks && update.removed.isEmpty)
            #expect(tracks.first?.trackID == "TR_cid")
            let received = PacketRing(capacity: 256)
            #expect(await p.answerer.attach(received, ssrc: 4242))
            try await p.offerer.setRemoteAnswer(try await p.answerer.createAnswer())
            try await p.offerer.waitUntilConnected(timeoutSeconds: 20)
            try await p.answerer.waitUntilConnected(timeoutSeconds: 20)

            let count = 25
            let out = PacketRing(capacity: 64)
            for i in 0..<count {
                let payload: [UInt8] = [0xF8, UInt8(i), 0xAA]
                let h = MediaPacketHeader(ssrc: 0, rtpTimestamp: UInt32(i * 960), payloadType: 0x80 | 20, marker: i == 0, arrivalNanos: 0)
                #expect(payload.withUnsafeBytes { out.push(h, payload: $0) })
            }
            let start = MonotonicClock.nanos()
            try await p.offerer.startSending(mid: "1", ring: out, startNanos: start)
            // The ring also carries the sender's RTCP SRs (one may come within the run): RTP only.
            var got: [(seq: UInt16, ts: UInt32, payload: [UInt8], marker: Bool, arrival: UInt64)] = []
            try await waitUntil("\(count) RTP packets received", timeout: 20, every: 0.01) {
                while received.pop({ h, payload in
                    if h.kind == .rtp { got.append((h.sequenceNumber, h.rtpTimestamp, Array(payload), h.marker, h.arrivalNanos)) }
                }) {}
                return got.count >= count
            }
            let elapsedMs = Double(MonotonicClock.nanos() - start) / 1e6
            // 25 packets of 20 ms: the last is due 480 ms after the start; a burst would be far quicker.
            #expect(elapsedMs >= 470, "all packets arrived after \(elapsedMs) ms: not paced")

            #expect(got.count == count)
            for (i, g) in got.enumerated() {
                #expect(g.payload == [0xF8, UInt8(i), 0xAA])
                #expect(g.seq == got[0].seq &+ UInt16(i))
                #expect(g.ts == got[0].ts &+ UInt32(i * 960))
                #expect(g.marker == (i == 0))
            }
            // Paced: packet i leaves no earlier than 2 ms before start + i × 20 ms.
            for i in [1, 10, 19, 24] {
                let ms = Double(Int64(got[i].arrival) - Int64(start)) / 1e6
                #expect(ms >= Double(i * 20) - 2, "packet \(i) arrived \(ms) ms after the start")
            }
            #expect(await p.offerer.isDrained(mid: "1"))
            let s = await p.offerer.stats()
            #expect(s.transport.rtpPacketsSent == UInt64(count))
            #expect(s.transport.rtpSendFailures == 0)
            let r = await p.answerer.stats()
            #expect(r.tracks.first?.packetsReceived == UInt64(count))
            #expect(r.tracks.first?.packetsLost == 0)
            // Nothing was missing, so the NACK timer never ran (it used to tick every 20 ms).
            #expect(r.transport.nackTimerTicks == 0)
        }
    }

    @Test("Muted: due packets are dropped, not sent; the ring still drains")
    func muted() async throws {
        try await PeerPair.run { p in
            let track = LocalAudioTrack(mid: "1", ssrc: 77, cname: "c", streamID: "s", trackID: "TR_m")
            try await p.offerer.addAudioTrack(track)
            _ = try await p.answerer.setRemoteOffer(try await p.offerer.createOffer())
            let received = PacketRing(capacity: 64)
            _ = await p.answerer.attach(received, ssrc: 77)
            try await p.offerer.setRemoteAnswer(try await p.answerer.createAnswer())
            try await p.offerer.waitUntilConnected(timeoutSeconds: 20)
            let out = PacketRing(capacity: 16)
            for i in 0..<5 {
                _ = [UInt8(i)].withUnsafeBytes { out.push(MediaPacketHeader(ssrc: 0, rtpTimestamp: UInt32(i * 960), arrivalNanos: 0), payload: $0) }
            }
            await p.offerer.setMuted(mid: "1", muted: true)
            try await p.offerer.startSending(mid: "1", ring: out, startNanos: MonotonicClock.nanos())
            #expect(await p.offerer.waitUntilAudioDrained(mid: "1", timeoutSeconds: 10), "the muted track's ring drained")
            #expect(await p.offerer.stats().transport.rtpPacketsSent == 0)
            #expect(received.count == 0)
        }
    }

    /// Connects a pair whose offerer publishes track "1" (SSRC 99); returns the receive ring.
    private static func publishingPair(_ p: PeerPair) async throws -> PacketRing {
        try await p.offerer.addAudioTrack(LocalAudioTrack(mid: "1", ssrc: 99, cname: "c", streamID: "s", trackID: "TR_d"))
        _ = try await p.answerer.setRemoteOffer(try await p.offerer.createOffer())
        let received = PacketRing(capacity: 64)
        _ = await p.answerer.attach(received, ssrc: 99)
        try await p.offerer.setRemoteAnswer(try await p.answerer.createAnswer())
        try await p.offerer.waitUntilConnected(timeoutSeconds: 20)
        return received
    }

    /// A send ring holding `count` 20 ms packets from sample 0.
    private static func ring(_ count: Int) -> PacketRing {
        let out = PacketRing(capacity: 64)
        for i in 0..<count {
            _ = [0xF8, UInt8(i)].withUnsafeBytes { out.push(MediaPacketHeader(ssrc: 0, rtpTimestamp: UInt32(i * 960), arrivalNanos: 0), payload: $0) }
        }
        return out
    }

    @Test("Waiting for a track to drain wakes on the send tick that sends its last packet, not on a poll or the timeout")
    func drainWakesOnLastPacket() async throws {
        try await PeerPair.run { p in
            _ = try await Self.publishingPair(p)
            // 25 packets of 20 ms: the last is due 480 ms after the start. A 20 s safety net:
            // without the wake-up the waiter would return only at it.
            let start = MonotonicClock.nanos()
            try await p.offerer.startSending(mid: "1", ring: Self.ring(25), startNanos: start)
            let before = await p.offerer.audioDrainedResumes()
            #expect(await p.offerer.waitUntilAudioDrained(mid: "1", timeoutSeconds: 20))
            let elapsedMs = Double(MonotonicClock.nanos() - start) / 1e6
            let after = await p.offerer.audioDrainedResumes()
            #expect(elapsedMs >= 470, "drained after \(elapsedMs) ms, before the last packet was due")
            #expect(elapsedMs < 5000, "drained after \(elapsedMs) ms")
            #expect(after.wakeups == before.wakeups + 1, "the send path woke the waiter")
            #expect(after.timeouts == before.timeouts, "the waiter did not wait for its timeout")
            #expect(await p.offerer.isDrained(mid: "1"))
            #expect(await p.offerer.stats().transport.rtpPacketsSent == 25)
            // Drained already: the next wait returns at once, without a wake-up.
            #expect(await p.offerer.waitUntilAudioDrained(mid: "1", timeoutSeconds: 20))
            let again = await p.offerer.audioDrainedResumes()
            #expect(again.wakeups == after.wakeups && again.timeouts == after.timeouts)
            print("audio-drained wake-up: \(elapsedMs) ms after the start (last packet due at 480 ms)")
        }
    }

    @Test("A drain wait ends when the track stops being sent (true) or the connection closes first (false)")
    func drainWaitEnds() async throws {
        try await PeerPair.run { p in
            _ = try await Self.publishingPair(p)
            // Packets due a minute from now: the ring does not drain by itself within the test.
            try await p.offerer.startSending(mid: "1", ring: Self.ring(3), startNanos: MonotonicClock.nanos() + 60_000_000_000)
            let t0 = ContinuousClock.now
            async let stoppedWait = p.offerer.waitUntilAudioDrained(mid: "1", timeoutSeconds: 20)
            try await waitUntil("the waiter is registered", timeout: 10, every: 0.01) { await p.offerer.audioDrainedResumes().waiting == 1 }
            await p.offerer.stopSending(mid: "1")
            #expect(await stoppedWait, "a track no longer sent has nothing left to send")
            #expect(ContinuousClock.now - t0 < .seconds(5))

            try await p.offerer.startSending(mid: "1", ring: Self.ring(3), startNanos: MonotonicClock.nanos() + 60_000_000_000)
            let t1 = ContinuousClock.now
            async let closedWait = p.offerer.waitUntilAudioDrained(mid: "1", timeoutSeconds: 20)
            try await waitUntil("the waiter is registered", timeout: 10, every: 0.01) { await p.offerer.audioDrainedResumes().waiting == 1 }
            await p.offerer.close()
            #expect(await closedWait == false, "its packets never went out")
            #expect(ContinuousClock.now - t1 < .seconds(5))
            let r = await p.offerer.audioDrainedResumes()
            #expect(r.timeouts == 0 && r.waiting == 0)
            #expect(r.wakeups == 1, "the stop woke the first waiter; the close resumed the second")
        }
    }

    @Test("startSending before the answer is refused with a clear error")
    func refusedBeforeConnected() async throws {
        try await PeerPair.run { p in
            try await p.offerer.addAudioTrack(LocalAudioTrack(mid: "1", ssrc: 5, cname: "c", streamID: "s", trackID: "TR_r"))
            _ = try await p.offerer.createOffer()
            await #expect(throws: PeerConnectionError(.wrongState("startSending() before the connection is up with SRTP"))) {
                try await p.offerer.startSending(mid: "1", ring: PacketRing(capacity: 4), startNanos: 0)
            }
        }
    }
}

@Suite("NACKs for our published tracks")
struct SenderNACKTests {
    @Test("A generic NACK from the server is answered with the stored packets, byte for byte")
    func answeredFromHistory() throws {
        let (peer, ours) = try srtpPair(.aeadAES128GCM)
        let r = MediaReceiver(maxDatagram: 1500, nack: .init())
        var sent: [[UInt8]] = []
        r.sendDatagram = { p, n in
            sent.append(Array(UnsafeRawBufferPointer(start: p, count: n)))
            return true
        }
        r.srtp = ours
        let track = LocalAudioTrack(mid: "1", ssrc: 555, cname: "c", streamID: "s", trackID: "t")
        let rtp = RTPSender(ssrc: 555, payloadType: 111, audioLevelID: nil, sequenceNumber: 100, timestampBase: 0)
        let out = PacketRing(capacity: 16)
        let sender = MediaSender(track: track, rtp: rtp, ring: out, startNanos: 0)
        r.senders[555] = sender
        for i in 0..<4 {
            _ = [UInt8(i), 1, 2].withUnsafeBytes { out.push(MediaPacketHeader(ssrc: 0, rtpTimestamp: UInt32(i * 960), arrivalNanos: 0), payload: $0) }
        }
        sender.tick(nowNanos: 1_000_000_000, srtp: ours) { p, n in
            sent.append(Array(UnsafeRawBufferPointer(start: p, count: n)))
            return true
        }
        #expect(sent.count == 4)
        let original = sent
        // RTPFB FMT 1 for SSRC 555: PID 101, BLP bit 1 → 101 and 103; plus 90 (never sent).
        var nack: [UInt8] = [0x81, 205, 0, 4, 0, 0, 0, 1, 0, 0, 0x02, 0x2B]
        nack += [0, 101, 0, 2] + [0, 90, 0, 0]
        let p = try #require(protect(peer, nack, rtcp: true))
        p.withUnsafeBytes { r.handle($0.baseAddress!, count: $0.count, isRTCP: true, nowNanos: 2_000_000_000) }
        #expect(sent.count == 6)
        #expect(sent[4] == original[1] && sent[5] == original[3])
        #expect(r.counters.nacksReceived == 1)
        #expect(rtp.retransmitted == 2 && rtp.retransmissionMisses == 1)
    }
}

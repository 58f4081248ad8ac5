import BedrudProtocol
import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

/// Loopback interop against scripts/rtc_peer.py, an aiortc peer shaped like LiveKit's
/// subscriber PC. Serialized: each test runs a Python process and real media.
@Suite("PeerConnection ↔ aiortc on loopback", .serialized)
struct PeerConnectionAiortcTests {
    static var twoTracks: [[String: Any]] { [
        ["participant": "PA_alice", "track": "TR_alice", "freq": 440, "stereo": false],
        ["participant": "PA_bob", "track": "TR_bob", "freq": 660, "stereo": true],
    ] }

    static let srtpSetups: [(SRTPProfile, SRTPBackend)] = [(.aeadAES128GCM, .openSSLForGCM), (.aeadAES128GCM, .libsrtp), (.aes128CMHMACSHA1_80, .libsrtp)]

    @Test("ICE+DTLS complete, every RTP packet aiortc sent arrives decryptable, data arrives with its label", arguments: srtpSetups)
    func fullSession(profile: SRTPProfile, backend: SRTPBackend) async throws {
        var cfg = InteropSession.loopbackConfiguration()
        cfg.srtpProfiles = [profile]
        cfg.srtpBackend = backend
        try await InteropSession.run(configuration: cfg) { s in
            let (tracks, answer) = try await s.negotiate(["cmd": "offer", "tracks": Self.twoTracks, "data": true, "red": true])

            // Tracks from a=ssrc/a=msid, LiveKit style.
            #expect(tracks.count == 2)
            let alice = try #require(tracks.first { $0.trackSID == "TR_alice" })
            let bob = try #require(tracks.first { $0.trackSID == "TR_bob" })
            #expect(alice.participantSID == "PA_alice" && bob.participantSID == "PA_bob")
            #expect(alice.payloadType == 111 && !alice.stereo && bob.stereo && alice.nack)
            // Answer: Opus 111 only (RED 63 declined), stereo where offered, setup active, data kept.
            let parsed = try SessionDescription(parsing: answer)
            #expect(parsed.media.filter { $0.kind == "audio" }.allSatisfy { $0.formats == ["111"] && $0.direction == .recvonly })
            #expect(parsed.media[1].formatParameters(for: 111)?.contains("stereo=1") == true)
            #expect(parsed.media[0].formatParameters(for: 111)?.contains("stereo=1") == false)
            #expect(parsed.media.last?.isDataChannel == true && parsed.media.last?.port == 9)
            #expect(parsed.media[0].setup == .active)

            try await s.pc.waitUntilConnected(timeoutSeconds: 30)
            let connected = try await s.events.first(where: { if case .connected = $0 { true } else { false } }, timeout: 30)
            #expect(connected == .connected(srtpProfile: profile))
            _ = try await s.peer.next("state", timeout: 20) { $0["connection"] as? String == "connected" }

            // Data channels the peer (server side) created arrive with their labels.
            for label in ["_reliable", "_lossy"] {
                _ = try await s.events.first(where: { if case .dataChannelOpened(let c) = $0 { c.label == label } else { false } }, timeout: 20, "\(label) open")
            }
            _ = try await s.peer.request(["cmd": "send_data", "label": "_reliable", "hex": "0a0568656c6c6f", "binary": true], reply: "data_sent")
            _ = try await s.peer.request(["cmd": "send_data", "label": "_lossy", "hex": "6869", "binary": false], reply: "data_sent")
            let reliable = try await s.events.first(where: { if case .dataChannelMessage(let m) = $0 { m.label == "_reliable" } else { false } }, timeout: 20)
            #expect(reliable == .dataChannelMessage(DataChannelMessage(label: "_reliable", channelID: 1, data: [0x0A, 0x05, 0x68, 0x65, 0x6C, 0x6C, 0x6F], isBinary: true)))
            let lossy = try await s.events.first(where: { if case .dataChannelMessage(let m) = $0 { m.label == "_lossy" } else { false } }, timeout: 20)
            if case .dataChannelMessage(let m) = lossy { #expect(m.data == Array("hi".utf8) && !m.isBinary) }

            // Let media run, stop it, and compare counts with what aiortc put on the wire.
            try? await waitUntil("100 packets on every track", timeout: 20) { (await s.pc.stats().tracks.map(\.packetsReceived).min() ?? 0) >= 100 }
            let stats = try await s.peer.request(["cmd": "stop_media"], reply: "stats")
            let sent = stats.counts("sent")
            #expect(sent.keys.sorted() == [alice.ssrc, bob.ssrc].sorted())
            let received = await s.waitForCounts(sent)
            for (ssrc, n) in sent {
                #expect(received[ssrc] == UInt64(n), "SSRC \(ssrc): aiortc sent \(n), received \(received[ssrc] ?? 0)")
            }
            let transport = await s.pc.stats().transport
            #expect(transport.srtpAuthFailures == 0 && transport.malformedRTP == 0 && transport.unknownSSRCPackets == 0)

            // Every packet is in its ring, decodes as Opus, and carries the tone it was sent with.
            for (t, freq) in [(alice, 440.0), (bob, 660.0)] {
                let ring = try #require(s.rings[t.ssrc])
                let drained = s.drain(ring)
                #expect(drained.payloads.count == sent[t.ssrc])
                #expect(drained.senderReports >= 1, "no RTCP sender report reached the ring of \(t.trackSID ?? "")")
                let f = try #require(estimateToneFrequency(drained.payloads))
                #expect(abs(f - freq) < freq * 0.03, "decoded \(f) Hz, sent \(freq) Hz")
            }
            print("full session: sent \(sent) received \(received) rr \(stats.int("rr_packets")) transport \(transport)")
            // aiortc saw our receiver reports.
            #expect(stats.int("rr_packets") >= 1)
        }
    }

    @Test("A re-offer with a new track is answered in place and its packets arrive")
    func reofferAddsTrack() async throws {
        var cfg = InteropSession.loopbackConfiguration()
        cfg.statsIntervalMs = 200
        try await InteropSession.run(configuration: cfg) { s in
            try await s.negotiate(["cmd": "offer", "tracks": [Self.twoTracks[0]], "data": true])
            try await s.pc.waitUntilConnected(timeoutSeconds: 30)
            let (tracks, answer) = try await s.negotiate(["cmd": "add_track", "tracks": [["participant": "PA_carol", "track": "TR_carol", "freq": 550]]])
            #expect(tracks.count == 2)
            let carol = try #require(tracks.first { $0.trackSID == "TR_carol" })
            #expect(try SessionDescription(parsing: answer).media.count == 3)
            let added = try await s.events.first(where: { if case .tracksChanged(let a, _) = $0 { a.contains { $0.trackSID == "TR_carol" } } else { false } }, timeout: 30)
            if case .tracksChanged(_, let removed) = added { #expect(removed.isEmpty) }
            try await waitUntil("50 of Carol's packets", timeout: 20) { (await s.pc.stats().tracks.first { $0.ssrc == carol.ssrc }?.packetsReceived ?? 0) >= 50 }
            let stats = try await s.peer.request(["cmd": "stop_media"], reply: "stats")
            let sent = stats.counts("sent")
            let received = await s.waitForCounts(sent)
            #expect(received[carol.ssrc] == UInt64(sent[carol.ssrc] ?? -1))
            let carolRing = try #require(s.rings[carol.ssrc])
            let f = try #require(estimateToneFrequency(s.drain(carolRing).payloads))
            #expect(abs(f - 550) < 550 * 0.03)
            #expect(await s.pc.state == .connected)
            // Periodic stats events name the tracks with their LiveKit ids.
            let statsEvent = try await s.events.first(where: { if case .stats(let st) = $0 { st.tracks.contains { $0.trackSID == "TR_carol" && $0.packetsReceived > 0 } } else { false } }, timeout: 10)
            if case .stats(let st) = statsEvent { #expect(st.state == .connected && st.tracks.allSatisfy { $0.participantSID != nil }) }
        }
    }

    @Test("A wrong DTLS fingerprint in the offer fails the connection with a clear error")
    func wrongFingerprint() async throws {
        try await InteropSession.run { s in
            try await s.negotiate(["cmd": "offer", "tracks": [Self.twoTracks[0]], "data": true, "wrong_fingerprint": true])
            let failed = try await s.events.first(where: { if case .failed = $0 { true } else { false } }, timeout: 30, "failure")
            guard case .failed(let error) = failed else { return }
            #expect(error.isFingerprintMismatch)
            #expect(error.description.contains("does not match the fingerprint"))
            await #expect(throws: PeerConnectionError.self) { try await s.pc.waitUntilConnected(timeoutSeconds: 1) }
            #expect(await s.pc.state == .failed)
            let t = await s.pc.stats().transport
            #expect(t.rtpPackets == 0)
        }
    }

    @Test("5 % loss and reordering: NACKs and receiver reports reach aiortc, retransmissions fill the gaps")
    func lossyRun() async throws {
        try await InteropSession.run { s in
            _ = try await s.peer.request(["cmd": "impair", "loss": 0.05, "reorder": 0.05, "seed": 7], reply: "impaired")
            let (tracks, _) = try await s.negotiate(["cmd": "offer", "tracks": [Self.twoTracks[0]], "data": false])
            let t = try #require(tracks.first)
            try await s.pc.waitUntilConnected(timeoutSeconds: 30)
            try await waitUntil("200 packets received", timeout: 30) { (await s.pc.stats().tracks.first?.packetsReceived ?? 0) >= 200 }
            let stats = try await s.peer.request(["cmd": "stop_media"], reply: "stats")
            let sent = stats.counts("sent")[t.ssrc] ?? 0
            let dropped = stats.counts("dropped")[t.ssrc] ?? 0
            let retransmitted = stats.counts("retransmitted")[t.ssrc] ?? 0
            #expect(dropped > 0)
            #expect(stats.int("nack_packets") > 0, "aiortc received no NACK")
            #expect(stats.int("nack_seqs") >= dropped / 2)
            #expect(stats.int("rr_packets") >= 1, "aiortc received no receiver report")
            #expect(retransmitted > 0)
            // Everything sent the first time arrives, plus the retransmissions that recovered drops.
            let ts = await s.pc.stats().tracks.first { $0.ssrc == t.ssrc }
            let track = try #require(ts)
            #expect(track.nackedPackets > 0 && track.recoveredPackets > 0)
            // Rates and jitter depend on how busy the machine is (and the sender has just
            // stopped), so only their sanity is checked here; the counts above are exact.
            #expect(track.packetsPerSecond > 0 && track.packetsPerSecond < 200, "pps \(track.packetsPerSecond)")
            #expect(track.jitterMs >= 0 && track.jitterMs < 500)
            #expect(track.packetsLost <= Int64(dropped))
            #expect(track.packetsReceived >= UInt64(sent))
            #expect(track.packetsReceived <= UInt64(sent + retransmitted))
            print("lossy run: sent \(sent) dropped \(dropped) retransmitted \(retransmitted) nacks \(stats.int("nack_packets"))/\(stats.int("nack_seqs")) rr \(stats.int("rr_packets")); received \(track.packetsReceived) lost \(track.packetsLost) nacked \(track.nackedPackets) recovered \(track.recoveredPackets) jitter \(track.jitterMs) ms pps \(track.packetsPerSecond)")
        }
    }
}

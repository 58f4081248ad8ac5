import BedrudProtocol
import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

/// Our subscriber side against pion, LiveKit's own WebRTC stack (`scripts/pion-peer`):
/// pion offers as LiveKit's subscriber PC does (ICE-lite, actpass, Opus 111, RED, VP8 and
/// H264 with RTX, server-created data channels), applies our answers with its own
/// `SetRemoteDescription`, and sends Opus through its packetizer with RTCP sender reports.
/// Serialized: each test runs a Go process and real media on loopback.
@Suite("PeerConnection ↔ pion (LiveKit's WebRTC stack) on loopback", .serialized)
struct PionConformanceTests {
    static func audio(_ track: String, participant: String = "PA_alice", red: Bool? = nil) -> [String: Any] {
        var t: [String: Any] = ["kind": "audio", "participant": participant, "track": track]
        if let red { t["red"] = red }
        return t
    }

    static func video(_ track: String, codec: String = "VP8", participant: String = "PA_alice") -> [String: Any] {
        ["kind": "video", "codec": codec, "participant": participant, "track": track]
    }

    static func ufrag(_ sdp: String) throws -> String? {
        let parsed = try SessionDescription(parsing: sdp)
        return parsed.media.compactMap(\.iceUfrag).first
    }

    static func section(_ sdp: String, mid: String) throws -> MediaDescription? {
        try SessionDescription(parsing: sdp).media.first { $0.mid == mid }
    }

    static func mid(of track: String, in offer: String) throws -> String? {
        try SessionDescription(parsing: offer).media.first { $0.msid?.trackID == track }?.mid
    }

    @Test("Every answer shape is accepted by pion: audio, audio+video, RED, H264, several sections, a recycled mid, an ICE restart", arguments: [DeclinePolicy.reject, .inactive])
    func everyShape(video policy: DeclinePolicy) async throws {
        var cfg = InteropSession.loopbackConfiguration()
        cfg.answer.video = policy
        try await PionPeer.run(configuration: cfg) { s in
            // 1. Audio only (RED offered first, answered plain Opus), with the data channels.
            // (Pion only lets RED be offered before the first answer fixes its codecs.)
            let first = try await s.negotiateWithPion(["cmd": "offer", "tracks": [Self.audio("TR_a1", red: true)], "data": true])
            #expect(first.tracks.map(\.trackSID) == ["TR_a1"])
            let a1 = try #require(try Self.mid(of: "TR_a1", in: first.offer))
            #expect(try Self.section(first.offer, mid: a1)?.formats == ["63", "111"])
            #expect(try Self.section(first.answer, mid: a1)?.formats == ["111"])
            try await s.pc.waitUntilConnected(timeoutSeconds: 30)

            // 2. A camera: VP8 with RTX. Declined, naming every offered codec with its rtpmap.
            let withVideo = try await s.negotiateWithPion(["cmd": "add_track", "tracks": [Self.video("TR_v1")]])
            let v1 = try #require(try Self.mid(of: "TR_v1", in: withVideo.offer))
            let v1Answer = try #require(try Self.section(withVideo.answer, mid: v1))
            #expect(v1Answer.formats == ["96", "97", "102", "103"] && v1Answer.rtpMaps.map(\.encoding) == ["VP8", "rtx", "H264", "rtx"])
            #expect(v1Answer.port == (policy == .reject ? 0 : 9))

            // 3. Several sections at once: a second audio track and an H264 camera. Pion can
            // bind H264 only because the first declined video section named it.
            let more = try await s.negotiateWithPion(["cmd": "add_track", "tracks": [Self.audio("TR_a2", participant: "PA_bob"), Self.video("TR_v2", codec: "H264", participant: "PA_bob")]])
            let a2 = try #require(try Self.mid(of: "TR_a2", in: more.offer))
            #expect(try Self.section(more.answer, mid: a2)?.formats == ["111"])
            let v2 = try #require(try Self.mid(of: "TR_v2", in: more.offer))
            #expect(try Self.section(more.answer, mid: v2)?.rtpMaps.first?.encoding == "H264")
            #expect(Set(more.tracks.compactMap(\.trackSID)) == ["TR_a1", "TR_a2"])

            // 4. A track unpublished: its section goes inactive. 5. A new one recycles that mid.
            let removed = try await s.negotiateWithPion(["cmd": "remove_track", "track": "TR_a1"])
            #expect(try Self.section(removed.answer, mid: a1)?.direction == .inactive)
            #expect(removed.tracks.compactMap(\.trackSID) == ["TR_a2"])
            let recycled = try await s.negotiateWithPion(["cmd": "add_track", "tracks": [Self.audio("TR_a3", participant: "PA_carol")]])
            #expect(try Self.mid(of: "TR_a3", in: recycled.offer) == a1, "pion did not recycle the mid")
            #expect(try Self.section(recycled.answer, mid: a1)?.direction == .recvonly)
            #expect(Set(recycled.tracks.compactMap(\.trackSID)) == ["TR_a2", "TR_a3"])

            // 6. An ICE restart: new credentials on both sides, answered and accepted.
            let restarted = try await s.negotiateWithPion(["cmd": "ice_restart"])
            #expect(try Self.ufrag(restarted.offer) != Self.ufrag(recycled.offer))
            #expect(try Self.ufrag(restarted.answer) != Self.ufrag(recycled.answer))
            #expect(await s.pc.state == .connected)
        }
    }

    @Test("Pion refuses the answer shapes it must: a declined video section without rtpmap, or with PT 0 only", arguments: [
        ("rtpmap removed", "payload type not found"), ("PT 0", "codec is not supported by remote"),
    ])
    func pionRefusesBrokenShapes(shape: String, pionSays: String) async throws {
        try await PionPeer.run { s in
            let (_, offer, _, verdict) = try await s.offerAndAnswer(["cmd": "offer", "tracks": [Self.audio("TR_a"), Self.video("TR_v")], "data": true]) { answer in
                // Re-create what we used to answer (rtpmap removed) or pion's own PT 0 shape.
                var sdp = try! SessionDescription(parsing: answer)
                let i = sdp.media.firstIndex { $0.kind == "video" }!
                sdp.media[i].attributes.removeAll { $0.name == "rtpmap" || $0.name == "fmtp" }
                if shape == "PT 0" { sdp.media[i].formats = ["0"] }
                #expect(!PionAnswerRule.violations(sdp).isEmpty, "our rule must flag what pion refuses")
                return sdp.text
            }
            #expect(offer.contains("m=video"))
            guard case .rejected(let why) = verdict else {
                Issue.record("pion accepted a \(shape) video section")
                return
            }
            #expect(why.contains(pionSays), "pion said: \(why)")
        }
    }

    @Test("Why a declined video section names every codec: naming VP8 alone, a later H264 camera fails in pion")
    func oneCodecIsNotEnough() async throws {
        try await PionPeer.run { s in
            let (_, _, _, verdict) = try await s.offerAndAnswer(["cmd": "offer", "tracks": [Self.audio("TR_a"), Self.video("TR_v")], "data": true]) { answer in
                var sdp = try! SessionDescription(parsing: answer)
                let i = sdp.media.firstIndex { $0.kind == "video" }!
                sdp.media[i].formats = ["96"]
                sdp.media[i].attributes.removeAll { ($0.name == "rtpmap" || $0.name == "fmtp") && !($0.value ?? "").hasPrefix("96 ") }
                #expect(PionAnswerRule.violations(sdp).isEmpty)
                return sdp.text
            }
            #expect(verdict == .applied)
            let (_, _, _, later) = try await s.offerAndAnswer(["cmd": "add_track", "tracks": [Self.video("TR_h264", codec: "H264")]])
            #expect(later == .rejected("unable to start track, codec is not supported by remote"))
        }
    }

    @Test("Cameras (VP8 and H264) between the microphones of the first offer: media connects, every Opus packet pion sent arrives with its tone, video is counted and dropped")
    func firstOfferWithVideo() async throws {
        try await PionPeer.run { s in
            // Audio after a declined video section too, as when a participant with a camera joins first.
            let tracks = [Self.audio("TR_alice"), Self.video("TR_cam"), Self.audio("TR_bob", participant: "PA_bob"), Self.video("TR_bobcam", codec: "H264", participant: "PA_bob")]
            let negotiated = try await s.negotiateWithPion(["cmd": "offer", "tracks": tracks, "data": true, "video_rtp": true])
            #expect(negotiated.tracks.map(\.trackSID) == ["TR_alice", "TR_bob"])
            #expect(negotiated.tracks.map(\.participantSID) == ["PA_alice", "PA_bob"])
            #expect(negotiated.tracks.allSatisfy { $0.payloadType == 111 && $0.nack })
            // Pion is ICE-lite, so we must be the controlling agent.
            #expect(try SessionDescription(parsing: negotiated.offer).isICELite)
            try await s.pc.waitUntilConnected(timeoutSeconds: 30)
            _ = try await s.peer.next("state", timeout: 30) { $0["connection"] as? String == "connected" }
            for label in ["_reliable", "_lossy"] {
                _ = try await s.events.first(where: { if case .dataChannelOpened(let c) = $0 { c.label == label } else { false } }, timeout: 20, "\(label) open")
            }

            _ = try await s.peer.request(["cmd": "media", "frames": try opusToneFrames(frequency: 440)], reply: "media_started")
            let audio = negotiated.tracks.map(\.ssrc)
            try await waitUntil("150 packets on every audio track", timeout: 30) {
                let st = await s.pc.stats().tracks
                return audio.allSatisfy { ssrc in (st.first { $0.ssrc == ssrc }?.packetsReceived ?? 0) >= 150 }
            }
            let stats = try await s.peer.request(["cmd": "stop_media"], reply: "stats")
            let sent = stats.counts("sent")
            for ssrc in audio {
                let audioSent = try #require(sent[ssrc])
                let retransmitted = stats.counts("retransmitted")[ssrc] ?? 0
                let received = try #require(await s.waitForCounts([ssrc: audioSent])[ssrc])
                // Each packet once, plus any retransmission pion's NACK responder sent.
                #expect(received >= UInt64(audioSent) && received <= UInt64(audioSent + retransmitted), "SSRC \(ssrc): pion sent \(audioSent) (+\(retransmitted) again), we received \(received)")
                let ring = try #require(s.rings[ssrc])
                let drained = s.drain(ring)
                #expect(UInt64(drained.payloads.count) == received)
                let f = try #require(estimateToneFrequency(drained.payloads))
                #expect(abs(f - 440) < 440 * 0.03, "decoded \(f) Hz, sent 440 Hz")
                #expect(drained.senderReports >= 1, "no RTCP sender report from pion reached the ring of \(ssrc)")
            }
            #expect(stats.int("sr_packets") >= 2 && stats.int("rr_packets") >= 1, "SRs \(stats.int("sr_packets")), RRs at pion \(stats.int("rr_packets"))")

            // Pion sends the declined cameras anyway: counted as unknown SSRC, never in a ring.
            let videoSent = sent.filter { !audio.contains($0.key) }.values.reduce(0, +)
            let transport = await s.pc.stats().transport
            #expect(transport.srtpAuthFailures == 0 && transport.malformedRTP == 0)
            #expect(transport.unknownSSRCPackets == UInt64(videoSent))
            print("pion first offer with video: sent \(sent), video \(videoSent), SRs \(stats.int("sr_packets")), RRs at pion \(stats.int("rr_packets"))")
        }
    }

    @Test("ICE restart against ICE-lite pion: new credentials, same DTLS session and track, media resumes with an honest gap")
    func iceRestartKeepsSession() async throws {
        try await PionPeer.run { s in
            let first = try await s.negotiateWithPion(["cmd": "offer", "tracks": [Self.audio("TR_alice")], "data": true])
            let alice = try #require(first.tracks.first)
            try await s.pc.waitUntilConnected(timeoutSeconds: 30)
            _ = try await s.peer.next("state", timeout: 30) { $0["connection"] as? String == "connected" }
            _ = try await s.peer.request(["cmd": "media", "frames": try opusToneFrames(frequency: 440)], reply: "media_started")
            @Sendable func received() async -> UInt64 { await s.pc.stats().tracks.first { $0.ssrc == alice.ssrc }?.packetsReceived ?? 0 }
            try await waitUntil("50 packets received", timeout: 30) { await received() >= 50 }

            let connectedEvents = s.peer.messages.count { $0.event == "state" && $0["ice"] as? String == "connected" }
            let restarted = try await s.negotiateWithPion(["cmd": "ice_restart"])
            #expect(try Self.ufrag(restarted.offer) != Self.ufrag(first.offer))
            #expect(try Self.ufrag(restarted.answer) != Self.ufrag(first.answer))
            #expect(restarted.tracks == first.tracks)
            // Pion's agent went through checking and is connected again on the new credentials.
            let skip = SkipCounter(connectedEvents)
            _ = try await s.peer.messages.first(where: { $0.event == "state" && $0["ice"] as? String == "connected" && skip.take() }, timeout: 30, "pion ICE connected after the restart")
            let atRestart = await received()
            try await waitUntil("media resumed after the ICE restart", timeout: 30) { await received() >= atRestart + 100 }

            let stats = try await s.peer.request(["cmd": "stop_media"], reply: "stats")
            let sent = try #require(stats.counts("sent")[alice.ssrc])
            _ = await s.waitForCounts([alice.ssrc: sent], timeout: 5)
            let pcStats = await s.pc.stats()
            let track = try #require(pcStats.tracks.first { $0.ssrc == alice.ssrc })
            // One DTLS handshake for the whole session; no second .connected.
            #expect(s.events.count { if case .connected = $0 { true } else { false } } == 1)
            #expect(pcStats.state == .connected && pcStats.transport.srtpAuthFailures == 0)
            // An honest gap: every packet pion sent was received or is counted lost; the only
            // excess is what pion's NACK responder sent a second time.
            let retransmitted = stats.counts("retransmitted")[alice.ssrc] ?? 0
            let accounted = Int64(track.packetsReceived) + track.packetsLost
            #expect(track.packetsLost >= 0 && accounted >= Int64(sent) && accounted <= Int64(sent + retransmitted), "sent \(sent) (+\(retransmitted) again), received \(track.packetsReceived), lost \(track.packetsLost)")
            print("pion ICE restart: sent \(sent) retransmitted \(retransmitted) received \(track.packetsReceived) lost \(track.packetsLost) nacked \(track.nackedPackets) recovered \(track.recoveredPackets)")
        }
    }

    @Test("ICE over TCP: pion offers passive TCP candidates only, we connect actively and audio arrives")
    func iceTCP() async throws {
        var cfg = InteropSession.loopbackConfiguration()
        cfg.ice.tcp = true
        try await PionPeer.run(configuration: cfg) { s in
            let negotiated = try await s.negotiateWithPion(["cmd": "offer", "tracks": [Self.audio("TR_alice")], "data": false, "tcp": true])
            let offered = try SessionDescription(parsing: negotiated.offer).media.flatMap(\.candidates)
            #expect(!offered.isEmpty && offered.allSatisfy { $0.lowercased().contains(" tcp ") && $0.contains("tcptype passive") }, "\(offered)")
            let alice = try #require(negotiated.tracks.first)
            try await s.pc.waitUntilConnected(timeoutSeconds: 30)
            _ = try await s.peer.request(["cmd": "media", "frames": try opusToneFrames(frequency: 440)], reply: "media_started")
            try await waitUntil("50 of Alice's packets", timeout: 30) { (await s.pc.stats().tracks.first { $0.ssrc == alice.ssrc }?.packetsReceived ?? 0) >= 50 }
            let stats = try await s.peer.request(["cmd": "stop_media"], reply: "stats")
            let sent = try #require(stats.counts("sent")[alice.ssrc])
            let retransmitted = stats.counts("retransmitted")[alice.ssrc] ?? 0
            let received = try #require(await s.waitForCounts([alice.ssrc: sent])[alice.ssrc])
            #expect(received >= UInt64(sent) && received <= UInt64(sent + retransmitted))
            let pair = await s.pc.stats().selectedPair ?? ""
            #expect(pair.lowercased().contains("tcp"), "selected pair \(pair)")
        }
    }
}

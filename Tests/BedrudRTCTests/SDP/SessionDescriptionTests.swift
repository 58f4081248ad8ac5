import Testing
@testable import BedrudRTC

@Suite("SDP parse and write")
struct SDPParseTests {
    @Test("aiortc's offer and answer round-trip byte for byte", arguments: [SDPFixtures.aiortcOffer, SDPFixtures.aiortcAnswer])
    func roundTripAiortc(text: String) throws {
        let sdp = try SessionDescription(parsing: text)
        #expect(sdp.text == text)
        #expect(try SessionDescription(parsing: sdp.text) == sdp)
    }

    @Test("LiveKit's subscriber offer shape round-trips and reads as expected")
    func liveKitShape() throws {
        let text = SDPFixtures.liveKitSubscriberOffer
        let sdp = try SessionDescription(parsing: text)
        #expect(sdp.text == text)
        #expect(sdp.bundleGroups == [["0", "1", "2", "3"]])
        #expect(sdp.media.map(\.kind) == ["application", "audio", "audio", "video"])
        #expect(sdp.media[0].isDataChannel && sdp.media[0].sctpPort == 5000 && sdp.media[0].maxMessageSize == 65535)
        let a = sdp.media[1]
        #expect(a.mid == "1" && a.direction == .sendonly && a.isRTCPMux && a.isReducedSizeRTCP)
        #expect(a.rtpMaps.map(\.payloadType) == [111, 63, 0, 8])
        #expect(a.rtpMaps[0] == RTPMap(payloadType: 111, encoding: "opus", clockRate: 48000, channels: 2))
        #expect(a.formatParameters(for: 111) == "minptime=10;useinbandfec=1")
        #expect(a.rtcpFeedback(for: 111) == ["nack"])
        #expect(a.headerExtensions.map(\.id) == [5])
        #expect(a.ssrcs == [SSRCDescription(ssrc: 3_735_928_559, cname: "PA_f3Xq9KcR2LmN|TR_AMkT7nWzQ4pVbY", streamID: "PA_f3Xq9KcR2LmN|TR_AMkT7nWzQ4pVbY", trackID: "TR_AMkT7nWzQ4pVbY")])
        // Session-level fingerprint applies to every section.
        #expect(sdp.fingerprints(for: 2).first?.algorithm == "sha-256")
        #expect(sdp.fingerprints(for: 2).first?.bytes.count == 32)
        #expect(sdp.iceCredentials(for: 3)?.ufrag == "yxBfQGNGfTLmWnRJ")
        // The RTX SSRC of the FID group is not a track of its own.
        #expect(sdp.media[3].ssrcs.map(\.ssrc) == [2_864_434_397])
    }

    @Test("LF-only line endings and blank lines parse the same")
    func lfEndings() throws {
        let crlf = try SessionDescription(parsing: SDPFixtures.aiortcOffer)
        let lf = try SessionDescription(parsing: SDPFixtures.aiortcOffer.replacingOccurrences(of: "\r\n", with: "\n\n"))
        #expect(lf == crlf)
    }

    @Test("Malformed SDP is refused with the line number", arguments: [
        ("", 0), ("x", 1), ("v=1\r\n", 1), ("o=- 1 1 IN IP4 0.0.0.0\r\n", 1), ("v=0\r\ns=-\r\n", 0),
        ("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\nm=audio\r\n", 3), ("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\nm=audio 70000 RTP/AVP 0\r\n", 3),
        ("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\nA=x\r\n", 3), ("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\na=\r\n", 3), ("v=0\r\nv=0\r\n", 2),
    ])
    func malformed(text: String, line: Int) {
        #expect(throws: SDPError.self) { try SessionDescription(parsing: text) }
        do {
            _ = try SessionDescription(parsing: text)
        } catch {
            #expect(error.line == line)
            #expect(!error.description.isEmpty)
        }
    }

    @Test("Fingerprints parse and print as in SDP")
    func fingerprint() throws {
        let f = try #require(DTLSFingerprint(attributeValue: "SHA-256 0A:1b:FF:00:0A:1B:FF:00:0A:1B:FF:00:0A:1B:FF:00:0A:1B:FF:00:0A:1B:FF:00:0A:1B:FF:00:0A:1B:FF:00"))
        #expect(f.algorithm == "sha-256" && f.bytes.count == 32 && f.bytes[1] == 0x1B)
        #expect(f.hex.hasPrefix("0A:1B:FF:00"))
        #expect(DTLSFingerprint(attributeValue: "sha-256 0A:1") == nil)
        #expect(DTLSFingerprint(attributeValue: "sha-256") == nil)
        #expect(DTLSFingerprint(attributeValue: "sha-256 GG:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00") == nil)
    }
}

@Suite("SDP offer/answer")
struct SDPNegotiationTests {
    let identityFingerprint = DTLSFingerprint(algorithm: "sha-256", bytes: Array(repeating: 0xAB, count: 32))

    func local(candidates: [String] = ["candidate:1 1 UDP 2015363327 127.0.0.1 40000 typ host"], eoc: Bool = true) -> LocalTransportParameters {
        LocalTransportParameters(iceUfrag: "ufrg", icePassword: "0123456789abcdefghijkl", fingerprint: identityFingerprint, setup: .active, candidates: candidates, endOfCandidates: eoc)
    }

    /// Answers `offer` and checks the answer against pion's rule (``PionAnswerRule``):
    /// every answer these tests make must be one LiveKit accepts.
    func checkedAnswer(_ offer: SessionDescription, policy: AnswerPolicy = AnswerPolicy(), sourceLocation: SourceLocation = #_sourceLocation) throws -> (SessionDescription, [SectionDecision]) {
        let result = try SDPNegotiation.answer(to: offer, local: local(), policy: policy, sessionID: 42, sessionVersion: 2)
        let problems = PionAnswerRule.violations(result.0)
        #expect(problems.isEmpty, "pion would refuse this answer: \(problems)", sourceLocation: sourceLocation)
        #expect(PionAnswerRule.violations(text: result.0.text) == problems, sourceLocation: sourceLocation)
        return result
    }

    @Test("LiveKit offer: Opus accepted with its PT, RED and video declined, data kept, BUNDLE without rejected mids")
    func answerLiveKit() throws {
        let offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        let (answer, decisions) = try checkedAnswer(offer, policy: AnswerPolicy())
        #expect(answer.media.count == 4)
        #expect(answer.media.map(\.mid) == ["0", "1", "2", "3"])
        // Data.
        #expect(answer.media[0].isDataChannel && answer.media[0].port == 9 && answer.media[0].sctpPort == 5000)
        #expect(answer.media[0].maxMessageSize == 262_144)
        #expect(decisions[0].outcome == .data(remotePort: 5000, remoteMaxMessageSize: 65535))
        // Audio: Opus only, fec, NACK where offered, stereo only where sprop-stereo.
        for i in [1, 2] {
            let m = answer.media[i]
            #expect(m.formats == ["111"] && m.port == 9 && m.direction == .recvonly)
            #expect(m.rtpMaps == [RTPMap(payloadType: 111, encoding: "opus", clockRate: 48000, channels: 2)])
            #expect(m.isRTCPMux && m.isReducedSizeRTCP)
            #expect(m.headerExtensions.isEmpty)
        }
        #expect(answer.media[1].formatParameters(for: 111) == "minptime=10;useinbandfec=1")
        #expect(answer.media[2].formatParameters(for: 111) == "minptime=10;useinbandfec=1;stereo=1")
        #expect(answer.media[1].rtcpFeedback(for: 111) == ["nack"])
        #expect(answer.media[2].rtcpFeedback(for: 111).isEmpty)
        #expect(decisions[2].outcome == .audio(payloadType: 111, clockRate: 48000, stereo: true, nack: false))
        // Video declined: inactive at port 9, kept in BUNDLE, naming the offered codecs with
        // their rtpmaps (without them LiveKit's pion fails the answer: "payload type not found").
        #expect(answer.media[3].port == 9 && answer.media[3].direction == .inactive)
        #expect(decisions[3].outcome == .inactive(reason: "video is not received by a recorder"))
        #expect(answer.media[3].formats == ["96", "97"])
        #expect(answer.media[3].rtpMaps == [RTPMap(payloadType: 96, encoding: "VP8", clockRate: 90000), RTPMap(payloadType: 97, encoding: "rtx", clockRate: 90000)])
        #expect(answer.media[3].formatParameters(for: 97) == "apt=96")
        #expect(answer.media[3].mid == "3" && answer.media[3].iceUfrag == "ufrg" && answer.media[3].isRTCPMux && answer.media[3].ssrcs.isEmpty)
        #expect(answer.bundleGroups == [["0", "1", "2", "3"]])
        // Transport: our credentials and fingerprint everywhere, candidates once.
        for m in answer.media.prefix(3) {
            #expect(m.iceUfrag == "ufrg" && m.setup == .active && m.fingerprints == [identityFingerprint])
        }
        #expect(answer.media[0].candidates.count == 1 && answer.media[0].hasEndOfCandidates)
        #expect(answer.media[1].candidates.isEmpty)
        // It parses back, and as an offer-side view it is one consistent transport.
        let reparsed = try SessionDescription(parsing: answer.text)
        #expect(reparsed == answer)
        let transport = try RemoteTransportParameters(from: reparsed)
        #expect(transport.setup == .active && transport.sctpPort == 5000 && transport.candidates.count == 1)
    }

    @Test("Remote tracks come from a=ssrc and a=msid with LiveKit's PA_/TR_ ids")
    func tracks() throws {
        let offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        let (_, decisions) = try checkedAnswer(offer, policy: AnswerPolicy())
        let tracks = RemoteTrack.tracks(in: offer, decisions: decisions)
        #expect(tracks.count == 2)
        #expect(tracks[0].ssrc == 3_735_928_559 && tracks[0].participantSID == "PA_f3Xq9KcR2LmN" && tracks[0].trackSID == "TR_AMkT7nWzQ4pVbY")
        #expect(tracks[0].nack && !tracks[0].stereo && tracks[0].mid == "1")
        #expect(tracks[1].ssrc == 16_909_060 && tracks[1].stereo && !tracks[1].nack)
    }

    @Test("msid forms: PA_x|TR_y, sync-stream PA_x|camera with TR_ track id, malformed")
    func liveKitIDs() {
        #expect(RemoteTrack.liveKitIDs(streamID: "PA_a|TR_b", trackID: "TR_b") == ("PA_a", "TR_b"))
        #expect(RemoteTrack.liveKitIDs(streamID: "PA_a|camera", trackID: "TR_c") == ("PA_a", "TR_c"))
        #expect(RemoteTrack.liveKitIDs(streamID: "nobar", trackID: "uuid") == (nil, nil))
        #expect(RemoteTrack.liveKitIDs(streamID: "XX_a|TR_b", trackID: nil) == (nil, "TR_b"))
    }

    @Test("Video as the BUNDLE-tagged section is answered inactive, not rejected")
    func taggedVideo() throws {
        var offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        offer.attributes = offer.attributes.map { $0.name == "group" ? SDPAttribute("group", "BUNDLE 3 0 1 2") : $0 }
        let (answer, decisions) = try checkedAnswer(offer, policy: AnswerPolicy())
        #expect(answer.media[3].port == 9 && answer.media[3].direction == .inactive)
        #expect(decisions[3].outcome == .inactive(reason: "video is not received by a recorder"))
        #expect(answer.bundleGroups == [["3", "0", "1", "2"]])
    }

    @Test("Decline policy .reject: video at port 0, out of BUNDLE, with rtpmaps, credentials and rtcp-mux but no candidates")
    func rejectPolicy() throws {
        let offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        var policy = AnswerPolicy()
        policy.video = .reject
        let (answer, decisions) = try checkedAnswer(offer, policy: policy)
        let v = answer.media[3]
        #expect(v.port == 0 && v.isRejected && v.formats == ["96", "97"] && v.rtpMaps.map(\.encoding) == ["VP8", "rtx"])
        // aiortc refuses a section without credentials or rtcp-mux, even a rejected one.
        #expect(v.mid == "3" && v.iceUfrag == "ufrg" && v.fingerprints == [identityFingerprint] && v.isRTCPMux && v.candidates.isEmpty)
        #expect(decisions[3].outcome == .rejected(reason: "video is not received by a recorder"))
        #expect(answer.bundleGroups == [["0", "1", "2"]])
    }

    @Test("Decline policy .inactive keeps video in the bundle")
    func inactivePolicy() throws {
        let offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        var policy = AnswerPolicy()
        policy.video = .inactive
        let (answer, _) = try checkedAnswer(offer, policy: policy)
        #expect(answer.media[3].port == 9 && answer.media[3].direction == .inactive && answer.media[3].formats == ["96", "97"])
        #expect(answer.bundleGroups == [["0", "1", "2", "3"]])
    }

    @Test("aiortc's offer (PT 96, no fmtp) is answered with PT 96 and fec; inline candidates of the tagged section only")
    func answerAiortc() throws {
        let offer = try SessionDescription(parsing: SDPFixtures.aiortcOffer)
        let (answer, _) = try checkedAnswer(offer, policy: AnswerPolicy())
        #expect(answer.media[0].formats == ["96"] && answer.media[0].formatParameters(for: 96) == "minptime=10;useinbandfec=1")
        let remote = try RemoteTransportParameters(from: offer)
        #expect(remote.candidates.count == 1 && remote.candidates[0].mid == "0")
        #expect(remote.endOfCandidates && remote.setup == .actpass && remote.fingerprints.count == 3)
    }

    @Test("A re-offer that recycles a section and adds one is answered in place")
    func reoffer() throws {
        var offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        // Track in section 1 unpublished: the server marks it inactive without SSRCs.
        offer.media[1].attributes.removeAll { $0.name == "ssrc" || $0.name == "msid" || $0.name == "sendonly" }
        offer.media[1].attributes.append(SDPAttribute("inactive"))
        var added = offer.media[2]
        added.attributes = added.attributes.map { a in
            switch a.name {
            case "mid": return SDPAttribute("mid", "4")
            case "ssrc": return SDPAttribute("ssrc", a.value!.replacingOccurrences(of: "16909060", with: "5"))
            default: return a
            }
        }
        offer.media.append(added)
        offer.attributes = offer.attributes.map { $0.name == "group" ? SDPAttribute("group", "BUNDLE 0 1 2 3 4") : $0 }
        let (answer, decisions) = try checkedAnswer(offer, policy: AnswerPolicy())
        #expect(answer.media.count == 5)
        #expect(answer.media[1].direction == .inactive && answer.media[1].port == 9)
        #expect(answer.media[4].mid == "4" && answer.media[4].direction == .recvonly)
        let tracks = RemoteTrack.tracks(in: offer, decisions: decisions)
        #expect(tracks.map(\.ssrc) == [16_909_060, 5])
        #expect(answer.bundleGroups == [["0", "1", "2", "3", "4"]])
    }

    @Test("A section the offer rejected stays rejected; an offer with nothing usable is refused")
    func rejected() throws {
        var offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        offer.media[1].port = 0
        let (answer, _) = try checkedAnswer(offer, policy: AnswerPolicy())
        #expect(answer.media[1].port == 0 && answer.media[1].mid == "1")
        offer.media = [offer.media[3]]
        offer.attributes = offer.attributes.filter { $0.name != "group" }
        #expect(throws: SDPError.self) { try SDPNegotiation.answer(to: offer, local: local(), policy: AnswerPolicy(), sessionID: 1, sessionVersion: 1) }
    }

    /// The LiveKit fixture with its video section's `m=` formats and codec lines replaced.
    func offerWithVideo(formats: [String], codecs: [SDPAttribute]) throws -> SessionDescription {
        var offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        offer.media[3].formats = formats
        offer.media[3].attributes.removeAll { ["rtpmap", "fmtp", "rtcp-fb"].contains($0.name) }
        offer.media[3].attributes.append(contentsOf: codecs)
        return offer
    }

    @Test("A declined video section names every offered codec with its rtpmap and fmtp, in order; 0 when none has an rtpmap")
    func declinedVideoCodec() throws {
        let h264 = try offerWithVideo(formats: ["102", "103", "96"], codecs: [
            SDPAttribute("rtpmap", "102 H264/90000"), SDPAttribute("fmtp", "102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"),
            SDPAttribute("rtpmap", "103 rtx/90000"), SDPAttribute("fmtp", "103 apt=102"), SDPAttribute("rtpmap", "96 VP8/90000"),
        ])
        let (a1, d1) = try checkedAnswer(h264)
        // Pion takes the first video section's codecs as all it may ever send: leaving one
        // out would fail a later camera with that codec.
        #expect(a1.media[3].formats == ["102", "103", "96"] && a1.media[3].rtpMaps.map(\.encoding) == ["H264", "rtx", "VP8"])
        #expect(a1.media[3].formatParameters(for: 102) == "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f")
        #expect(a1.media[3].formatParameters(for: 103) == "apt=102")
        #expect(d1[3].outcome == .inactive(reason: "video is not received by a recorder"))
        // Formats without an rtpmap (static or not) are left out.
        let partly = try offerWithVideo(formats: ["26", "96"], codecs: [SDPAttribute("rtpmap", "96 VP8/90000")])
        #expect(try checkedAnswer(partly).0.media[3].formats == ["96"])
        // Static payload types without rtpmap: 0, which pion skips (and which our rule flags for video).
        let bare = try offerWithVideo(formats: ["26"], codecs: [])
        let a3 = try SDPNegotiation.answer(to: bare, local: local(), policy: AnswerPolicy(), sessionID: 1, sessionVersion: 1).0
        #expect(a3.media[3].formats == ["0"] && a3.media[3].rtpMaps.isEmpty)
        #expect(PionAnswerRule.violations(a3) == ["section 3 (video): no codec but 0 (pion: codec is not supported by remote)"])
    }

    @Test("Declined audio without Opus, an unknown kind, a non-RTP application section and a second data section keep pion's rule")
    func otherDeclines() throws {
        var offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        // Audio without Opus: PCMA (rtpmap) and G722.
        var noOpus = offer.media[1]
        noOpus.formats = ["8", "9"]
        noOpus.attributes.removeAll { ["rtpmap", "fmtp", "rtcp-fb", "ssrc", "msid"].contains($0.name) }
        noOpus.attributes += [SDPAttribute("rtpmap", "8 PCMA/8000"), SDPAttribute("rtpmap", "9 G722/8000")]
        noOpus.attributes = noOpus.attributes.map { $0.name == "mid" ? SDPAttribute("mid", "4") : $0 }
        // An RTP section of a kind we do not know.
        var text = offer.media[3]
        text.kind = "text"
        text.formats = ["98"]
        text.attributes.removeAll { ["rtpmap", "fmtp", "rtcp-fb", "ssrc", "ssrc-group", "msid"].contains($0.name) }
        text.attributes += [SDPAttribute("rtpmap", "98 t140/1000")]
        text.attributes = text.attributes.map { $0.name == "mid" ? SDPAttribute("mid", "5") : $0 }
        // An application section that is not SCTP, and a second data section.
        var bfcp = MediaDescription(kind: "application", port: 9, proto: "UDP/BFCP", formats: ["*"])
        bfcp.attributes = [SDPAttribute("mid", "6")]
        var data2 = offer.media[0]
        data2.attributes = data2.attributes.map { $0.name == "mid" ? SDPAttribute("mid", "7") : $0 }
        offer.media += [noOpus, text, bfcp, data2]
        offer.attributes = offer.attributes.map { $0.name == "group" ? SDPAttribute("group", "BUNDLE 0 1 2 3 4 5 6 7") : $0 }
        let (answer, decisions) = try checkedAnswer(offer)
        #expect(answer.media.count == 8)
        #expect(answer.media[4].port == 0 && answer.media[4].formats == ["8", "9"] && answer.media[4].rtpMaps.map(\.encoding) == ["PCMA", "G722"])
        #expect(decisions[4].outcome == .rejected(reason: "no Opus in the offer"))
        #expect(answer.media[5].port == 0 && answer.media[5].kind == "text" && answer.media[5].formats == ["98"] && answer.media[5].rtpMaps.map(\.encoding) == ["t140"])
        #expect(decisions[5].outcome == .rejected(reason: "media kind text is not supported"))
        #expect(answer.media[6].port == 0 && answer.media[6].formats == ["*"] && answer.media[6].mid == "6")
        #expect(decisions[6].outcome == .rejected(reason: "media kind application is not supported"))
        #expect(answer.media[7].port == 0 && answer.media[7].mid == "7")
        #expect(decisions[7].outcome == .rejected(reason: "a second data section (one SCTP association per transport)"))
        #expect(answer.bundleGroups == [["0", "1", "2", "3"]])
        #expect(answer.media.map(\.mid) == ["0", "1", "2", "3", "4", "5", "6", "7"])
    }

    @Test("A recycled section (rejected in the offer, with rtpmaps) is answered rejected with those rtpmaps; its index reused under a new mid is answered in place")
    func recycledRejected() throws {
        var offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        offer.media[3].port = 0
        offer.attributes = offer.attributes.map { $0.name == "group" ? SDPAttribute("group", "BUNDLE 0 1 2") : $0 }
        let (answer, decisions) = try checkedAnswer(offer)
        #expect(answer.media[3].port == 0 && answer.media[3].formats == ["96", "97"] && answer.media[3].rtpMaps.map(\.encoding) == ["VP8", "rtx"])
        #expect(decisions[3].outcome == .rejected(reason: "the offer rejected it"))
        // The next offer recycles index 3 for an audio track under a new mid: answered in place.
        var recycled = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        var audio = recycled.media[2]
        audio.attributes = audio.attributes.map { a in
            switch a.name {
            case "mid": return SDPAttribute("mid", "4")
            case "ssrc": return SDPAttribute("ssrc", a.value!.replacingOccurrences(of: "16909060", with: "77"))
            default: return a
            }
        }
        recycled.media[3] = audio
        recycled.attributes = recycled.attributes.map { $0.name == "group" ? SDPAttribute("group", "BUNDLE 0 1 2 4") : $0 }
        let (again, d2) = try checkedAnswer(recycled)
        #expect(again.media[3].mid == "4" && again.media[3].port == 9 && again.media[3].direction == .recvonly)
        #expect(d2[3].outcome == .audio(payloadType: 111, clockRate: 48000, stereo: true, nack: false))
        #expect(again.bundleGroups == [["0", "1", "2", "4"]])
    }

    @Test("Pion v3 writes a=rtcp-fb:111 nack with a trailing blank: NACK is still answered")
    func rtcpFeedbackTrailingBlank() throws {
        var offer = try SessionDescription(parsing: SDPFixtures.liveKitSubscriberOffer)
        offer.media[1].attributes = offer.media[1].attributes.map { $0.name == "rtcp-fb" ? SDPAttribute("rtcp-fb", "111 nack ") : $0 }
        #expect(offer.media[1].rtcpFeedback(for: 111) == ["nack"])
        let (answer, decisions) = try checkedAnswer(offer)
        #expect(answer.media[1].rtcpFeedback(for: 111) == ["nack"])
        #expect(decisions[1].outcome == .audio(payloadType: 111, clockRate: 48000, stereo: false, nack: true))
    }

    @Test("Pion's rule flags the shapes pion refuses and passes the ones it accepts")
    func pionRuleItself() throws {
        func video(_ m: String, _ attrs: [String]) -> String {
            SDPFixtures.crlf((["v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "t=0 0", m] + attrs).joined(separator: "\n"))
        }
        // The shapes pion was tried with: our old declined section, PT 0, rtpmap at port 0, inactive at port 9.
        #expect(PionAnswerRule.violations(text: video("m=video 0 UDP/TLS/RTP/SAVPF 96", ["c=IN IP4 0.0.0.0", "a=mid:3"])) == ["section 0 (video): payload type 96 has no a=rtpmap (pion: payload type not found)", "section 0 (video): no codec but 0 (pion: codec is not supported by remote)"])
        #expect(PionAnswerRule.violations(text: video("m=video 0 UDP/TLS/RTP/SAVPF 0", ["a=mid:3"])) == ["section 0 (video): no codec but 0 (pion: codec is not supported by remote)"])
        #expect(PionAnswerRule.violations(text: video("m=video 0 UDP/TLS/RTP/SAVPF 96", ["a=mid:3", "a=rtpmap:96 VP8/90000"])).isEmpty)
        #expect(PionAnswerRule.violations(text: video("m=video 9 UDP/TLS/RTP/SAVPF 96", ["a=mid:3", "a=rtpmap:96 VP8/90000", "a=inactive"])).isEmpty)
        // Audio: 0 needs no rtpmap, 111 does; application sections are not read as payload types.
        #expect(PionAnswerRule.violations(text: video("m=audio 9 UDP/TLS/RTP/SAVPF 111 0", ["a=mid:1", "a=rtpmap:111 opus/48000/2"])).isEmpty)
        #expect(PionAnswerRule.violations(text: video("m=audio 9 UDP/TLS/RTP/SAVPF 111 63", ["a=mid:1", "a=rtpmap:111 opus/48000/2"])) == ["section 0 (audio): payload type 63 has no a=rtpmap (pion: payload type not found)"])
        #expect(PionAnswerRule.violations(text: video("m=application 9 UDP/DTLS/SCTP webrtc-datachannel", ["a=mid:0"])).isEmpty)
    }

    @Test("DTLS setup roles (RFC 5763 §5)")
    func setupRoles() throws {
        #expect(try SDPNegotiation.answerSetup(for: .actpass) == .active)
        #expect(try SDPNegotiation.answerSetup(for: .passive) == .active)
        #expect(try SDPNegotiation.answerSetup(for: .active) == .passive)
        #expect(throws: SDPError.self) { try SDPNegotiation.answerSetup(for: .holdconn) }
    }

    @Test("Transport parameters: missing credentials or fingerprint, or two transports, are refused")
    func transportErrors() throws {
        var offer = try SessionDescription(parsing: SDPFixtures.aiortcOffer)
        offer.media[1].attributes = offer.media[1].attributes.map { $0.name == "ice-ufrag" ? SDPAttribute("ice-ufrag", "other") : $0 }
        #expect(throws: SDPError.self) { try RemoteTransportParameters(from: offer) }
        var noFP = try SessionDescription(parsing: SDPFixtures.aiortcOffer)
        for i in noFP.media.indices { noFP.media[i].attributes.removeAll { $0.name == "fingerprint" } }
        #expect(throws: SDPError.self) { try RemoteTransportParameters(from: noFP) }
        var noICE = try SessionDescription(parsing: SDPFixtures.aiortcOffer)
        for i in noICE.media.indices { noICE.media[i].attributes.removeAll { $0.name == "ice-pwd" } }
        #expect(throws: SDPError.self) { try RemoteTransportParameters(from: noICE) }
    }

    @Test("Our offer: data section, actpass, BUNDLE; aiortc's answer to an offer reads back")
    func offerAndAnswer() throws {
        var l = local()
        l.setup = .actpass
        let offer = SDPNegotiation.offer(sections: [.data(mid: "0"), .audio(mid: "1", direction: .sendonly, payloadType: 111, ssrc: 1234, cname: "c", streamID: "PA_me|TR_mine", trackID: "TR_mine")], local: l, sessionID: 9, sessionVersion: 1)
        let parsed = try SessionDescription(parsing: offer.text)
        #expect(parsed.bundleGroups == [["0", "1"]])
        #expect(parsed.media[0].isDataChannel && parsed.media[0].setup == .actpass)
        #expect(parsed.media[1].ssrcs == [SSRCDescription(ssrc: 1234, cname: "c", streamID: "PA_me|TR_mine", trackID: "TR_mine")])
        let answer = try RemoteTransportParameters(from: try SessionDescription(parsing: SDPFixtures.aiortcAnswer))
        #expect(answer.setup == .active && answer.sctpPort == 5000 && answer.maxMessageSize == 262_144)
    }

    @Test("Format parameters keep order and update in place")
    func formatParameters() {
        var f = FormatParameters("minptime=10; useinbandfec=0;sprop-stereo=1")
        f.set("useinbandfec", "1")
        f.set("stereo", "1")
        #expect(f.text == "minptime=10;useinbandfec=1;sprop-stereo=1;stereo=1")
        #expect(f.value("SPROP-STEREO") == "1")
    }
}

import BedrudProtocol
import Testing
@testable import BedrudRTC

/// JSEP as a transcript: descriptions, candidates and transport events in, the shell's
/// actions out. No sockets, no clocks.
@Suite("PeerNegotiation (JSEP value)")
struct PeerNegotiationTests {
    static let fingerprint = DTLSFingerprint(algorithm: "sha-256", bytes: Array(repeating: 0xAB, count: 32))
    static let first = ICECredentials(ufrag: "firstUfrag000000", password: "firstPassword000000000000000000")
    static let second = ICECredentials(ufrag: "secondUfrag00000", password: "secondPassword00000000000000000")
    static let host = "candidate:1 1 UDP 2130706431 127.0.0.1 40000 typ host"
    static let host2 = "candidate:2 1 UDP 2130706431 127.0.0.1 40002 typ host"

    static func make() -> PeerNegotiation {
        PeerNegotiation(policy: AnswerPolicy(), sctpPort: 5000, localFingerprint: fingerprint, sessionID: 42)
    }

    static func sdp(_ text: String) throws -> SessionDescription { try SessionDescription(parsing: text) }

    /// The description text among the actions.
    static func text(_ actions: [PeerNegotiation.Action]) -> String? {
        for a in actions { if case .localDescription(let t) = a { return t } }
        return nil
    }

    static func trickled(_ actions: [PeerNegotiation.Action]) -> [ICECandidateInit] {
        actions.compactMap { if case .emit(.localCandidate(let c)) = $0 { c } else { nil } }
    }

    // MARK: - Subscriber (we answer)

    @Test func subscriberTranscriptFromOfferToSCTP() throws {
        var n = Self.make()
        let offer = try Self.sdp(SDPFixtures.liveKitSubscriberOffer)
        let applied = try n.handle(.remoteOffer(offer, freshCredentials: Self.first))
        // actpass → we take the DTLS client role; no ice-lite → we are controlled.
        #expect(Array(applied.prefix(4)) == [
            .createAgent(controlling: false, credentials: Self.first),
            .startGathering,
            .setRemoteCredentials(ufrag: "yxBfQGNGfTLmWnRJ", password: "lgNXUhFhWKacoLApkzuNbYuRryEmEYyf"),
            .createDTLS(role: .client, remoteFingerprints: offer.fingerprints(for: 0)),
        ])
        guard case .setTracks(let tracks) = applied[4] else { Issue.record("no track table: \(applied)"); return }
        #expect(tracks.map(\.ssrc).contains(3_735_928_559))
        #expect(applied.count == 6)
        #expect({ if case .emit(.tracksChanged(let added, [])) = applied[5] { added == tracks } else { false } }())
        #expect(n.state == .new)

        // Gathered before the answer is handed out: not trickled yet.
        #expect(try n.handle(.localCandidate(Self.host)).isEmpty)

        let answered = try n.handle(.createAnswer)
        let answer = try #require(Self.text(answered))
        #expect(answer.contains("a=ice-ufrag:\(Self.first.ufrag)"))
        #expect(answer.contains("a=setup:active"))
        // The candidate came after the offer was applied: it is added to the answer's
        // transport section (the data section, mid 0), not trickled.
        #expect(answer.contains("a=mid:0\r\na=ice-ufrag:\(Self.first.ufrag)"))
        let media = try Self.sdp(answer).media
        #expect(media[0].candidates == [String(Self.host.dropFirst("candidate:".count))])
        #expect(media.dropFirst().allSatisfy { $0.candidates.isEmpty })
        #expect(Self.trickled(answered).isEmpty)
        #expect(answered.last == .startConnectTimer)
        #expect(n.state == .connecting)

        // From now on every candidate is trickled at once.
        let trickled = Self.trickled(try n.handle(.localCandidate(Self.host2)))
        #expect(trickled == [ICECandidateInit(candidate: Self.host2, sdpMid: "0", sdpMLineIndex: 0, usernameFragment: Self.first.ufrag)])
        #expect(try n.handle(.localGatheringDone) == [.emit(.localCandidatesComplete)])

        #expect(try n.handle(.iceStateChanged(.checking)) == [.emit(.iceStateChanged(.checking))])
        #expect(try n.handle(.iceStateChanged(.connected)) == [.emit(.iceStateChanged(.connected)), .startDTLS, .emit(.dtlsStateChanged(.connecting))])
        // DTLS starts once only.
        #expect(try n.handle(.iceStateChanged(.completed)) == [.emit(.iceStateChanged(.completed))])

        #expect(try n.handle(.dtlsConnected(srtp: true)) == [
            .cancelConnectTimer, .emit(.dtlsStateChanged(.connected)), .connected, .startMediaTimers,
            .startSCTP(remotePort: 5000, isDTLSClient: true, remoteMaxMessageSize: 65535),
        ])
        #expect(n.state == .connected)

        // A re-offer with the same credentials: no restart, no second DTLS or SCTP.
        let again = try n.handle(.remoteOffer(offer, freshCredentials: Self.second))
        #expect(!again.contains { if case .restartICE = $0 { true } else if case .createDTLS = $0 { true } else if case .startSCTP = $0 { true } else { false } })
        #expect(again.contains(.setRemoteMaxMessageSize(65535)))
        // The second answer carries the candidates gathered so far and the same credentials.
        let second = try #require(Self.text(try n.handle(.createAnswer)))
        #expect(second.contains("a=ice-ufrag:\(Self.first.ufrag)"))
        #expect(second.contains("40000") && second.contains("40002"))
        #expect(second.contains("a=end-of-candidates"))
    }

    @Test func candidatesBeforeTheOfferAreQueuedAndFlushedByUfrag() throws {
        var n = Self.make()
        let stale = ICECandidateInit(candidate: Self.host2, sdpMid: "0", sdpMLineIndex: 0, usernameFragment: "someoneElse")
        let current = ICECandidateInit(candidate: Self.host, sdpMid: "0", sdpMLineIndex: 0, usernameFragment: "yxBfQGNGfTLmWnRJ")
        let rtcp = ICECandidateInit(candidate: "candidate:3 2 udp 2130706430 127.0.0.1 40001 typ host")
        #expect(try n.handle(.remoteCandidate(stale)).isEmpty)
        #expect(try n.handle(.remoteCandidate(current)).isEmpty)
        #expect(try n.handle(.remoteCandidate(rtcp)).isEmpty)
        #expect(try n.handle(.remoteCandidate(ICECandidateInit(candidate: ""))).isEmpty)
        let applied = try n.handle(.remoteOffer(try Self.sdp(SDPFixtures.liveKitSubscriberOffer), freshCredentials: Self.first))
        let added = applied.compactMap { if case .addRemoteCandidate(let c) = $0 { c } else { nil } }
        #expect(added == [Self.host])
        // End-of-candidates before the offer is remembered.
        #expect(applied.contains(.remoteGatheringDone))
        // After the description, a matching candidate goes straight to libnice.
        #expect(try n.handle(.remoteCandidate(ICECandidateInit(candidate: Self.host2, usernameFragment: "yxBfQGNGfTLmWnRJ"))) == [.addRemoteCandidate(Self.host2)])
        #expect(throws: PeerConnectionError.self) { _ = try n.handle(.remoteCandidate(ICECandidateInit(candidate: "candidate:garbage"))) }
    }

    @Test func reOfferWithNewCredentialsRestartsICE() throws {
        var n = Self.make()
        let offer = SDPFixtures.liveKitSubscriberOffer
        _ = try n.handle(.remoteOffer(try Self.sdp(offer), freshCredentials: Self.first))
        _ = try n.handle(.createAnswer)
        _ = try n.handle(.localCandidate(Self.host))
        // The restart's candidate overtakes its offer (LiveKit trickles right after sending).
        let early = ICECandidateInit(candidate: Self.host2, sdpMid: "0", usernameFragment: "newRemoteUfrag00")
        #expect(try n.handle(.remoteCandidate(early)).isEmpty)
        let restarted = offer.replacingOccurrences(of: "yxBfQGNGfTLmWnRJ", with: "newRemoteUfrag00")
            .replacingOccurrences(of: "lgNXUhFhWKacoLApkzuNbYuRryEmEYyf", with: "newRemotePassword000000000000000")
        let applied = try n.handle(.remoteOffer(try Self.sdp(restarted), freshCredentials: Self.second))
        #expect(Array(applied.prefix(3)) == [
            .restartICE(Self.second),
            .setRemoteCredentials(ufrag: "newRemoteUfrag00", password: "newRemotePassword000000000000000"),
            .addRemoteCandidate(Self.host2),
        ])
        #expect(!applied.contains { if case .createDTLS = $0 { true } else { false } })
        let answer = try #require(Self.text(try n.handle(.createAnswer)))
        #expect(answer.contains("a=ice-ufrag:\(Self.second.ufrag)"))
        #expect(answer.contains("a=ice-pwd:\(Self.second.password)"))
        // libnice keeps the local candidates across a restart: they are in the new answer.
        #expect(answer.contains("40000"))
    }

    @Test func iceLiteOfferMakesUsControlling() throws {
        var n = Self.make()
        let lite = SDPFixtures.liveKitSubscriberOffer.replacingOccurrences(of: "a=extmap-allow-mixed\r\n", with: "a=extmap-allow-mixed\r\na=ice-lite\r\n")
        let applied = try n.handle(.remoteOffer(try Self.sdp(lite), freshCredentials: Self.first))
        #expect(applied.first == .createAgent(controlling: true, credentials: Self.first))
    }

    @Test func activeOfferMakesUsTheDTLSServer() throws {
        var n = Self.make()
        let active = SDPFixtures.liveKitSubscriberOffer.replacingOccurrences(of: "a=setup:actpass", with: "a=setup:active")
        let applied = try n.handle(.remoteOffer(try Self.sdp(active), freshCredentials: Self.first))
        #expect(applied.contains { if case .createDTLS(.server, _) = $0 { true } else { false } })
        #expect(try #require(Self.text(try n.handle(.createAnswer))).contains("a=setup:passive"))
    }

    @Test func refusedCallsLeaveTheValueUnchanged() throws {
        var n = Self.make()
        #expect(throws: PeerConnectionError(.wrongState("createAnswer() before setRemoteOffer()"))) { _ = try n.handle(.createAnswer) }
        #expect(throws: PeerConnectionError.self) { _ = try n.handle(.remoteAnswer(try Self.sdp(SDPFixtures.aiortcAnswer))) }
        let holdconn = SDPFixtures.liveKitSubscriberOffer.replacingOccurrences(of: "a=setup:actpass", with: "a=setup:holdconn")
        #expect(throws: PeerConnectionError(.invalidSDP(SDPError(.unsupportedSetup)))) {
            _ = try n.handle(.remoteOffer(try Self.sdp(holdconn), freshCredentials: Self.first))
        }
        // Nothing was created by the refused offer: the next one starts from scratch.
        let applied = try n.handle(.remoteOffer(try Self.sdp(SDPFixtures.liveKitSubscriberOffer), freshCredentials: Self.second))
        #expect(applied.first == .createAgent(controlling: false, credentials: Self.second))
        #expect(throws: PeerConnectionError(.wrongState("createOffer() on a connection that answers remote offers"))) {
            _ = try n.handle(.createOffer(iceRestart: false, freshCredentials: Self.first))
        }
    }

    // MARK: - Publisher (we offer) against a second value as the answerer

    @Test func publisherOffersAndBecomesTheDTLSServer() throws {
        var pub = Self.make()
        var sub = Self.make()
        let offered = try pub.handle(.createOffer(iceRestart: false, freshCredentials: Self.first))
        #expect(Array(offered.prefix(2)) == [.createAgent(controlling: true, credentials: Self.first), .startGathering])
        let offer = try #require(Self.text(offered))
        #expect(offer.contains("a=setup:actpass"))
        #expect(offer.contains("m=application 9 UDP/DTLS/SCTP webrtc-datachannel"))

        // ICE comes up before the answer: DTLS must wait for it.
        _ = try pub.handle(.localCandidate(Self.host))
        #expect(try pub.handle(.iceStateChanged(.connected)) == [.emit(.iceStateChanged(.connected))])
        // A remote candidate before the answer is queued.
        #expect(try pub.handle(.remoteCandidate(ICECandidateInit(candidate: Self.host2))).isEmpty)

        _ = try sub.handle(.remoteOffer(try Self.sdp(offer), freshCredentials: Self.second))
        let answer = try #require(Self.text(try sub.handle(.createAnswer)))
        #expect(answer.contains("a=setup:active"))

        let applied = try pub.handle(.remoteAnswer(try Self.sdp(answer)))
        #expect(applied == [
            .setRemoteCredentials(ufrag: Self.second.ufrag, password: Self.second.password),
            .createDTLS(role: .server, remoteFingerprints: [Self.fingerprint]),
            .addRemoteCandidate(Self.host2),
            .startConnectTimer, .startDTLS, .emit(.dtlsStateChanged(.connecting)),
        ])
        // A data channel only: SCTP starts, no media timers.
        #expect(try pub.handle(.dtlsConnected(srtp: false)) == [
            .cancelConnectTimer, .emit(.dtlsStateChanged(.connected)), .connected,
            .startSCTP(remotePort: 5000, isDTLSClient: false, remoteMaxMessageSize: 262_144),
        ])
        #expect(throws: PeerConnectionError(.wrongState("a remote offer arrived on a connection that made its own offer"))) {
            _ = try pub.handle(.remoteOffer(try Self.sdp(answer), freshCredentials: Self.second))
        }
    }

    @Test func publisherRestartKeepsTheDTLSRoleAndNewCredentials() throws {
        var pub = Self.make()
        var sub = Self.make()
        let offer = try #require(Self.text(try pub.handle(.createOffer(iceRestart: false, freshCredentials: Self.first))))
        _ = try sub.handle(.remoteOffer(try Self.sdp(offer), freshCredentials: Self.second))
        _ = try pub.handle(.remoteAnswer(try Self.sdp(try #require(Self.text(try sub.handle(.createAnswer))))))
        let third = ICECredentials(ufrag: "thirdUfrag000000", password: "thirdPassword000000000000000000")
        let restarted = try pub.handle(.createOffer(iceRestart: true, freshCredentials: third))
        #expect(restarted.first == .restartICE(third))
        let text = try #require(Self.text(restarted))
        #expect(text.contains("a=ice-ufrag:\(third.ufrag)"))
        // After the first answer our role is fixed: the re-offer says so (RFC 8842 §5.5).
        #expect(text.contains("a=setup:passive"))
        // Until the restart's answer, trickled candidates wait.
        #expect(try pub.handle(.remoteCandidate(ICECandidateInit(candidate: Self.host))).isEmpty)
    }

    // MARK: - Timeouts and failures

    @Test(arguments: [false, true])
    func connectTimeoutNamesTheLayerThatDidNotComeUp(iceUp: Bool) throws {
        var n = Self.make()
        _ = try n.handle(.remoteOffer(try Self.sdp(SDPFixtures.liveKitSubscriberOffer), freshCredentials: Self.first))
        _ = try n.handle(.createAnswer)
        if iceUp { _ = try n.handle(.iceStateChanged(.connected)) }
        let expected = iceUp ? PeerConnectionError(.dtls(DTLSError(.timeout))) : PeerConnectionError(.ice(ICEError(.timeout)))
        #expect(try n.handle(.connectTimeout) == [.failed(expected)])
        #expect(n.state == .failed)
        #expect(n.failure == expected)
        // After a failure, transport callbacks change nothing; close still closes.
        #expect(try n.handle(.iceStateChanged(.connected)).isEmpty)
        #expect(try n.handle(.dtlsConnected(srtp: true)).isEmpty)
        #expect(try n.handle(.close) == [.close(wasFailed: true)])
        #expect(try n.handle(.close).isEmpty)
        #expect(throws: PeerConnectionError(.closed)) { _ = try n.handle(.createAnswer) }
    }

    @Test func noSRTPWithMediaTracksFails() throws {
        var n = Self.make()
        _ = try n.handle(.remoteOffer(try Self.sdp(SDPFixtures.liveKitSubscriberOffer), freshCredentials: Self.first))
        _ = try n.handle(.createAnswer)
        _ = try n.handle(.iceStateChanged(.connected))
        #expect(try n.handle(.dtlsConnected(srtp: false)) == [.failed(PeerConnectionError(.dtls(DTLSError(.handshake("the peer negotiated no SRTP profile")))))])
    }

    @Test func iceFailureFailsTheConnection() throws {
        var n = Self.make()
        _ = try n.handle(.remoteOffer(try Self.sdp(SDPFixtures.liveKitSubscriberOffer), freshCredentials: Self.first))
        #expect(try n.handle(.iceStateChanged(.failed)) == [.emit(.iceStateChanged(.failed)), .failed(PeerConnectionError(.ice(ICEError(.failed))))])
    }

    @Test func closeBeforeAnything() throws {
        var n = Self.make()
        #expect(try n.handle(.close) == [.close(wasFailed: false)])
        #expect(n.state == .closed)
    }
}

@Suite("Publisher offer (audio for LiveKit's SFU)")
struct PublisherOfferTests {
    static let track = LocalAudioTrack(mid: "1", ssrc: 1234, cname: "bot", streamID: "stream", trackID: "TR_cid1", stereo: true, dtx: true)

    @Test func offerCarriesOpusOnlyNACKAudioLevelAndTheCidAsMsid() throws {
        var n = PeerNegotiationTests.make()
        n.localAudio = [Self.track]
        let text = try #require(PeerNegotiationTests.text(try n.handle(.createOffer(iceRestart: false, freshCredentials: PeerNegotiationTests.first))))
        let sdp = try SessionDescription(parsing: text)
        #expect(sdp.media.map(\.kind) == ["application", "audio"])
        #expect(sdp.bundleGroups.first == ["0", "1"])
        let m = sdp.media[1]
        #expect(m.formats == ["111"])
        #expect(m.rtpMaps.map(\.encoding) == ["opus"])
        #expect(m.formatParameters(for: 111) == "minptime=10;useinbandfec=1;usedtx=1;stereo=1;sprop-stereo=1")
        #expect(m.rtcpFeedback(for: 111) == ["nack"])
        #expect(m.headerExtensions.map(\.uri) == [LocalAudioTrack.audioLevelURI])
        #expect(m.direction == .sendonly)
        #expect(m.msid?.trackID == "TR_cid1")
        #expect(m.ssrcs.map(\.ssrc) == [1234])
        #expect(!text.contains("red/48000"))
    }

    @Test func theAnswerSaysWhatWasAccepted() throws {
        var pub = PeerNegotiationTests.make()
        var mono = Self.track
        mono.stereo = false
        pub.localAudio = [mono]
        let offer = try #require(PeerNegotiationTests.text(try pub.handle(.createOffer(iceRestart: false, freshCredentials: PeerNegotiationTests.first))))
        // An answer as LiveKit writes it: recvonly, Opus, NACK, the audio level kept.
        var answer = try SessionDescription(parsing: offer)
        for i in answer.media.indices {
            answer.media[i].attributes = answer.media[i].attributes.map { a in
                switch a.name {
                case "sendonly": SDPAttribute("recvonly")
                case "setup": SDPAttribute("setup", "active")
                default: a
                }
            }.filter { $0.name != "ssrc" && $0.name != "msid" }
        }
        _ = try pub.handle(.remoteAnswer(try SessionDescription(parsing: answer.text)))
        #expect(pub.acceptedAudio["1"] == LocalAudioTrack.Accepted(payloadType: 111, audioLevelID: 1, nack: true))
        #expect(pub.dtlsRole == .server)

        // A rejected section (port 0) is not accepted.
        answer.media[1].port = 0
        var again = pub
        _ = try again.handle(.remoteAnswer(try SessionDescription(parsing: answer.text)))
        #expect(again.acceptedAudio["1"] == nil)
    }
}

import BedrudProtocol
import Testing
@testable import BedrudCore

/// RoomState against a server that misbehaves: what it decides, as transcripts on the
/// fake clock — offers it cannot answer, garbage candidates, messages that are not
/// LiveKit, resumes that drop again at once, a resume whose ICE never comes back, and
/// rooms larger than it holds.
@Suite struct RoomStateHostileServerTests {
    /// connect → upgrade → join, with the primary connection not yet up.
    static func joined(_ configure: (inout RoomState.Configuration) -> Void = { _ in }) -> RoomTranscript {
        var t = RoomTranscript(configure)
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        t.server(.join(Fixture.join()))
        return t
    }

    // MARK: - Exit classes of a failed first join

    @Test func anOfferTheBotCannotAnswerEndsAFirstJoinAsAProtocolError() {
        var t = Self.joined()
        t.server(Fixture.offer(id: 1))
        let failed = t.feed(.offerUnanswerable(.subscriber, reason: "SDP: the offer has no DTLS fingerprint"))
        // Not retried: the same server sends the same offer again.
        #expect(failed.events == [.disconnected(.protocolError)])
        #expect(failed.contains(.closeTransports))
        #expect(t.state.serverProblem == "an offer the bot cannot answer (SDP: the offer has no DTLS fingerprint)")
    }

    @Test func aLongReasonIsCut() {
        var t = Self.joined()
        t.server(Fixture.offer(id: 1))
        t.feed(.offerUnanswerable(.subscriber, reason: String(repeating: "x", count: 1 << 20)))
        #expect(t.state.serverProblem?.count == 301)
    }

    @Test func anUnanswerableOfferWhileConnectedResumes() {
        var t = RoomTranscript { $0.transportFailureGraceMs = 0 }
        t.joinRoom()
        t.server(Fixture.offer(id: 2))
        let failed = t.feed(.offerUnanswerable(.subscriber, reason: "bad"))
        #expect(failed.events == [.reconnecting(.resume)])
    }

    @Test func iceThatNeverConnectsIsANetworkFailure() {
        var t = Self.joined { $0.joinAttempts = 1 }
        t.server(Fixture.offer(id: 1, sdp: "v=0\r\na=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n"))
        t.advance(to: 1_000 + 15_000)
        #expect(t.fireDueTimers().events == [.disconnected(.network(.ice))])
        #expect(t.state.serverProblem == nil)
    }

    @Test func onlyGarbageCandidatesAreTheServersFault() {
        var t = Self.joined { $0.joinAttempts = 1 }
        t.server(Fixture.offer(id: 1))
        let garbage = [
            "nonsense",
            #"{"candidate":"candidate:1 1 udp 99 999.1.1.1 9 typ host"}"#,
            #"{"candidate":"candidate:x 1 sctp 1 127.0.0.1 9 typ host"}"#,
        ]
        for g in garbage {
            #expect(t.server(.trickle(LiveKit.TrickleRequest(candidateInit: g, target: .subscriber))).isEmpty, "dropped: \(g)")
        }
        t.advance(to: 1_000 + 15_000)
        #expect(t.fireDueTimers().events == [.disconnected(.protocolError)])
        #expect(t.state.serverProblem == "3 ICE candidates that could not be parsed, and none that could")
        #expect(t.state.stats.invalidCandidates == 3)
    }

    @Test func oneUsableCandidateMakesItTheNetworkAgain() {
        var t = Self.joined { $0.joinAttempts = 1 }
        t.server(Fixture.offer(id: 1))
        t.server(.trickle(LiveKit.TrickleRequest(candidateInit: "nonsense", target: .subscriber)))
        let good = #"{"candidate":"candidate:1 1 udp 2130706431 127.0.0.1 9 typ host","sdpMid":"0"}"#
        #expect(t.server(.trickle(LiveKit.TrickleRequest(candidateInit: good, target: .subscriber))).count == 1)
        t.advance(to: 1_000 + 15_000)
        #expect(t.fireDueTimers().events == [.disconnected(.network(.ice))])
    }

    @Test func onlyUndecodableMessagesInsteadOfTheJoinAreAProtocolError() {
        var t = RoomTranscript()
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        for i in 0..<3 { #expect(t.feed(.signalData([0xFF, 0xFF, UInt8(i)])).isEmpty) }
        t.advance(to: 1_000 + 5_000)
        #expect(t.fireDueTimers().events == [.disconnected(.protocolError)])
        #expect(t.state.serverProblem == "3 messages that are not LiveKit signalling instead of the join response")
        #expect(t.state.stats.undecodableSignalMessages == 3)
    }

    @Test func silenceInsteadOfTheJoinIsStillATimeout() {
        var t = RoomTranscript { $0.joinAttempts = 1 }
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        t.advance(to: 1_000 + 5_000)
        #expect(t.fireDueTimers().events == [.disconnected(.network(.timeout))])
        #expect(!t.state.everConnected)
    }

    // MARK: - A resume whose media never comes back (a 40 s outage once cost 64 s)

    @Test func aResumeWithoutICEFallsBackToARejoinWithinSeconds() {
        var t = RoomTranscript()
        t.joinRoom()
        #expect(t.feed(.signalClosed).events == [.reconnecting(.resume)])
        t.feed(.transportStateChanged(.subscriber, .failed))
        t.fireDueTimers()
        t.feed(.signalConnected)
        let resumed = t.server(.reconnect(.init()))
        #expect(resumed.startedTimers[.transportConnect] == .ms(t.now + 4_000), "not the first join's 15 s")
        t.advance(to: t.now + 4_000)
        let fallback = t.fireDueTimers()
        #expect(fallback.events == [.reconnecting(.full)])
        #expect(t.state.connectionState == .reconnecting(.full, attempt: 2))
        t.advance(to: t.now + 300)
        #expect(t.fireDueTimers().contains(.fetchJoinToken))
    }

    // MARK: - Flapping

    /// Connects, then `n` times: the signal drops `upMs` after the last (re)connect and the
    /// resume that follows succeeds at once. Returns the delay before each resume.
    static func flap(_ t: inout RoomTranscript, times n: Int, upMs: Int64) -> [Int64] {
        var delays: [Int64] = []
        for _ in 0..<n {
            t.advance(to: t.now + upMs)
            let lost = t.feed(.signalClosed)
            guard let deadline = lost.startedTimers[.retry] else { return delays }
            delays.append(deadline.milliseconds - t.now)
            t.advance(to: deadline.milliseconds)
            t.fireDueTimers()
            t.feed(.signalConnected)
            t.server(.reconnect(.init()))
        }
        return delays
    }

    @Test func resumesThatDropAtOnceBackOff() {
        var t = RoomTranscript()
        t.joinRoom()
        let delays = Self.flap(&t, times: 8, upMs: 1_000)
        // The first loss resumes at once; each drop within 10 s of the last resume waits
        // longer: 1 s doubling up to the 15 s cap.
        #expect(delays == [0, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000])
        #expect(t.state.stats.flappingReconnects == 7)
        #expect(t.state.connectionState == .connected)
    }

    @Test func aStableConnectionForgetsTheFlaps() {
        var t = RoomTranscript()
        t.joinRoom()
        #expect(Self.flap(&t, times: 3, upMs: 500) == [0, 1_000, 2_000])
        // Up for 10 s: the next drop is an ordinary outage again.
        #expect(Self.flap(&t, times: 2, upMs: 10_000) == [0, 0])
        #expect(t.state.stats.flappingReconnects == 2)
    }

    @Test func theFirstJoinIsNotAReconnect() {
        var t = RoomTranscript()
        t.joinRoom()
        // Dropped 1 s after the first join: an ordinary loss, not a flap.
        #expect(Self.flap(&t, times: 1, upMs: 1_000) == [0])
        #expect(t.state.stats.flappingReconnects == 0)
    }

    // MARK: - Bounds

    @Test func aJoinWithMoreParticipantsThanTheRoomHolds() {
        var t = RoomTranscript { $0.maxParticipants = 100 }
        let others = (0..<1_000).map { Fixture.participant("p\($0)", sid: "PA_\($0)") }
        let joined = t.joinRoom(Fixture.join(others: others))
        #expect(t.state.remoteParticipants.count == 100)
        #expect(t.state.participantOrder.count == 100)
        #expect(joined.events.filter { if case .participantJoined = $0 { true } else { false } }.count == 100)
        #expect(t.state.stats.droppedParticipants == 900)
        // One leaves: the next one the server mentions gets the place.
        t.server(Fixture.update(Fixture.participant("p0", sid: "PA_0", version: 2, state: .disconnected)))
        t.server(Fixture.update(Fixture.participant("p500", sid: "PA_500", version: 2)))
        #expect(t.state.remoteParticipants["p500"] != nil)
        #expect(t.state.remoteParticipants.count == 100)
    }

    @Test func tracksAndMetadataBeyondTheBoundsAreDropped() {
        var t = RoomTranscript { $0.maxTracksPerParticipant = 4; $0.maxMetadataBytes = 1_000 }
        t.joinRoom(Fixture.join(others: []))
        var big = Fixture.participant("mallory", sid: "PA_m", tracks: (0..<50).map { Fixture.track("TR_\($0)") },
                                      metadata: String(repeating: "m", count: 1_001))
        big.attributes = ["k": String(repeating: "v", count: 1_000)]
        let actions = t.server(Fixture.update(big))
        let held = t.state.remoteParticipants["mallory"]
        #expect(held?.tracks.map(\.sid) == ["TR_0", "TR_1", "TR_2", "TR_3"])
        #expect(held?.metadata == "")
        #expect(held?.attributes == [:])
        #expect(actions.events.filter { if case .trackPublished = $0 { true } else { false } }.count == 4)
        #expect(t.state.stats.droppedTracks == 46)
        #expect(t.state.stats.droppedMetadata == 2)
    }

    @Test func aHundredThousandParticipantsAndAFloodStayBounded() {
        // The default bound, at the size of the report's probe: 100,000 in the join, then
        // 200,000 updates (new versions, newcomers, leavers).
        var t = RoomTranscript()
        let limit = t.state.configuration.maxParticipants
        let others = (0..<100_000).map { Fixture.participant("p\($0)", sid: "PA_\($0)", metadata: String(repeating: "x", count: 100)) }
        t.joinRoom(Fixture.join(others: others))
        #expect(t.state.remoteParticipants.count == limit)
        #expect(t.state.stats.droppedParticipants == 100_000 - limit)
        for i in 0..<200_000 {
            let n = i % 150_000
            t.server(Fixture.update(Fixture.participant("p\(n)", sid: "PA_\(n)", version: UInt32(2 + i / 150_000),
                                                        metadata: String(repeating: "y", count: 200))))
        }
        #expect(t.state.remoteParticipants.count == limit)
        #expect(t.state.participantOrder.count == limit)
    }
}

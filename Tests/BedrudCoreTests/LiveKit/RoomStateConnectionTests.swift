import BedrudProtocol
import Testing
@testable import BedrudCore

/// Connection lifecycle transcripts: join, first-message rules, leave, resume, full
/// rejoin, keepalive, retry schedule.
@Suite struct RoomStateConnectionTests {
    // MARK: - Join

    @Test func joinTranscript() {
        var t = RoomTranscript()
        #expect(t.state.connectionState == .idle)

        let open = t.feed(.connect(token: "tok-1"))
        #expect(open == [
            .openSignal(SignalConnectRequest(token: "tok-1", mode: .join)),
            .startTimer(.signalHandshake, deadline: .ms(16_000), jitterMs: 0),
        ])
        #expect(t.state.connectionState == .connecting)

        #expect(t.feed(.signalConnected) == [
            .cancelTimer(.signalHandshake),
            .startTimer(.firstMessage, deadline: .ms(6_000), jitterMs: 0),
        ])

        t.advance(to: 1_200)
        let joined = t.server(.join(Fixture.join()))
        #expect(joined.events.count == 6)
        guard case .roomJoined(let room, let local) = joined.events.first else {
            Issue.record("first event must be roomJoined, got \(joined.events)")
            return
        }
        #expect(room.name == "standup" && room.sid == "")
        #expect(local.sid == "PA_bot" && local.isLocal && local.accesses == ["user"])
        #expect(joined.events.dropFirst().map(Self.label) == [
            "joined alice", "published alice/TR_alice_mic", "joined bob", "published bob/TR_bob_mic", "published bob/TR_bob_cam",
        ])
        #expect(joined.contains(.cancelTimer(.firstMessage)))
        #expect(joined.contains(.createTransports(TransportConfiguration(
            iceServers: [.with { $0.urls = ["stun:127.0.0.1:3478"] }], forceRelay: false, subscriberPrimary: true))))
        #expect(joined.startedTimers == [.ping: .ms(6_200), .pingTimeout: .ms(16_200), .transportConnect: .ms(16_200)])
        #expect(t.state.connectionState == .connecting, "connected only once the subscriber PC is up")

        // The publisher PC does not count; the subscriber (primary) does.
        #expect(t.feed(.transportStateChanged(.publisher, .connected)).isEmpty)
        let up = t.feed(.transportStateChanged(.subscriber, .connected))
        #expect(up == [.cancelTimer(.transportConnect), .emit(.connected)])
        #expect(t.state.connectionState == .connected)
        #expect(t.state.participants.map(\.identity) == ["alice", "bob"])
        #expect(t.state.remoteParticipants["alice"]?.tracks.first?.isStereo == true)
    }

    @Test func signallingOnlyClientIsConnectedAtJoin() {
        var t = RoomTranscript { $0.waitForTransport = false }
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        let joined = t.server(.join(Fixture.join(others: [])))
        #expect(joined.events.last == .connected)
        #expect(joined.startedTimers[.transportConnect] == nil)
    }

    @Test func leaveAsFirstMessageFailsTheJoin() {
        var t = RoomTranscript()
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        let actions = t.server(Fixture.leave(.joinFailure))
        #expect(actions.effects == [.closeSignal, .emit(.disconnected(.joinFailure))])
        #expect(t.state.connectionState == .disconnected(.joinFailure))
        #expect(t.state.timers.isEmpty)
    }

    @Test func anythingElseFirstIsAProtocolError() {
        var t = RoomTranscript()
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        let actions = t.server(Fixture.update(Fixture.alice))
        #expect(actions.events == [.disconnected(.protocolError)])
        #expect(t.state.remoteParticipants.isEmpty)
    }

    @Test func firstJoinFailures() {
        // 401 from validate: the token is bad; no retry.
        var t = RoomTranscript()
        t.feed(.connect(token: "tok"))
        #expect(t.feed(.signalConnectFailed(.unauthorized(status: 401))).events == [.disconnected(.notAllowed)])

        t = RoomTranscript()
        t.feed(.connect(token: "tok"))
        #expect(t.feed(.signalConnectFailed(.roomNotFound)).events == [.disconnected(.roomNotFound)])

        // Unreachable: one retry with the same token (JS maxRetries = 1), then give up.
        t = RoomTranscript()
        t.feed(.connect(token: "tok"))
        let retry = t.feed(.signalConnectFailed(.unreachable(.refused)))
        #expect(retry.events.isEmpty && retry.startedTimers == [.retry: .ms(1_300)])
        t.advance(to: 1_300)
        #expect(t.fireDueTimers().opened == [SignalConnectRequest(token: "tok", mode: .join)])
        #expect(t.state.connectionState == .connecting)
        #expect(t.feed(.signalConnectFailed(.unreachable(.refused))).events == [.disconnected(.network(.refused))])

        // No answer to the upgrade at all: the handshake timer fails the attempt.
        t = RoomTranscript { $0.joinAttempts = 1 }
        t.feed(.connect(token: "tok"))
        t.advance(to: 16_000)
        let timedOut = t.fireDueTimers()
        #expect(timedOut.effects == [.closeSignal, .emit(.disconnected(.network(.timeout)))])
    }

    @Test func firstMessageTimeout() {
        var t = RoomTranscript { $0.joinAttempts = 1 }
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        t.advance(to: 6_000)
        #expect(t.fireDueTimers().effects == [.closeSignal, .emit(.disconnected(.network(.timeout)))])
    }

    // MARK: - Leaving

    @Test func localLeave() {
        var t = RoomTranscript()
        t.joinRoom()
        let actions = t.feed(.leave)
        #expect(actions.effects == [
            .send(.leave()), .closeSignal, .closeTransports, .emit(.disconnected(.left)),
        ])
        #expect(t.state.timers.isEmpty)
        // Idempotent, and nothing more happens afterwards.
        #expect(t.feed(.leave).isEmpty)
        #expect(t.feed(.signalClosed).isEmpty)
        #expect(t.server(Fixture.update(Fixture.alice)).isEmpty)
    }

    @Test(arguments: [
        (LiveKit.DisconnectReason.participantRemoved, RoomDisconnectReason.kicked),
        (.roomDeleted, .roomDeleted),
        (.duplicateIdentity, .duplicateIdentity),
        (.serverShutdown, .serverShutdown),
        (.roomClosed, .roomClosed),
        (.joinFailure, .joinFailure),
        (.clientInitiated, .left),
        (.userRejected, .server(.userRejected)),
        (.unrecognized(77), .server(.unrecognized(77))),
    ])
    func serverLeaveDisconnects(reason: LiveKit.DisconnectReason, expected: RoomDisconnectReason) {
        var t = RoomTranscript()
        t.joinRoom()
        let actions = t.server(Fixture.leave(reason))
        #expect(actions.effects == [.closeSignal, .closeTransports, .emit(.disconnected(expected))])
        #expect(!actions.sent.contains { if case .leave = $0 { true } else { false } }, "no leave echoed back")
    }

    @Test func legacyServerLeaveReadsCanReconnect() {
        // Server 1.5.0 (protocol 10) has no `action`: 0 must not be read as DISCONNECT.
        var t = RoomTranscript()
        t.joinRoom(Fixture.join(protocol: 10))
        let actions = t.server(Fixture.leave(.stateMismatch, canReconnect: true))
        #expect(actions.events == [.reconnecting(.full)])
        #expect(t.state.connectionState == .reconnecting(.full, attempt: 1))

        t = RoomTranscript()
        t.joinRoom(Fixture.join(protocol: 10))
        #expect(t.server(Fixture.leave(.roomDeleted)).events == [.disconnected(.roomDeleted)])

        // A current server: action DISCONNECT wins even if can_reconnect is set.
        t = RoomTranscript()
        t.joinRoom(Fixture.join(protocol: 17))
        #expect(t.server(Fixture.leave(.participantRemoved, canReconnect: true)).events == [.disconnected(.kicked)])

        // A non-zero action is trusted even when the protocol is unknown.
        t = RoomTranscript()
        t.joinRoom(Fixture.join(protocol: 0))
        #expect(t.server(Fixture.leave(.connectionTimeout, action: .resume)).events == [.reconnecting(.resume)])
    }

    // MARK: - Resume

    @Test func resumeAfterSignalLoss() {
        var t = RoomTranscript()
        t.joinRoom()
        t.server(Fixture.offer(id: 1))
        t.feed(.answerCreated(sdp: "answer-1", offerID: 1))
        t.feed(.dataChannelOpened(.init(label: "_reliable", id: 1, target: .subscriber)))
        t.feed(.dataReceived(Fixture.dataPacket(from: "PA_alice", sequence: 4, payload: "x"), reliable: true))
        t.server(.refreshToken("tok-2"))

        t.advance(to: 10_000)
        let lost = t.feed(.signalClosed)
        #expect(lost.events == [.reconnecting(.resume)])
        #expect(!lost.contains(.closeTransports), "a resume keeps the peer connections")
        #expect(lost.startedTimers == [.retry: .ms(10_000), .outage: .ms(610_000)], "max_outage counts from the loss")
        #expect(t.state.connectionState == .reconnecting(.resume, attempt: 1))

        let open = t.fireDueTimers()
        #expect(open.opened == [SignalConnectRequest(token: "tok-2", mode: .resume(participantSid: "PA_bot", reason: .signalDisconnected))])

        t.feed(.signalConnected)
        let resumed = t.server(.reconnect(.with {
            $0.iceServers = [.with { $0.urls = ["turn:127.0.0.1:3478"] }]
            $0.lastMessageSeq = 0
        }))
        #expect(resumed.contains(.updateICEServers([.with { $0.urls = ["turn:127.0.0.1:3478"] }])))
        guard case .syncState(let sync)? = resumed.sent.first else {
            Issue.record("sync_state must be sent after a resume: \(resumed.sent)")
            return
        }
        #expect(sync.answer == LiveKit.SessionDescription(type: "answer", sdp: "answer-1", id: 1))
        #expect(sync.offer?.id == 1)
        #expect(sync.dataChannels.map(\.label) == ["_reliable"])
        #expect(sync.dataChannelReceiveStates == [.init(publisherSid: "PA_alice", lastSeq: 4)])
        #expect(sync.subscription == LiveKit.UpdateSubscription(trackSids: [], subscribe: false))
        // The subscriber PC never went down: resumed at once, same SID.
        #expect(resumed.events == [.reconnected(.resumed)])
        #expect(t.state.connectionState == .connected)
        #expect(t.state.localParticipant?.sid == "PA_bot")
        #expect(t.state.participants.count == 2, "participants survive a resume")
    }

    @Test func resumeAfterTransportFailureWaitsForTheTransport() {
        var t = RoomTranscript()
        t.joinRoom()
        let failed = t.feed(.transportStateChanged(.subscriber, .failed))
        #expect(failed.events.isEmpty, "the signal channel gets a moment to explain")
        #expect(failed.startedTimers[.transportGrace] == .ms(t.now + 1_500))
        t.advance(to: t.now + 1_500)
        #expect(t.fireDueTimers().events == [.reconnecting(.resume)])
        t.fireDueTimers()
        #expect(t.state.connectionState == .reconnecting(.resume, attempt: 1))
        t.feed(.signalConnected)
        let resumed = t.server(.reconnect(.init()))
        #expect(resumed.events.isEmpty, "waits for the ICE restart")
        #expect(resumed.startedTimers[.transportConnect] != nil)
        // The server restarts ICE with a new offer; we answer it.
        let offer = t.server(Fixture.offer(id: 2))
        #expect(offer.contains(.applyRemoteOffer(LiveKit.SessionDescription(type: "offer", sdp: "v=0\r\n", id: 2), target: .subscriber)))
        #expect(t.feed(.answerCreated(sdp: "a2", offerID: 2)).sent == [.answer(LiveKit.SessionDescription(type: "answer", sdp: "a2", id: 2))])
        #expect(t.feed(.transportStateChanged(.subscriber, .connected)).events == [.reconnected(.resumed)])
    }

    @Test func resumeRefusedFallsBackToFullRejoin() {
        var t = RoomTranscript()
        t.joinRoom()
        t.feed(.signalClosed)
        t.fireDueTimers()
        t.feed(.signalConnected)

        // The server lost our session: leave STATE_MISMATCH / RECONNECT as first message.
        let refused = t.server(Fixture.leave(.stateMismatch, action: .reconnect, canReconnect: true))
        #expect(refused.effects == [.closeSignal, .emit(.reconnecting(.full)), .closeTransports])
        #expect(refused.startedTimers == [.retry: .ms(1_000)], "a server-requested reconnect waits 0 ms")
        #expect(t.state.connectionState == .reconnecting(.full, attempt: 2))

        // Full rejoin: a fresh token from Bedrud, then a plain join.
        #expect(t.fireDueTimers().effects == [.fetchJoinToken])
        let open = t.feed(.joinTokenReceived("bedrud-fresh"))
        #expect(open.opened == [SignalConnectRequest(token: "bedrud-fresh", mode: .join)])
        t.feed(.signalConnected)
        let rejoined = t.server(.join(Fixture.join(me: Fixture.participant("bot", sid: "PA_bot2"), others: [Fixture.alice])))
        #expect(rejoined.events.map(Self.label) == [
            "roomJoined PA_bot2",
            "unpublished bob/TR_bob_mic", "unpublished bob/TR_bob_cam", "left bob absentAfterRejoin",
        ], "alice unchanged, bob left while we were away")
        #expect(rejoined.contains { if case .createTransports = $0 { true } else { false } })
        #expect(t.feed(.transportStateChanged(.subscriber, .connected)).events == [.reconnected(.rejoined)])
        #expect(t.state.localParticipant?.sid == "PA_bot2")
        #expect(t.state.connectionState == .connected)
    }

    @Test func failedRejoinAttemptClosesItsTransportsAndRetries() {
        var t = RoomTranscript()
        t.joinRoom(Fixture.join(resume: .disabled))
        t.feed(.signalClosed)
        t.fireDueTimers()
        t.feed(.joinTokenReceived("fresh"))
        t.feed(.signalConnected)
        t.server(.join(Fixture.join(me: Fixture.participant("bot", sid: "PA_bot2"))))
        // The new subscriber PC never connects.
        t.advance(to: 1_000 + 15_000)
        let failed = t.fireDueTimers()
        #expect(failed.contains(.closeTransports))
        #expect(failed.contains(.closeSignal))
        #expect(failed.retryTimer?.0 == .ms(16_300), "attempt 2 waits 300 ms")
        #expect(t.state.connectionState == .reconnecting(.full, attempt: 2))
    }

    @Test func expiredTokenOnResumeRejoinsWithAFreshOne() {
        var t = RoomTranscript()
        t.joinRoom()
        t.feed(.signalClosed)
        t.fireDueTimers()
        let expired = t.feed(.signalConnectFailed(.unauthorized(status: 401)))
        #expect(expired.events == [.reconnecting(.full)])
        t.advance(to: 1_300)
        #expect(t.fireDueTimers().effects == [.fetchJoinToken])
        t.feed(.joinTokenReceived("fresh"))
        // Even the fresh token is refused: give up (the account lost access).
        #expect(t.feed(.signalConnectFailed(.unauthorized(status: 401))).events == [.disconnected(.notAllowed)])
    }

    @Test func bedrudRefusingATokenEndsTheRoom() {
        var t = RoomTranscript()
        t.joinRoom(Fixture.join(resume: .disabled))
        t.feed(.signalClosed)
        t.fireDueTimers()
        #expect(t.feed(.joinTokenFailed(permanent: true)).events == [.disconnected(.notAllowed)])
    }

    @Test(arguments: [RoomDisconnectReason.roomEnded, .forbidden, .roomNotFound])
    func bedrudRefusingATokenForAReasonEndsTheRoomWithIt(reason: RoomDisconnectReason) {
        var t = RoomTranscript()
        t.joinRoom(Fixture.join(resume: .disabled))
        t.feed(.signalClosed)
        t.fireDueTimers()
        let out = t.feed(.joinTokenRefused(reason))
        #expect(out.events == [.disconnected(reason)])
        // A refusal that arrives when no token was asked for changes nothing.
        #expect(t.feed(.joinTokenRefused(.forbidden)).events.isEmpty)
    }

    @Test func unreachableBedrudFallsBackToTheRefreshedToken() {
        var t = RoomTranscript()
        t.joinRoom(Fixture.join(resume: .disabled))
        t.server(.refreshToken("lk-refreshed"))
        t.feed(.signalClosed)
        t.fireDueTimers()
        t.advance(to: 31_000)
        let fallback = t.fireDueTimers()
        #expect(fallback.opened == [SignalConnectRequest(token: "lk-refreshed", mode: .join)])
    }

    @Test func resumeDisabledByTheServerMeansFullRejoin() {
        var t = RoomTranscript()
        t.joinRoom(Fixture.join(resume: .disabled))
        t.feed(.transportStateChanged(.subscriber, .failed))
        t.advance(to: t.now + 1_500)
        let lost = t.feed(.timerFired(.transportGrace))
        // Signal still up: the old session is told we leave before we rejoin.
        #expect(lost.effects == [.emit(.reconnecting(.full)), .send(.leave()), .closeSignal, .closeTransports])
    }

    /// A kick arrives twice at once: `leave` on the signal socket and the server's DTLS
    /// close on the media path. Read in either order it is a kick, not a rejoin.
    @Test func kickRacingTheServersDTLSCloseIsAKick() {
        var t = RoomTranscript()
        t.joinRoom()
        #expect(t.feed(.transportStateChanged(.subscriber, .failed)).events.isEmpty)
        t.advance(to: t.now + 200)
        let kicked = t.server(Fixture.leave(.participantRemoved))
        #expect(kicked.events == [.disconnected(.kicked)])
        #expect(kicked.contains(.cancelTimer(.transportGrace)))
        t.advance(to: t.now + 5_000)
        #expect(t.fireDueTimers().events.isEmpty, "nothing reconnects after the kick")
    }

    @Test func transportThatRecoversWithinTheGraceNeedsNoReconnect() {
        var t = RoomTranscript()
        t.joinRoom()
        t.feed(.transportStateChanged(.subscriber, .failed))
        let back = t.feed(.transportStateChanged(.subscriber, .connected))
        #expect(back.contains(.cancelTimer(.transportGrace)))
        t.advance(to: t.now + 5_000)
        #expect(t.fireDueTimers().events.isEmpty)
        #expect(t.state.connectionState == .connected)
    }

    @Test func signalLossDuringTheGraceResumesAtOnce() {
        var t = RoomTranscript()
        t.joinRoom()
        t.feed(.transportStateChanged(.subscriber, .failed))
        let closed = t.feed(.signalClosed)
        #expect(closed.events == [.reconnecting(.resume)])
        #expect(closed.contains(.cancelTimer(.transportGrace)))
    }

    @Test func neverConnectedTransportCannotResume() {
        var t = RoomTranscript { $0.joinAttempts = 1 }
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        t.server(.join(Fixture.join()))
        t.advance(to: 16_200)
        // The subscriber PC never connected within 15 s: the first join fails, and the
        // cause is the media path (UDP blocked, TURN wrong), not a refusal.
        #expect(t.fireDueTimers().events == [.disconnected(.network(.ice))])
        #expect(!t.state.everConnected)
    }

    // MARK: - Retry schedule

    @Test func reconnectScheduleFollowsTheJSSDK() {
        // With no outage budget the episode is the JS SDK's table and nothing more.
        var t = RoomTranscript { $0.maxOutageMs = 0 }
        t.joinRoom()
        t.advance(to: 100_000)
        var actions = t.feed(.signalClosed)
        var delays: [Int64] = []
        var jitters: [Int64] = []
        for _ in 0..<20 {
            guard let (deadline, jitter) = actions.retryTimer else { break }
            delays.append(deadline.milliseconds - t.now)
            jitters.append(jitter)
            t.advance(to: deadline.milliseconds)
            t.fireDueTimers()
            actions = t.feed(.signalConnectFailed(.unreachable(.refused)))
            if actions.events.contains(.disconnected(.network(.refused))) { break }
        }
        #expect(delays == [0, 300, 1200, 2700, 4800, 7000, 7000, 7000, 7000, 7000])
        #expect(jitters == [0, 0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000])
        #expect(t.state.connectionState == .disconnected(.network(.refused)))
        #expect(t.state.timers.isEmpty)
    }

    @Test func roomGoneDuringAResumeAsksBedrudThenIsFinal() {
        var t = RoomTranscript()
        t.joinRoom()
        t.feed(.signalClosed)
        t.fireDueTimers()
        // LiveKit closed the room: Bedrud decides (a fresh token, a 410, or a new meeting).
        #expect(t.feed(.signalConnectFailed(.roomNotFound)).events == [.reconnecting(.full)])
        t.advance(to: 5_000)
        #expect(t.fireDueTimers().effects == [.fetchJoinToken])
        t.feed(.joinTokenReceived("fresh"))
        #expect(t.feed(.signalConnectFailed(.roomNotFound)).events == [.disconnected(.roomNotFound)])

        t = RoomTranscript()
        t.joinRoom()
        t.feed(.signalClosed)
        t.fireDueTimers()
        t.feed(.signalConnected)
        #expect(t.server(Fixture.leave(.roomDeleted)).events == [.disconnected(.roomDeleted)])
    }

    // MARK: - Keepalive

    @Test func pingsAndPingTimeout() {
        var t = RoomTranscript()
        t.joinRoom()  // join at 1000: ping every 5 s, timeout 15 s
        t.advance(to: 6_000)
        let ping = t.fireDueTimers()
        #expect(ping.sent == [.ping(6_000), .pingReq(LiveKit.Ping(timestamp: 6_000, rtt: 0))])
        t.advance(to: 6_040)
        t.server(.pongResp(.with { $0.lastPingTimestamp = 6_000; $0.timestamp = 99 }))
        #expect(t.state.rttMs == 40)

        // Any message keeps the connection alive: the 16 000 deadline moves.
        t.advance(to: 16_000)
        let pings = t.fireDueTimers()
        #expect(pings.sent.count == 2)
        #expect(t.state.timers[.pingTimeout] == .ms(21_040))

        // Then silence for 15 s: the signal is dead ⇒ resume.
        t.advance(to: 21_040)
        let dead = t.fireDueTimers()
        #expect(dead.events == [.reconnecting(.resume)])
        #expect(dead.contains(.closeSignal))
    }

    @Test func noPingsWhenTheServerAsksForNone() {
        var t = RoomTranscript()
        var join = Fixture.join()
        join.pingInterval = 0
        join.pingTimeout = 0
        let actions = t.joinRoom(join)
        #expect(actions.startedTimers[.ping] == nil && actions.startedTimers[.pingTimeout] == nil)
    }

    @Test func timersFiredEarlyOrLateAreHarmless() {
        var t = RoomTranscript()
        t.joinRoom()
        // Early: the deadline stays.
        #expect(t.feed(.timerFired(.ping)) == [.startTimer(.ping, deadline: .ms(6_000), jitterMs: 0)])
        // Not armed: ignored and counted.
        #expect(t.feed(.timerFired(.tokenFetch)).isEmpty)
        #expect(t.state.stats.staleTimers == 1)
    }

    // MARK: - Requests while reconnecting

    @Test func requestsAreHeldUntilTheResumeCompletes() {
        var t = RoomTranscript()
        t.joinRoom()
        #expect(t.feed(.sendRequest(.subscription(trackSids: ["TR_bob_cam"], subscribe: false))).sent.count == 1)
        t.feed(.signalClosed)
        #expect(t.feed(.sendRequest(.mute(trackSid: "TR_x", muted: true))).sent.isEmpty)
        t.fireDueTimers()
        t.feed(.signalConnected)
        let resumed = t.server(.reconnect(.init()))
        guard case .syncState(let sync)? = resumed.sent.first else {
            Issue.record("expected sync_state first")
            return
        }
        #expect(sync.subscription?.trackSids == ["TR_bob_cam"], "auto-subscribe: sync lists what we unsubscribed")
        #expect(resumed.sent.dropFirst().first == .mute(LiveKit.MuteTrackRequest(sid: "TR_x", muted: true)))
    }

    @Test func heldRequestsAreBounded() {
        var t = RoomTranscript { $0.maxQueuedRequests = 3 }
        t.joinRoom()
        t.feed(.signalClosed)
        for i in 0..<5 { t.feed(.sendRequest(.mute(trackSid: "TR_\(i)", muted: true))) }
        #expect(t.state.queue.count == 3)
        #expect(t.state.stats.droppedRequests == 2)
    }

    static func label(_ event: RoomEvent) -> String {
        switch event {
        case .roomJoined(_, let local): "roomJoined \(local.sid)"
        case .participantJoined(let p): "joined \(p.identity)"
        case .participantLeft(let p, let reason): "left \(p.identity) \(reason)"
        case .participantRejoined(let p, let previous): "rejoined \(p.identity) \(previous)->\(p.sid)"
        case .participantUpdated(let p, let changes): "updated \(p.identity) \(changes.rawValue)"
        case .trackPublished(let track, let who): "published \(who)/\(track.sid)"
        case .trackUnpublished(let track, let who): "unpublished \(who)/\(track.sid)"
        case .trackMuted(let track, let who): "muted \(who)/\(track.sid)"
        case .trackUnmuted(let track, let who): "unmuted \(who)/\(track.sid)"
        default: "\(event)"
        }
    }
}

extension Array where Element == RoomAction {
    /// The retry timer these actions start, if any.
    var retryTimer: (RoomInstant, Int64)? {
        for case .startTimer(.retry, let deadline, let jitter) in self { return (deadline, jitter) }
        return nil
    }
}

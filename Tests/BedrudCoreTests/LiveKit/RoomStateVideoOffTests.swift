import BedrudProtocol
import Testing
@testable import BedrudCore

/// The room state turns remote video off at the SFU (`UpdateTrackSettings{disabled}`),
/// once per track and server session, so a recorder receives audio only.
@Suite struct RoomStateVideoOffTests {
    static func disabled(_ sids: [String]) -> LiveKit.SignalRequest.Message {
        var setting = LiveKit.UpdateTrackSettings()
        setting.trackSids = sids
        setting.disabled = true
        return .trackSetting(setting)
    }

    static func settings(_ actions: [RoomAction]) -> [LiveKit.SignalRequest.Message] {
        actions.sent.filter { if case .trackSetting = $0 { true } else { false } }
    }

    @Test func videoAlreadyInTheRoomIsTurnedOffRightAfterJoin() {
        var t = RoomTranscript()
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        let joined = t.server(.join(Fixture.join()))
        // One request for bob's camera, before the peer connection exists; audio stays.
        #expect(Self.settings(joined) == [Self.disabled(["TR_bob_cam"])])
        guard let created = joined.firstIndex(where: { if case .createTransports = $0 { true } else { false } }),
              let sent = joined.firstIndex(where: { if case .send(let r) = $0, case .trackSetting = r.message { true } else { false } })
        else {
            Issue.record("expected createTransports and the setting: \(joined)")
            return
        }
        #expect(sent > created, "sent in the same input as the join")
        #expect(Self.settings(t.feed(.transportStateChanged(.subscriber, .connected))).isEmpty)
        #expect(t.state.disabledTrackSids == ["TR_bob_cam"])
    }

    @Test func videoPublishedLaterIsTurnedOffOnce() {
        var t = RoomTranscript()
        t.joinRoom()
        var alice = Fixture.alice
        alice.version = 2
        alice.tracks.append(Fixture.track("TR_alice_screen", kind: .video, source: .screenShare, mime: "video/VP8"))
        alice.tracks.append(Fixture.track("TR_alice_screen_audio", kind: .audio, source: .screenShareAudio))
        #expect(Self.settings(t.server(Fixture.update(alice))) == [Self.disabled(["TR_alice_screen"])])
        // Later updates of the same track (mute, new version) ask nothing more.
        alice.version = 3
        alice.tracks[1].muted = true
        #expect(Self.settings(t.server(Fixture.update(alice))).isEmpty)
        // A newcomer with a camera: its own request.
        let carol = Fixture.participant("carol", sid: "PA_carol", tracks: [
            Fixture.track("TR_carol_mic"), Fixture.track("TR_carol_cam", kind: .video, source: .camera, mime: "video/VP8"),
        ])
        #expect(Self.settings(t.server(Fixture.update(carol))) == [Self.disabled(["TR_carol_cam"])])
        #expect(t.state.disabledTrackSids == ["TR_bob_cam", "TR_alice_screen", "TR_carol_cam"])
    }

    @Test func unpublishedVideoLeavesTheSyncState() {
        var t = RoomTranscript()
        t.joinRoom()
        var bob = Fixture.bob
        bob.version = 2
        bob.tracks.removeLast()
        t.server(Fixture.update(bob))
        #expect(t.state.disabledTrackSids.isEmpty)
        // A leaving participant takes its tracks along.
        let carol = Fixture.participant("carol", sid: "PA_carol", tracks: [Fixture.track("TR_carol_cam", kind: .video, source: .camera)])
        t.server(Fixture.update(carol))
        var gone = carol
        gone.version = 2
        gone.state = .disconnected
        t.server(Fixture.update(gone))
        #expect(t.state.disabledTrackSids.isEmpty)
    }

    @Test func resumeCarriesTheDisabledTracksInSyncState() {
        var t = RoomTranscript()
        t.joinRoom()
        t.feed(.signalClosed)
        t.fireDueTimers()
        t.feed(.signalConnected)
        let resumed = t.server(.reconnect(.init()))
        guard case .syncState(let sync)? = resumed.sent.first else {
            Issue.record("expected sync_state first: \(resumed.sent)")
            return
        }
        // LiveKit re-applies these before it re-subscribes (room.go:686-691): nothing to resend.
        #expect(sync.trackSidsDisabled == ["TR_bob_cam"])
        #expect(Self.settings(resumed).isEmpty)
    }

    @Test func fullRejoinTurnsVideoOffAgain() {
        var t = RoomTranscript()
        t.joinRoom()
        // The server forgets us (resume refused): a new session knows no settings.
        t.server(Fixture.leave(.stateMismatch, action: .reconnect, canReconnect: true))
        t.fireDueTimers()
        t.feed(.joinTokenReceived("tok-2"))
        t.feed(.signalConnected)
        var bot = Fixture.bot
        bot.sid = "PA_bot2"
        let rejoined = t.server(.join(Fixture.join(me: bot)))
        #expect(Self.settings(rejoined) == [Self.disabled(["TR_bob_cam"])])
    }

    @Test func aClientThatWantsVideoAsksNothing() {
        var t = RoomTranscript { $0.receiveVideo = true }
        #expect(Self.settings(t.joinRoom()).isEmpty)
        #expect(t.state.disabledTrackSids.isEmpty)
    }
}

import BedrudProtocol
import Testing
@testable import BedrudCore

/// Room-model transcripts: participants, tracks, speakers, quality, negotiation hand-off
/// and data packets.
@Suite struct RoomStateModelTests {
    private func label(_ e: RoomEvent) -> String { RoomStateConnectionTests.label(e) }

    private func connected() -> RoomTranscript {
        var t = RoomTranscript()
        t.joinRoom()
        return t
    }

    // MARK: - Participants and tracks

    @Test func lateJoiner() {
        var t = connected()
        let carol = Fixture.participant("carol", sid: "PA_carol", state: .joined, tracks: [Fixture.track("TR_carol_mic")])
        #expect(t.server(Fixture.update(carol)).events.map(label) == ["joined carol", "published carol/TR_carol_mic"])
        // JOINED → ACTIVE is an update, not a second join.
        var active = carol
        active.state = .active
        active.version = 2
        #expect(t.server(Fixture.update(active)).events.map(label) == ["updated carol \(ParticipantChanges.state.rawValue)"])
        #expect(t.state.participants.map(\.identity) == ["alice", "bob", "carol"])
    }

    @Test func muteUnmuteAndUnpublish() {
        var t = connected()
        var alice = Fixture.alice
        alice.version = 2
        alice.tracks[0].muted = true
        #expect(t.server(Fixture.update(alice)).events.map(label) == ["muted alice/TR_alice_mic"])
        alice.version = 3
        alice.tracks[0].muted = false
        alice.tracks.append(Fixture.track("TR_alice_screen", kind: .video, source: .screenShare, mime: "video/VP8"))
        #expect(t.server(Fixture.update(alice)).events.map(label) == ["unmuted alice/TR_alice_mic", "published alice/TR_alice_screen"])
        // A track missing from a newer update was unpublished (there is no other message).
        alice.version = 4
        alice.tracks.removeFirst()
        #expect(t.server(Fixture.update(alice)).events.map(label) == ["unpublished alice/TR_alice_mic"])
        #expect(t.state.remoteParticipants["alice"]?.tracks.map(\.sid) == ["TR_alice_screen"])
    }

    @Test func trackDetailsArrivingLater() {
        var t = connected()
        var alice = Fixture.alice
        alice.version = 2
        alice.tracks[0].mimeType = "audio/red"
        let events = t.server(Fixture.update(alice)).events
        guard case .trackUpdated(let track, "alice")? = events.first else {
            Issue.record("expected trackUpdated, got \(events)")
            return
        }
        #expect(track.mimeType == "audio/red" && track.isStereo)
    }

    @Test func staleUpdatesAreIgnored() {
        var t = connected()
        var newer = Fixture.alice
        newer.version = 5
        newer.name = "Alice B."
        #expect(t.server(Fixture.update(newer)).events.map(label) == ["updated alice \(ParticipantChanges.name.rawValue)"])
        var older = Fixture.alice
        older.version = 4
        older.tracks = []
        #expect(t.server(Fixture.update(older)).events.isEmpty)
        #expect(t.state.remoteParticipants["alice"]?.name == "Alice B.")
        #expect(t.state.remoteParticipants["alice"]?.tracks.count == 1)
        #expect(t.state.stats.staleParticipantUpdates == 1)
        // The same version again is applied (idempotent, as the JS SDK does).
        #expect(t.server(Fixture.update(newer)).events.isEmpty)
    }

    @Test func participantLeaves() {
        var t = connected()
        let gone = Fixture.participant("bob", sid: "PA_bob", version: 2, state: .disconnected, disconnectReason: .clientInitiated)
        #expect(t.server(Fixture.update(gone)).events.map(label) == [
            "unpublished bob/TR_bob_mic", "unpublished bob/TR_bob_cam", "left bob disconnected(BedrudProtocol.LiveKit.DisconnectReason.clientInitiated)",
        ])
        #expect(t.state.remoteParticipants["bob"] == nil)
        // A late repeat about the ended session changes nothing.
        #expect(t.server(Fixture.update(gone)).events.isEmpty)
        // Nor does an update for someone we never saw leave.
        #expect(t.server(Fixture.update(Fixture.participant("zed", sid: "PA_zed", state: .disconnected))).events.isEmpty)
    }

    @Test func identityRejoinsWithANewSid() {
        var t = connected()
        let again = Fixture.participant("alice", sid: "PA_alice2", version: 1, tracks: [Fixture.track("TR_alice_mic2")],
                                        joinedAtMs: 1_767_225_700_000)
        #expect(t.server(Fixture.update(again)).events.map(label) == [
            "unpublished alice/TR_alice_mic", "rejoined alice PA_alice->PA_alice2", "published alice/TR_alice_mic2",
        ])
        #expect(t.state.remoteParticipants["alice"]?.sid == "PA_alice2")
        // Version numbers are per SID: version 1 of the new SID is fine, and any word
        // about the old SID (even DISCONNECTED) is stale.
        let oldGone = Fixture.participant("alice", sid: "PA_alice", version: 9, state: .disconnected)
        #expect(t.server(Fixture.update(oldGone)).events.isEmpty)
        #expect(t.state.remoteParticipants["alice"]?.sid == "PA_alice2")
        // An older session of the identity showing up late is not a rejoin either.
        let older = Fixture.participant("alice", sid: "PA_alice0", version: 3, joinedAtMs: 1_767_225_500_000)
        #expect(t.server(Fixture.update(older)).events.isEmpty)
    }

    @Test func bedrudModeratorPromotion() {
        var t = connected()
        var alice = Fixture.alice
        alice.version = 2
        alice.metadata = #"{"accesses":["user","moderator"]}"#
        let events = t.server(Fixture.update(alice)).events
        guard case .participantUpdated(let p, let changes)? = events.first else {
            Issue.record("expected participantUpdated, got \(events)")
            return
        }
        #expect(changes == .metadata && p.accesses == ["user", "moderator"] && p.bedrud.isModerator)
    }

    @Test func updatesAboutOurselves() {
        var t = connected()
        var me = Fixture.bot
        me.version = 2
        me.state = .active
        let events = t.server(Fixture.update(me)).events
        #expect(events.count == 1)
        #expect(t.state.localParticipant?.state == .active)
        #expect(t.state.remoteParticipants["bot"] == nil, "we are never a remote participant")
        // Our own previous session (after a full rejoin) is not us.
        #expect(t.server(Fixture.update(Fixture.participant("bot", sid: "PA_old", version: 7))).events.isEmpty)
    }

    // MARK: - Speakers, quality, streams, room

    @Test func speakerDeltas() {
        var t = connected()
        var e = t.server(Fixture.speakers(("PA_alice", 0.7, true))).events
        #expect(e == [.speakersChanged(active: [MeetingSpeaker(identity: "alice", sid: "PA_alice", level: 0.7)], started: ["alice"], stopped: [])])
        e = t.server(Fixture.speakers(("PA_bob", 0.9, true))).events
        #expect(e == [.speakersChanged(active: [
            MeetingSpeaker(identity: "bob", sid: "PA_bob", level: 0.9), MeetingSpeaker(identity: "alice", sid: "PA_alice", level: 0.7),
        ], started: ["bob"], stopped: [])], "a delta keeps alice speaking")
        e = t.server(Fixture.speakers(("PA_alice", 0, false), ("PA_nobody", 1, true))).events
        #expect(e == [.speakersChanged(active: [MeetingSpeaker(identity: "bob", sid: "PA_bob", level: 0.9)], started: [], stopped: ["alice"])])
        #expect(t.state.stats.unknownSpeakers == 1)
        // Ourselves too (the server includes us when we publish).
        e = t.server(Fixture.speakers(("PA_bot", 0.2, true))).events
        #expect(t.state.localParticipant?.isSpeaking == true)
        // A speaker who leaves stops speaking.
        let bobGone = Fixture.participant("bob", sid: "PA_bob", version: 2, state: .disconnected)
        e = t.server(Fixture.update(bobGone)).events
        #expect(e.contains(.speakersChanged(active: [MeetingSpeaker(identity: "bot", sid: "PA_bot", level: 0.2)], started: [], stopped: ["bob"])))
    }

    @Test func nonsenseSpeakerLevelsAreClamped() {
        var t = connected()
        t.server(Fixture.speakers(("PA_alice", .nan, true), ("PA_bob", 7, true)))
        #expect(t.state.activeSpeakers.map(\.level) == [1, 0])
    }

    @Test func legacySpeakerPacketIsAFullList() {
        var t = connected()
        t.server(Fixture.speakers(("PA_alice", 0.5, true), ("PA_bob", 0.4, true)))
        let packet = LiveKit.DataPacket.with {
            $0.value = .speaker(.with { $0.speakers = [.with { $0.sid = "PA_bob"; $0.level = 0.6; $0.active = true }] })
        }
        let e = t.feed(.dataReceived(packet.protobufBytes(), reliable: false)).events
        #expect(e == [.speakersChanged(active: [MeetingSpeaker(identity: "bob", sid: "PA_bob", level: 0.6)], started: [], stopped: ["alice"])])
    }

    @Test func connectionQualityStreamStateAndPermissions() {
        var t = connected()
        let q = t.server(.connectionQuality(.with {
            $0.updates = [.with { $0.participantSid = "PA_alice"; $0.quality = .excellent; $0.score = 4.5 }]
        })).events
        #expect(q == [.connectionQualityChanged(participant: "alice", quality: .excellent, score: 4.5)])
        #expect(t.server(.connectionQuality(.with {
            $0.updates = [.with { $0.participantSid = "PA_alice"; $0.quality = .excellent; $0.score = 4.4 }]
        })).events.isEmpty, "only changes of the rating are events")

        let paused = t.server(.streamStateUpdate(.with {
            $0.streamStates = [.with { $0.participantSid = "PA_bob"; $0.trackSid = "TR_bob_cam"; $0.state = .paused }]
        })).events
        guard case .trackStreamStateChanged(let track, "bob")? = paused.first else {
            Issue.record("expected a stream state event, got \(paused)")
            return
        }
        #expect(track.isPaused)
        // Survives a later participant update.
        var bob = Fixture.bob
        bob.version = 2
        t.server(Fixture.update(bob))
        #expect(t.state.remoteParticipants["bob"]?.track("TR_bob_cam")?.isPaused == true)

        let denied = t.server(.subscriptionPermissionUpdate(.with {
            $0.participantSid = "PA_alice"; $0.trackSid = "TR_alice_mic"; $0.allowed = false
        })).events
        #expect(denied.count == 1 && t.state.remoteParticipants["alice"]?.tracks.first?.subscriptionAllowed == false)
        #expect(t.server(.subscriptionResponse(.with { $0.trackSid = "TR_x"; $0.err = .trackNotFound })).events
            == [.trackSubscriptionFailed(trackSid: "TR_x", error: .trackNotFound)])
    }

    @Test func roomSidArrivesLater() {
        var t = connected()
        #expect(t.state.room.sid == "")
        let e = t.server(.roomUpdate(.with { $0.room = .with { $0.sid = "RM_1"; $0.name = "standup"; $0.numParticipants = 3 } })).events
        #expect(e == [.roomUpdated(t.state.room)] && t.state.room.sid == "RM_1")
        // A later update without a sid keeps it.
        t.server(.roomUpdate(.with { $0.room = .with { $0.name = "standup"; $0.numParticipants = 4 } }))
        #expect(t.state.room.sid == "RM_1" && t.state.room.numParticipants == 4)
    }

    @Test func roomMoved() {
        var t = connected()
        t.server(.refreshToken("tok-2"))
        let e = t.server(.roomMoved(.with {
            $0.room = .with { $0.name = "breakout"; $0.sid = "RM_b" }
            $0.token = "tok-moved"
            $0.participant = Fixture.participant("bot", sid: "PA_bot_b")
            $0.otherParticipants = [Fixture.participant("dave", sid: "PA_dave")]
        })).events
        #expect(e.map(label).first == "\(RoomEvent.roomMoved(MeetingRoom(sid: "RM_b", name: "breakout")))")
        #expect(e.map(label).contains("joined dave"))
        #expect(e.map(label).contains("left alice absentAfterRejoin"))
        #expect(t.state.localParticipant?.sid == "PA_bot_b")
        // The moved-to token is the one used from now on.
        t.feed(.signalClosed)
        #expect(t.fireDueTimers().opened.first?.token == "tok-moved")
    }

    /// Regression (found by RoomStateFuzzTests, seed 12): a join or move naming us with
    /// an identity that was listed as remote must not leave us in the remote roster.
    @Test func weAreNeverARemoteParticipant() {
        var t = connected()
        let e = t.server(.roomMoved(.with {
            $0.participant = Fixture.participant("alice", sid: "PA_alice9")
            $0.otherParticipants = [Fixture.alice, Fixture.bob]
        })).events
        #expect(t.state.remoteParticipants["alice"] == nil)
        #expect(t.state.localParticipant?.identity == "alice")
        #expect(e.map(label).contains("left alice absentAfterRejoin"))
        #expect(t.state.participantOrder == ["bob"])
    }

    @Test func serverMutesOurTrack() {
        var t = connected()
        let actions = t.server(.mute(LiveKit.MuteTrackRequest(sid: "TR_bot_mic", muted: true)))
        #expect(actions == [.setLocalTrackMuted(sid: "TR_bot_mic", muted: true), .emit(.localTrackMutedByServer(sid: "TR_bot_mic", muted: true))])
    }

    // MARK: - Negotiation hand-off

    @Test func everyOfferIsAnsweredWithItsID() {
        var t = connected()
        let o1 = t.server(Fixture.offer(id: 1, sdp: "offer-1"))
        let o2 = t.server(Fixture.offer(id: 2, sdp: "offer-2"))
        #expect(o1.effects == [.applyRemoteOffer(LiveKit.SessionDescription(type: "offer", sdp: "offer-1", id: 1), target: .subscriber)])
        #expect(o2.effects == [.applyRemoteOffer(LiveKit.SessionDescription(type: "offer", sdp: "offer-2", id: 2), target: .subscriber)])
        #expect(t.feed(.answerCreated(sdp: "answer-2", offerID: 2)).sent == [.answer(LiveKit.SessionDescription(type: "answer", sdp: "answer-2", id: 2))])
        #expect(t.feed(.answerCreated(sdp: "answer-1", offerID: 1)).sent == [.answer(LiveKit.SessionDescription(type: "answer", sdp: "answer-1", id: 1))])
        // Answering twice, or an offer we never got, sends nothing.
        #expect(t.feed(.answerCreated(sdp: "again", offerID: 2)).isEmpty)
        #expect(t.feed(.answerCreated(sdp: "bogus", offerID: 9)).isEmpty)
        #expect(t.state.stats.unmatchedAnswers == 2)
        // Legacy servers use id 0, which is answered like any other.
        t.server(Fixture.offer(id: 0))
        #expect(t.feed(.answerCreated(sdp: "legacy", offerID: 0)).sent.count == 1)
    }

    @Test func trickleBothWays() {
        var t = connected()
        let json = #"{"candidate":"candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host","sdpMid":"0","sdpMLineIndex":0,"usernameFragment":null}"#
        let remote = t.server(.trickle(LiveKit.TrickleRequest(candidateInit: json, target: .subscriber)))
        #expect(remote == [.addRemoteCandidate(ICECandidateInit(candidate: "candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host", sdpMid: "0", sdpMLineIndex: 0), target: .subscriber)])
        #expect(t.server(.trickle(LiveKit.TrickleRequest(candidateInit: "not json", target: .subscriber))).isEmpty)
        #expect(t.state.stats.invalidCandidates == 1)
        let local = ICECandidateInit(candidate: "candidate:2 1 udp 1 10.0.0.1 4000 typ host", sdpMid: "0", sdpMLineIndex: 0, usernameFragment: "u")
        #expect(t.feed(.localCandidate(local, .subscriber)).sent == [.trickle(LiveKit.TrickleRequest(candidateInit: local.json, target: .subscriber))])
        // Our publisher offer gets an id; the server's answer goes to the publisher PC.
        #expect(t.feed(.offerCreated(sdp: "pub")).sent == [.offer(LiveKit.SessionDescription(type: "offer", sdp: "pub", id: 1))])
        let answer = LiveKit.SessionDescription(type: "answer", sdp: "srv", id: 1)
        #expect(t.server(.answer(answer)) == [.applyRemoteAnswer(answer, target: .publisher)])
    }

    @Test func unknownAndBrokenMessagesAreIgnored() {
        var t = connected()
        let before = t.state.participants
        // A oneof member from a newer server (27 = publish_data_track_response).
        #expect(t.feed(.signalData([0xda, 0x01, 0x00])).isEmpty)
        #expect(t.state.stats.unknownSignalMessages == 1)
        #expect(t.feed(.signalData([0xff, 0xff, 0xff])).isEmpty)
        #expect(t.state.stats.undecodableSignalMessages == 1)
        #expect(t.server(.subscribedQualityUpdate(.init())).isEmpty)
        #expect(t.server(.join(Fixture.join())).isEmpty, "a second join is ignored")
        #expect(t.state.participants == before)
        #expect(t.state.connectionState == .connected)
    }

    // MARK: - Data

    @Test func reliableDataIsDeduplicated() {
        var t = connected()
        var delivered: [String] = []
        for (seq, text) in [(UInt32(1), "a"), (2, "b"), (2, "b-dup"), (1, "a-dup"), (3, "c")] {
            for case .dataReceived(let m) in t.feed(.dataReceived(Fixture.dataPacket(from: "PA_alice", sequence: seq, payload: text), reliable: true)).events {
                delivered.append(String(decoding: m.payload, as: UTF8.self))
            }
        }
        #expect(delivered == ["a", "b", "c"])
        #expect(t.state.stats.duplicateDataPackets == 2)
        // Another sender has its own sequence; lossy packets are never deduplicated.
        #expect(t.feed(.dataReceived(Fixture.dataPacket(from: "PA_bob", sequence: 1, payload: "x"), reliable: true)).events.count == 1)
        #expect(t.feed(.dataReceived(Fixture.dataPacket(from: "PA_bob", sequence: 1, payload: "x"), reliable: false)).events.count == 1)
        #expect(t.feed(.dataReceived([0x12, 0xff], reliable: true)).isEmpty)
        #expect(t.state.stats.undecodableDataPackets == 1)
    }

    @Test func bedrudChatAndModeration() {
        var t = connected()
        let chat = #"{"type":"chat","id":"m1","timestamp":1767225700123,"senderName":"","senderIdentity":"spoof","message":"hi all"}"#
        let events = t.feed(.dataReceived(Fixture.dataPacket(from: "PA_alice", sequence: 1, topic: "chat", payload: chat), reliable: true)).events
        #expect(events.count == 2)
        #expect(events.last == .chatReceived(MeetingChatMessage(
            id: "m1", senderIdentity: "alice", senderName: "Alice", text: "hi all", timestampMs: 1_767_225_700_123)),
            "the server-asserted sender wins over the payload's; the name falls back to the participant's")

        let kick = #"{"type":"system","event":"kick","actor":"owner","target":"bob"}"#
        let notice = t.feed(.dataReceived(Fixture.dataPacket(from: "", topic: "system", payload: kick), reliable: true)).events
        #expect(notice.last == .systemMessage(BedrudSystemMessage(event: .kick, actor: "owner", target: "bob"), sender: ""))

        let raw = t.feed(.dataReceived(Fixture.dataPacket(from: "PA_bob", identity: "bob", topic: "custom", payload: "{}"), reliable: false)).events
        #expect(raw == [.dataReceived(MeetingDataMessage(topic: "custom", senderIdentity: "bob", senderSid: "PA_bob", payload: Array("{}".utf8), reliable: false))])
    }

    @Test func otherDataPacketKinds() {
        var t = connected()
        let lkChat = LiveKit.DataPacket.with {
            $0.participantSid = "PA_bob"
            $0.value = .chatMessage(.with { $0.id = "c1"; $0.message = "yo"; $0.timestamp = 5 })
        }
        #expect(t.feed(.dataReceived(lkChat.protobufBytes(), reliable: true)).events
            == [.chatReceived(MeetingChatMessage(id: "c1", senderIdentity: "bob", senderName: "Bob", text: "yo", timestampMs: 5, origin: .livekit))])
        let dtmf = LiveKit.DataPacket.with { $0.participantIdentity = "sip"; $0.value = .sipDTMF(.with { $0.code = 1; $0.digit = "1" }) }
        #expect(t.feed(.dataReceived(dtmf.protobufBytes(), reliable: true)).events == [.dtmfReceived(code: 1, digit: "1", sender: "sip")])
        let chunk = LiveKit.DataPacket.with { $0.value = .streamChunk(.with { $0.streamID = "s" }) }
        #expect(t.feed(.dataReceived(chunk.protobufBytes(), reliable: true)).isEmpty)
        #expect(t.state.stats.ignoredDataPackets == 1)
    }

    @Test func dataBeforeJoinOrAfterLeaveIsDropped() {
        var t = RoomTranscript()
        #expect(t.feed(.dataReceived(Fixture.dataPacket(from: "PA_x", payload: "x"), reliable: true)).isEmpty)
        t.joinRoom()
        t.feed(.leave)
        #expect(t.feed(.dataReceived(Fixture.dataPacket(from: "PA_alice", payload: "x"), reliable: true)).isEmpty)
    }
}

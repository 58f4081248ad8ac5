import BedrudProtocol
import Testing
@testable import BedrudCore

/// ``TrackOwners`` followed through room transcripts the way ``RoomManager`` follows it:
/// every emitted event applied in action order, and each server offer looked up at the
/// moment its `applyRemoteOffer` action comes (what the media side sees when it routes
/// that offer's tracks, with no hop to the actor).
@Suite struct RoomManagerTrackOwnersTests {
    struct Run {
        var transcript = RoomTranscript()
        var owners = TrackOwners()
        /// Owner of (participant sid, track sid) as seen at each offer, in order.
        var atOffers: [TrackOwner?] = []
        let lookup: (participantSid: String?, trackSid: String?)

        init(lookup: (String?, String?) = (nil, nil)) {
            self.lookup = lookup
            follow(transcript.joinRoom())
        }

        mutating func server(_ message: LiveKit.SignalResponse.Message) { follow(transcript.server(message)) }

        /// As RoomManager.perform: actions in order, events into the index.
        mutating func follow(_ actions: [RoomAction]) {
            for action in actions {
                switch action {
                case .emit(let event): owners.apply(event)
                case .applyRemoteOffer: atOffers.append(owners.owner(participantSid: lookup.participantSid, trackSid: lookup.trackSid))
                default: break
                }
            }
        }

        func owner(_ participantSid: String?, _ trackSid: String?) -> TrackOwner? {
            owners.owner(participantSid: participantSid, trackSid: trackSid)
        }
    }

    @Test func theJoinsParticipantsOwnTheirTracks() {
        let run = Run()
        #expect(run.owner(nil, "TR_alice_mic") == TrackOwner(identity: "alice", name: "Alice"))
        #expect(run.owner("PA_bob", nil) == TrackOwner(identity: "bob", name: "Bob"))
        #expect(run.owner("PA_bob", "TR_bob_cam") == TrackOwner(identity: "bob", name: "Bob"))
        // The participant sid of the msid decides over a track sid of someone else.
        #expect(run.owner("PA_alice", "TR_bob_mic")?.identity == "alice")
        // Ourselves and the unknown own nothing.
        #expect(run.owner("PA_bot", nil) == nil)
        #expect(run.owner("PA_nobody", "TR_nothing") == nil)
        #expect(run.owners.count == (participants: 2, sessions: 2, tracks: 3))
    }

    @Test func aLateJoinersTrackIsKnownWhenItsOfferIsApplied() {
        var run = Run(lookup: ("PA_carol", "TR_carol_mic"))
        // LiveKit sends the participant update, then the offer with the new track.
        run.server(Fixture.update(Fixture.participant("carol", sid: "PA_carol", name: "Carol C", tracks: [Fixture.track("TR_carol_mic")])))
        run.server(Fixture.offer(id: 2))
        #expect(run.atOffers == [TrackOwner(identity: "carol", name: "Carol C")])
    }

    @Test func anOfferBeforeItsParticipantUpdateFindsNoOwner() {
        // The other order (never seen from LiveKit): the router falls back to the PA_ sid,
        // as it did when it read the room's state.
        var run = Run(lookup: ("PA_carol", "TR_carol_mic"))
        run.server(Fixture.offer(id: 2))
        run.server(Fixture.update(Fixture.participant("carol", sid: "PA_carol", tracks: [Fixture.track("TR_carol_mic")])))
        #expect(run.atOffers == [nil])
        #expect(run.owner("PA_carol", "TR_carol_mic")?.identity == "carol")
    }

    @Test func aRenamedParticipantIsNamedAnew() {
        var run = Run(lookup: (nil, "TR_alice_mic"))
        run.server(Fixture.update(Fixture.participant("alice", sid: "PA_alice", name: "Alice B.", version: 2,
                                                      tracks: [Fixture.track("TR_alice_mic", stereo: true)])))
        run.server(Fixture.offer(id: 2))
        #expect(run.atOffers == [TrackOwner(identity: "alice", name: "Alice B.")])
    }

    @Test func aParticipantWhoLeftOwnsNothing() {
        var run = Run()
        run.server(Fixture.update(Fixture.participant("bob", sid: "PA_bob", version: 2, state: .disconnected, disconnectReason: .clientInitiated)))
        #expect(run.owner("PA_bob", nil) == nil)
        #expect(run.owner(nil, "TR_bob_mic") == nil)
        #expect(run.owner(nil, "TR_bob_cam") == nil)
        #expect(run.owner(nil, "TR_alice_mic")?.identity == "alice")
        #expect(run.owners.count == (participants: 1, sessions: 1, tracks: 1))
    }

    @Test func anUnpublishedTrackHasNoOwnerAndItsParticipantStays() {
        var run = Run()
        run.server(Fixture.update(Fixture.participant("alice", sid: "PA_alice", version: 2)))
        #expect(run.owner(nil, "TR_alice_mic") == nil)
        #expect(run.owner("PA_alice", nil)?.identity == "alice")
    }

    @Test func aRejoinedParticipantIsKnownByItsNewSessionOnly() {
        var run = Run()
        run.server(Fixture.update(Fixture.participant("alice", sid: "PA_alice2", tracks: [Fixture.track("TR_alice_mic2")],
                                                      joinedAtMs: 1_767_225_700_000)))
        #expect(run.owner("PA_alice2", nil)?.identity == "alice")
        #expect(run.owner(nil, "TR_alice_mic2")?.identity == "alice")
        #expect(run.owner("PA_alice", nil) == nil)
        #expect(run.owner(nil, "TR_alice_mic") == nil)
        #expect(run.owners.count == (participants: 2, sessions: 2, tracks: 3))
    }

    @Test func aFloodOfUpdatesLeavesOnlyWhoIsPresent() {
        // 60,000 updates over 1,000 identities that come, change name, publish, and go:
        // what is held is the room now, however long the flood.
        var owners = TrackOwners()
        for i in 0..<60_000 {
            let n = i % 1_000, round = i / 1_000
            var p = MeetingParticipant(Fixture.participant("p\(n)", sid: "PA_\(n)_\(round / 2)", name: "P\(round)",
                                                           tracks: [Fixture.track("TR_\(n)_\(round)")]), isLocal: false)
            if round % 2 == 0 {
                // Those who stayed come back in a new session (a rejoin), the others anew.
                owners.apply(n % 2 == 1 && round > 0 ? .participantRejoined(p, previousSid: "PA_\(n)_\(round / 2 - 1)") : .participantJoined(p))
                owners.apply(.trackPublished(p.tracks[0], participant: p.identity))
            } else {
                owners.apply(.participantUpdated(p, changes: .name))
                p.tracks = []
                owners.apply(.trackUnpublished(MeetingTrack(Fixture.track("TR_\(n)_\(round - 1)")), participant: p.identity))
                if n % 2 == 0 { owners.apply(.participantLeft(p, reason: .disconnected(.clientInitiated))) }
            }
        }
        // The last round (59) renamed everyone and the even ones left.
        #expect(owners.count == (participants: 500, sessions: 500, tracks: 0))
        #expect(owners.owner(participantSid: "PA_1_29", trackSid: nil) == TrackOwner(identity: "p1", name: "P59"))
        #expect(owners.owner(participantSid: "PA_0_29", trackSid: nil) == nil)
    }
}

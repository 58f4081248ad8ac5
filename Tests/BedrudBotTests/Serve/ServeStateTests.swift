@testable import BedrudBot
import BedrudCore
import Testing

/// `ServeState`: which meetings serve records, as transcripts of webhooks and reconciles in,
/// actions out, with no port, no server and no clock.
@Suite struct ServeStateTests {
    typealias S = ServeState

    static func joined(_ id: String, _ name: String, by user: String = "alice") -> S.Input {
        .webhook(WebhookEnvelope(event: "participant.joined", timestamp: "2026-12-06T10:00:00Z", data: .init(roomId: id, roomName: name, userId: user)))
    }
    static func ended(_ id: String, _ name: String) -> S.Input {
        .webhook(WebhookEnvelope(event: "room.ended", timestamp: "2026-12-06T10:00:00Z", data: .init(roomId: id, roomName: name, userId: "owner")))
    }
    static func room(_ id: String, _ name: String, people: Int, allowed: Bool? = true) -> AdminRoom {
        AdminRoom(id: id, name: name, participantsCount: people,
                  settings: RoomSettings(allowChat: true, allowVideo: true, allowAudio: true, requireApproval: false, e2ee: false,
                                         isPersistent: false, recordingsAllowed: allowed))
    }
    static func serving(_ policy: S.Policy = S.Policy()) -> S {
        var s = S(policy: policy)
        _ = s.handle(.loggedIn(userID: "bot"), at: 0)
        return s
    }

    @Test func aJoinWebhookStartsOneRecordingAndTheBotsOwnJoinIsIgnored() {
        var s = Self.serving()
        #expect(s.handle(Self.joined("r1", "standup"), at: 1) == [.record(.init(roomID: "r1", roomName: "standup", cause: .webhook))])
        #expect(s.handle(Self.joined("r1", "standup", by: "bob"), at: 2) == [], "a second person joining the same meeting")
        #expect(s.handle(Self.joined("r1", "standup", by: "bot"), at: 3) == [], "the bot's own join fires the webhook too")
        #expect(s.counts.ignoredOwnJoin == 1)
        #expect(s.counts.webhooks["participant.joined"] == 3)
    }

    @Test func roomEndedFinishesThatMeetingOnly() {
        var s = Self.serving()
        _ = s.handle(Self.joined("r1", "standup"), at: 1)
        _ = s.handle(Self.joined("r2", "retro"), at: 1)
        #expect(s.handle(Self.ended("r1", "standup"), at: 5) == [.finish(roomID: "r1")])
        #expect(s.handle(Self.ended("r3", "other"), at: 5) == [], "a room not recorded")
        _ = s.handle(.recordingEnded(roomID: "r1", .finished(reason: "signal")), at: 6)
        #expect(s.recording.keys.sorted() == ["r2"])
        #expect(s.handle(Self.joined("r1", "standup"), at: 7) == [.record(.init(roomID: "r1", roomName: "standup", cause: .webhook))],
                "the next meeting in a deleted-and-recreated room is recorded")
    }

    @Test func policyAndShardDecideWhichRoomsAreRecorded() {
        var p = S.Policy()
        p.rooms = ["team-*", "standup"]
        var s = Self.serving(p)
        #expect(s.handle(Self.joined("r1", "lunch"), at: 1) == [])
        #expect(s.counts.notInPolicy == 1)
        #expect(s.handle(Self.joined("r2", "team-a"), at: 1).count == 1)

        // Two replicas: each room is recorded by exactly one of them.
        var a = Self.serving(S.Policy(rooms: ["*"], shard: ServeShard("0/2")!, maxMeetings: 50))
        var b = Self.serving(S.Policy(rooms: ["*"], shard: ServeShard("1/2")!, maxMeetings: 50))
        for i in 0..<40 {
            let input = Self.joined("room-id-\(i)", "room\(i)")
            #expect(a.handle(input, at: 1).count + b.handle(input, at: 1).count == 1)
        }
        #expect(a.recording.count > 5 && b.recording.count > 5, "the hash spreads rooms over both shards")
    }

    @Test func reconcileJoinsWhatTheWebhooksMissedAndNeverAForbiddenRoom() {
        var s = Self.serving()
        _ = s.handle(Self.joined("r1", "standup"), at: 1)
        let rooms = [Self.room("r1", "standup", people: 3), Self.room("r2", "retro", people: 2), Self.room("r3", "empty", people: 0),
                     Self.room("r4", "secret", people: 4, allowed: false)]
        #expect(s.handle(.reconciled(rooms), at: 60) == [
            .record(.init(roomID: "r2", roomName: "retro", cause: .reconcile)),
            .note("Not recording 'secret': its owner does not allow recording (recordingsAllowed is off)."),
        ])
        #expect(s.handle(.reconciled(rooms), at: 120) == [], "said once per meeting, and nothing is started twice")
        #expect(s.counts.notAllowed == 2)
        #expect(s.counts.reconcileRuns == 2)
    }

    @Test func aRefusedOrRemovedRoomRestsForItsMeetingAndIsNeverLocked() {
        var s = Self.serving()
        _ = s.handle(Self.joined("r1", "private"), at: 1)
        _ = s.handle(.recordingEnded(roomID: "r1", .refused(reason: "forbidden")), at: 2)
        #expect(s.handle(Self.joined("r1", "private", by: "carol"), at: 3) == [], "not retried in a loop on every join")
        #expect(s.handle(.reconciled([Self.room("r1", "private", people: 2)]), at: 60) == [], "nor on every reconcile")
        // The meeting ends (the room is seen empty): the next one is recorded.
        _ = s.handle(.reconciled([Self.room("r1", "private", people: 0)]), at: 120)
        #expect(s.handle(Self.joined("r1", "private"), at: 130).count == 1)

        // Kicked, with no superadmin to reconcile: the hold ends the rest.
        _ = s.handle(.recordingEnded(roomID: "r1", .removed(reason: "kicked")), at: 140)
        #expect(s.handle(Self.joined("r1", "private"), at: 141) == [])
        #expect(s.handle(Self.joined("r1", "private"), at: 140 + S.restHold).count == 1)
        #expect(s.counts.finished["kicked"] == 1)
        #expect(s.counts.failed["forbidden"] == 1)
    }

    @Test func anOrdinaryEndRestsUntilSomeoneJoinsAgain() {
        var s = Self.serving()
        _ = s.handle(Self.joined("r1", "standup"), at: 1)
        _ = s.handle(.recordingEnded(roomID: "r1", .finished(reason: "alone")), at: 100)
        // A room that still lists someone who left is not joined again and again.
        #expect(s.handle(.reconciled([Self.room("r1", "standup", people: 1)]), at: 120) == [])
        #expect(s.handle(Self.joined("r1", "standup", by: "dave"), at: 130) == [.record(.init(roomID: "r1", roomName: "standup", cause: .webhook))])
        // A failed join (network) does not rest: the next webhook or reconcile tries again.
        _ = s.handle(.recordingEnded(roomID: "r1", .failed(reason: "network")), at: 140)
        #expect(s.handle(.reconciled([Self.room("r1", "standup", people: 2)]), at: 180).count == 1)
    }

    @Test func atCapacityMoreMeetingsWaitAndAreSaidOnce() {
        var s = Self.serving(S.Policy(rooms: ["*"], shard: ServeShard("0/1")!, maxMeetings: 1))
        _ = s.handle(Self.joined("r1", "a"), at: 1)
        #expect(s.handle(Self.joined("r2", "b"), at: 2) == [.note("Not recording 'b' yet: 1 meetings are being recorded (serve.max_meetings).")])
        #expect(s.handle(Self.joined("r2", "b"), at: 3) == [])
        _ = s.handle(.recordingEnded(roomID: "r1", .finished(reason: "alone")), at: 4)
        #expect(s.handle(.reconciled([Self.room("r2", "b", people: 2)]), at: 60) == [.record(.init(roomID: "r2", roomName: "b", cause: .reconcile))])
        #expect(s.counts.atCapacity == 2)
    }

    @Test func stopFinishesEverythingOnceAndTakesNothingNew() {
        var s = Self.serving()
        _ = s.handle(Self.joined("r1", "a"), at: 1)
        #expect(s.handle(.stop, at: 2) == [.finishAll])
        #expect(s.handle(.stop, at: 3) == [])
        #expect(s.handle(Self.joined("r2", "b"), at: 4) == [])
        #expect(s.handle(.reconciled([Self.room("r3", "c", people: 1)]), at: 5) == [])
    }

    @Test func unknownEventsAndPingsAreCountedAndIgnored() {
        var s = Self.serving()
        #expect(s.handle(.webhook(WebhookEnvelope(event: "ping", timestamp: "2026-12-06T10:00:00Z")), at: 1) == [])
        #expect(s.handle(.webhook(WebhookEnvelope(event: "meeting.exploded", timestamp: "2026-12-06T10:00:00Z", data: .init(roomId: "r1"))), at: 1) == [])
        #expect(s.counts.webhooks == ["ping": 1, "meeting.exploded": 1])
        #expect(ServeMetrics.eventLabel("meeting.exploded") == "other", "a sender cannot grow the label set")
    }
}

@testable import BedrudBot
import BedrudCore
import Foundation
import Testing

/// ``RoomEntry`` as transcripts: what `/room/join` answered in, what the bot does out —
/// Bedrud v0.12.0's ended meetings, waiting for a room, 429s, private rooms and
/// `recordingsAllowed`, with no server.
@Suite struct RoomEntryTests {
    static func rules(recreate: Bool = true, wait: Double? = nil, record: Bool = false) -> RoomEntry.Rules {
        var r = RoomEntry.Rules()
        r.recreate = recreate
        r.waitForRoom = wait
        r.record = record
        return r
    }

    static func joined(recordingsAllowed: Bool?) throws -> JoinRoomResponse {
        let settings = recordingsAllowed.map { #","settings":{"allowChat":true,"recordingsAllowed":\#($0)}"# } ?? ""
        let json = #"{"id":"r1","name":"standup","token":"t","livekitHost":"http://x/livekit"\#(settings)}"#
        return try JSONDecoder().decode(JoinRoomResponse.self, from: Data(json.utf8))
    }

    /// A compact, comparable form of the actions.
    static func text(_ actions: [RoomEntry.Action]) -> [String] {
        actions.map { a in
            switch a {
            case .requestJoin: "join"
            case .create(let room): "create \(room.name) \(room.mode ?? "-")"
            case .wait(let s): "wait \(s)"
            case .say(let line): "say \(line)"
            case .enter(let r): "enter \(r.room.name)"
            case .fail(let code, let line): "fail \(code.rawValue) \(line)"
            }
        }
    }

    @Test func anActiveRoomIsEntered() throws {
        var e = RoomEntry(room: "Standup", rules: Self.rules(record: true))
        #expect(Self.text(e.handle(.start, at: 0)) == ["join"])
        #expect(Self.text(e.handle(.joinAnswered(.joined(try Self.joined(recordingsAllowed: true))), at: 1)) == ["enter standup"])
        // A server without the flag (before v0.12.0) does not stop a recording.
        var old = RoomEntry(room: "standup", rules: Self.rules(record: true))
        #expect(Self.text(old.handle(.joinAnswered(.joined(try Self.joined(recordingsAllowed: nil))), at: 0)) == ["enter standup"])
    }

    @Test func aRoomThatForbidsRecordingRefusesARecordingBeforeJoining() throws {
        var e = RoomEntry(room: "standup", rules: Self.rules(record: true))
        let out = Self.text(e.handle(.joinAnswered(.joined(try Self.joined(recordingsAllowed: false))), at: 0))
        #expect(out == ["fail 6 the owner of 'standup' does not allow recording in it (the room's recordingsAllowed setting is off): "
            + "join without --record, or ask them to allow it ('bedrud-bot rooms settings standup --recordings-allowed yes')"])
        // Without --record the same room is joined.
        var listen = RoomEntry(room: "standup", rules: Self.rules(record: false))
        #expect(Self.text(listen.handle(.joinAnswered(.joined(try Self.joined(recordingsAllowed: false))), at: 0)) == ["enter standup"])
    }

    @Test func theOwnerStartsAnEndedMeetingOnce() throws {
        var e = RoomEntry(room: "standup", rules: Self.rules())
        let archived = ArchivedRoom(name: "standup", mode: "webinar", settings: RoomSettings(recordingsAllowed: true))
        #expect(Self.text(e.handle(.joinAnswered(.archivedOwned(archived)), at: 0))
            == ["say The meeting in 'standup' had ended; starting a new one as its owner (same name, mode and settings).", "create standup webinar"])
        #expect(Self.text(e.handle(.created, at: 1)) == ["join"])
        // The server still says it has ended: no second room, no loop.
        #expect(Self.text(e.handle(.joinAnswered(.archivedOwned(archived)), at: 2))
            == ["fail 9 the server still says the meeting in 'standup' has ended right after a new one was started; try again later"])
        #expect(e.handle(.start, at: 3).isEmpty, "finished")
    }

    @Test func aDryRunStartsNothing() {
        var rules = Self.rules()
        rules.dryRun = true
        var e = RoomEntry(room: "standup", rules: rules)
        #expect(Self.text(e.handle(.joinAnswered(.archivedOwned(ArchivedRoom(name: "standup", mode: nil, settings: nil))), at: 0))
            == ["fail 5 the meeting in 'standup' has ended; without --dry-run the bot would start a new one as the room's owner"])
    }

    @Test func someoneElseStartingItFirstIsJoined() throws {
        var e = RoomEntry(room: "standup", rules: Self.rules())
        _ = e.handle(.joinAnswered(.archivedOwned(ArchivedRoom(name: "standup", mode: nil, settings: nil))), at: 0)
        #expect(Self.text(e.handle(.createConflict, at: 1)) == ["join"])
        #expect(Self.text(e.handle(.joinAnswered(.joined(try Self.joined(recordingsAllowed: true))), at: 2)) == ["enter standup"])
    }

    @Test func noRecreateRefusesTheOwner() {
        var e = RoomEntry(room: "standup", rules: Self.rules(recreate: false))
        #expect(Self.text(e.handle(.joinAnswered(.archivedOwned(ArchivedRoom(name: "standup", mode: nil, settings: nil))), at: 0))
            == ["fail 5 the meeting in 'standup' has ended; as its owner, start it again in Bedrud or run without --no-recreate"])
    }

    @Test func anEndedMeetingFailsAtOnceWithoutWaiting() {
        var e = RoomEntry(room: "standup", rules: Self.rules())
        #expect(Self.text(e.handle(.joinAnswered(.ended), at: 0))
            == ["fail 5 the meeting in 'standup' has ended; it comes back when its owner starts it (--wait-for-room DURATION waits for that)"])
        var missing = RoomEntry(room: "nope", rules: Self.rules())
        #expect(Self.text(missing.handle(.joinAnswered(.notFound), at: 0))
            == ["fail 5 there is no room 'nope' on this server (check the name; 'bedrud-bot rooms list' shows your own rooms)"])
    }

    @Test func waitingAsksPolitelyUntilTheRoomIsActive() throws {
        var e = RoomEntry(room: "standup", rules: Self.rules(wait: 300, record: true))
        #expect(Self.text(e.handle(.joinAnswered(.ended), at: 100))
            == ["say Waiting up to 5m for 'standup' (the meeting in 'standup' has ended): asking the server again every few seconds.", "wait 5.0"])
        #expect(Self.text(e.handle(.waited, at: 105)) == ["join"])
        #expect(Self.text(e.handle(.joinAnswered(.ended), at: 105)) == ["wait 5.0"], "said once")
        // After a minute every 15 s, never past the deadline.
        #expect(Self.text(e.handle(.joinAnswered(.ended), at: 170)) == ["wait 15.0"])
        #expect(Self.text(e.handle(.joinAnswered(.ended), at: 390)) == ["wait 10.0"])
        #expect(Self.text(e.handle(.joinAnswered(.joined(try Self.joined(recordingsAllowed: true))), at: 395)) == ["enter standup"])
    }

    @Test func waitingEndsAtTheDeadline() {
        var e = RoomEntry(room: "standup", rules: Self.rules(wait: 30))
        _ = e.handle(.joinAnswered(.notFound), at: 0)
        #expect(Self.text(e.handle(.joinAnswered(.ended), at: 30))
            == ["fail 5 waited 30s for 'standup': the meeting in 'standup' has ended; it comes back when its owner starts it"])
    }

    @Test func rateLimitsAreWaitedOutAsTheServerSays() {
        var e = RoomEntry(room: "standup", rules: Self.rules())
        #expect(Self.text(e.handle(.joinAnswered(.rateLimited(retryAfter: 42)), at: 0))
            == ["say The server asks the bot to slow down (429); asking again in 42s.", "wait 42.0"])
        // Never sooner than the poll interval, even when Retry-After says 0 or is missing.
        #expect(Self.text(e.handle(.joinAnswered(.rateLimited(retryAfter: nil)), at: 42)).last == "wait 5.0")
        #expect(Self.text(e.handle(.joinAnswered(.rateLimited(retryAfter: 0)), at: 47)).last == "wait 5.0")
        // Without --wait-for-room, three times at most.
        #expect(Self.text(e.handle(.joinAnswered(.rateLimited(retryAfter: 1)), at: 52))
            == ["fail 12 the server kept answering 'too many requests' (429) for 'standup'; try again later"])
        // A huge Retry-After is capped at five minutes.
        var big = RoomEntry(room: "standup", rules: Self.rules())
        #expect(Self.text(big.handle(.joinAnswered(.rateLimited(retryAfter: 86_400)), at: 0)).last == "wait 300.0")
    }

    @Test(arguments: [
        ("This room is private", "'standup' is a private room: Bedrud admits only the account that created it and people already in the meeting (and nobody can ask to be let in). Join with the creator's account, or ask the owner to make the room public"),
        ("This room requires approval to join", "'standup' is a private room that requires approval, and Bedrud has no approval flow a bot can use: only the account that created the room, or someone already in the meeting, gets in. Join with the creator's account"),
        ("you are banned from this room", "the bot's account is banned from 'standup' (the server said: you are banned from this room)"),
        ("room is full", "'standup' is full (the server said: room is full); its owner can raise the limit ('bedrud-bot rooms settings standup --max N')"),
        ("nope\u{1B}[2J", "the server does not let the bot into 'standup': nope\\x1b[2J"),
    ])
    func forbiddenAnswersSayWhatWouldLetTheBotIn(server: String, line: String) {
        var e = RoomEntry(room: "standup", rules: Self.rules())
        #expect(Self.text(e.handle(.joinAnswered(.forbidden(server)), at: 0)) == ["fail 6 \(line)"])
    }
}

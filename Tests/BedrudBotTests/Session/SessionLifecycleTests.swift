@testable import BedrudBot
import BedrudCore
import Testing

/// `SessionLifecycle`: every lifecycle rule as a transcript — inputs at
/// instants in, actions out — with no binary and no server.
@Suite struct SessionLifecycleTests {
    typealias L = SessionLifecycle

    static func rules(duration: Double? = nil, alone: Double = 60, wait: Double? = nil, minFree: Int64 = 0) -> L.Rules {
        var r = L.Rules()
        r.duration = duration
        r.aloneTimeout = alone
        r.waitForParticipants = wait
        r.minFreeBytes = minFree
        r.diskCheckInterval = 2
        return r
    }

    @Test func durationStopsAndEndsAsASuccess() {
        var l = L(rules: Self.rules(duration: 90), recording: true)
        #expect(l.handle(.started, at: 0) == [.arm(.duration, seconds: 90)])
        #expect(l.handle(.people(1), at: 5) == [])
        #expect(l.handle(.timerFired(.duration), at: 89.5) == [], "early fire (a stale or imprecise timer) is ignored")
        #expect(l.handle(.timerFired(.duration), at: 90) == [.leave(.duration, detail: "duration of 1m30s reached")])
        #expect(l.handle(.signal(15), at: 90.1) == [], "the first cause wins")
        #expect(l.handle(.roomEnded(.left), at: 90.2) == [])
        #expect(l.ending == L.Ending(reason: .duration, exitCode: .success, detail: "duration of 1m30s reached"))
    }

    @Test func aloneTimeoutCountsPeopleOnlyAndOnlyAfterSomebodyCame() {
        var l = L(rules: Self.rules(alone: 30), recording: false)
        #expect(l.handle(.started, at: 0) == [])
        // A bot coming and going leaves no person in the room, and arms nothing.
        #expect(l.handle(.people(0), at: 1) == [])
        #expect(l.handle(.people(0), at: 2) == [])
        #expect(l.handle(.people(1), at: 3) == [])
        #expect(l.handle(.people(2), at: 4) == [])
        #expect(l.handle(.people(1), at: 10) == [])
        #expect(l.handle(.people(0), at: 11) == [.arm(.alone, seconds: 30)])
        // Bob comes back: the timer is cancelled; its late fire does nothing.
        #expect(l.handle(.people(1), at: 20) == [.cancel(.alone)])
        #expect(l.handle(.timerFired(.alone), at: 41) == [])
        #expect(l.handle(.people(0), at: 50) == [.arm(.alone, seconds: 30)])
        #expect(l.handle(.timerFired(.alone), at: 80) == [.leave(.alone, detail: "everyone else left (alone for 30s)")])
        _ = l.handle(.roomEnded(.left), at: 80.1)
        #expect(l.ending?.reason == .alone && l.ending?.exitCode == .success)
    }

    /// Room events through the bridge, and the people it counts into the lifecycle, as
    /// `RoomRun` feeds them.
    static func feed(_ l: inout L, _ bridge: inout RoomMediaBridge, _ event: RoomEvent, at t: Double) -> [L.Action] {
        _ = bridge.handle(event)
        return l.handle(.people(bridge.people.count), at: t)
    }

    @Test func aBotThatMarksItselfLateStopsBeingCompany() {
        var l = L(rules: Self.rules(alone: 10), recording: false)
        var bridge = RoomMediaBridge()
        let bot = MeetingParticipant(identity: "other-bot", sid: "PA_b", name: "Other Bot")
        var marked = bot
        marked.attributes[BotRecognition.attributeKey] = "1.0"
        _ = l.handle(.started, at: 0)
        #expect(Self.feed(&l, &bridge, .participantJoined(bot), at: 1) == [])
        #expect(Self.feed(&l, &bridge, .participantUpdated(marked, changes: .attributes), at: 1.2) == [.arm(.alone, seconds: 10)])
        #expect(l.people == 0)
        // It stays a bot whatever it changes next; nobody came back.
        #expect(Self.feed(&l, &bridge, .participantUpdated(bot, changes: .attributes), at: 2) == [])
        #expect(Self.feed(&l, &bridge, .participantLeft(bot, reason: .disconnected(.clientInitiated)), at: 3) == [])
        #expect(l.handle(.timerFired(.alone), at: 11.2) == [.leave(.alone, detail: "everyone else left (alone for 10s)")])
    }

    @Test func botsThatComeAndGoAreNobody() {
        var l = L(rules: Self.rules(alone: 10, wait: 60), recording: false)
        var bridge = RoomMediaBridge(bots: BotRecognition(namePatterns: ["*Recorder*"]))
        let recorder = MeetingParticipant(identity: "u-rec", sid: "PA_r", name: "Other Recorder")
        let alice = MeetingParticipant(identity: "u-alice", sid: "PA_a", name: "Alice")
        #expect(l.handle(.started, at: 0) == [.arm(.waitForParticipants, seconds: 60)])
        #expect(Self.feed(&l, &bridge, .participantJoined(recorder), at: 1) == [])
        #expect(Self.feed(&l, &bridge, .participantJoined(alice), at: 2) == [.cancel(.waitForParticipants)])
        #expect(Self.feed(&l, &bridge, .participantLeft(alice, reason: .disconnected(.clientInitiated)), at: 3) == [.arm(.alone, seconds: 10)])
        #expect(Self.feed(&l, &bridge, .participantLeft(recorder, reason: .disconnected(.clientInitiated)), at: 4) == [])
        // A person who comes back as a new session is company again.
        #expect(Self.feed(&l, &bridge, .participantRejoined(alice, previousSid: "PA_old"), at: 5) == [.cancel(.alone)])
    }

    @Test func aloneTimeoutZeroNeverLeaves() {
        var l = L(rules: Self.rules(alone: 0), recording: false)
        _ = l.handle(.started, at: 0)
        _ = l.handle(.people(1), at: 1)
        #expect(l.handle(.people(0), at: 2) == [])
    }

    @Test func waitForParticipantsLeavesWithFourteenWhenNobodyCame() {
        var l = L(rules: Self.rules(wait: 120), recording: true)
        #expect(l.handle(.started, at: 0) == [.arm(.waitForParticipants, seconds: 120)])
        #expect(l.handle(.people(0), at: 10) == [], "a bot is not somebody")
        #expect(l.handle(.timerFired(.waitForParticipants), at: 120) == [.leave(.nobodyCame, detail: "nobody came within 2m")])
        _ = l.handle(.roomEnded(.left), at: 120.3)
        #expect(l.ending == L.Ending(reason: .nobodyCame, exitCode: .nobodyCame, detail: "nobody came within 2m"))
        #expect(ExitCode.nobodyCame.rawValue == 14)
    }

    @Test func waitForParticipantsIsCancelledBySomebody() {
        var l = L(rules: Self.rules(wait: 120), recording: true)
        _ = l.handle(.started, at: 0)
        #expect(l.handle(.people(1), at: 30) == [.cancel(.waitForParticipants)])
        #expect(l.handle(.timerFired(.waitForParticipants), at: 120) == [])
        #expect(!l.isStopping)
    }

    @Test func signalIsACleanStop() {
        var l = L(rules: Self.rules(duration: 60, wait: 30), recording: true)
        _ = l.handle(.started, at: 0)
        #expect(l.handle(.signal(15), at: 5) == [.cancel(.duration), .cancel(.waitForParticipants), .leave(.signal, detail: "terminated (SIGTERM)")])
        #expect(l.handle(.timerFired(.duration), at: 60) == [])
        _ = l.handle(.roomEnded(.left), at: 5.1)
        #expect(l.ending == L.Ending(reason: .signal, exitCode: .success, detail: "terminated (SIGTERM)"))
        var ctrlC = L(rules: Self.rules(), recording: false)
        #expect(ctrlC.handle(.signal(2), at: 1) == [.leave(.signal, detail: "interrupted (Ctrl-C)")])
    }

    @Test func diskIsCheckedBeforeJoiningAndWhileRecording() {
        var l = L(rules: Self.rules(minFree: 200 << 20), recording: true)
        #expect(l.handle(.started, at: 0) == [.checkDisk, .arm(.diskCheck, seconds: 2)])
        #expect(l.handle(.diskFree(bytes: 5 << 30), at: 0) == [])
        #expect(l.handle(.timerFired(.diskCheck), at: 2) == [.checkDisk, .arm(.diskCheck, seconds: 2)])
        #expect(l.handle(.diskFree(bytes: 300 << 20), at: 2) == [])
        #expect(l.handle(.timerFired(.diskCheck), at: 4) == [.checkDisk, .arm(.diskCheck, seconds: 2)])
        let detail = "only 150.0 MiB free on the recording disk, below record.min_free (200.0 MiB)"
        #expect(l.handle(.diskFree(bytes: 150 << 20), at: 4) == [.cancel(.diskCheck), .leave(.diskLow, detail: detail)])
        #expect(l.handle(.timerFired(.diskCheck), at: 6) == [])
        _ = l.handle(.roomEnded(.left), at: 4.2)
        #expect(l.ending == L.Ending(reason: .diskLow, exitCode: .diskLow, detail: detail))
        #expect(ExitCode.diskLow.rawValue == 15)
    }

    @Test func aDiskAlreadyLowStopsBeforeJoining() {
        var l = L(rules: Self.rules(minFree: 1 << 20), recording: true)
        _ = l.handle(.started, at: 0)
        #expect(l.handle(.diskFree(bytes: 1000), at: 0) == [.cancel(.diskCheck), .leave(.diskLow, detail: "only 1000 bytes free on the recording disk, below record.min_free (1.0 MiB)")])
        #expect(l.isStopping)
    }

    @Test func noDiskCheckWithoutRecordingOrWithMinFreeZero() {
        var off = L(rules: Self.rules(minFree: 0), recording: true)
        #expect(off.handle(.started, at: 0) == [])
        #expect(off.handle(.diskFree(bytes: 0), at: 1) == [])
        var notRecording = L(rules: Self.rules(minFree: 1 << 30), recording: false)
        #expect(notRecording.handle(.started, at: 0) == [])
        #expect(notRecording.handle(.diskFree(bytes: 0), at: 1) == [])
    }

    @Test func aFailedWriteStops() {
        var full = L(rules: Self.rules(), recording: true)
        #expect(full.handle(.writeFailed(noSpace: true, detail: "No space left on device"), at: 3)
            == [.leave(.diskFull, detail: "the recording disk is full: No space left on device")])
        _ = full.handle(.roomEnded(.left), at: 3.1)
        #expect(full.ending?.reason == .diskFull && full.ending?.exitCode == .diskLow)
        var io = L(rules: Self.rules(), recording: true)
        #expect(io.handle(.writeFailed(noSpace: false, detail: "Input/output error"), at: 3)
            == [.leave(.writeError, detail: "a recording write failed: Input/output error")])
    }

    @Test(arguments: [
        (RoomDisconnectReason.kicked, EndReason.kicked, ExitCode.removed),
        (.roomDeleted, .roomEnded, .removed),
        (.roomClosed, .roomEnded, .removed),
        (.serverShutdown, .roomEnded, .removed),
        (.roomEnded, .roomEnded, .removed),
        (.duplicateIdentity, .replaced, .removed),
        (.joinFailure, .error, .forbidden),
        (.forbidden, .error, .forbidden),
        (.roomNotFound, .error, .notFound),
        (.protocolError, .error, .server),
        (.subscriberNotPrimary(canSubscribe: false), .error, .forbidden),
        (.network(.refused), .network, .network),
        (.network(.ice), .network, .network),
        (.notAllowed, .error, .auth),
        (.left, .left, .success),
    ])
    func theRoomEndingOnItsOwn(reason: RoomDisconnectReason, end: EndReason, code: ExitCode) {
        var l = L(rules: Self.rules(duration: 60, wait: 10), recording: true)
        _ = l.handle(.started, at: 0)
        #expect(l.handle(.roomEnded(reason), at: 3) == [.cancel(.duration), .cancel(.waitForParticipants)])
        #expect(l.ending?.reason == end && l.ending?.exitCode == code)
        #expect(l.handle(.timerFired(.waitForParticipants), at: 10) == [], "nothing after the end")
        #expect(l.handle(.signal(15), at: 11) == [])
    }

    @Test("Every disconnect reason that is not an error exits with its end reason's code: one table, one code per end reason")
    func oneExitCodePerEndReason() {
        let reasons: [RoomDisconnectReason] = [
            .left, .kicked, .roomDeleted, .roomClosed, .duplicateIdentity, .joinFailure, .serverShutdown, .notAllowed, .roomNotFound,
            .roomEnded, .forbidden, .network(.refused), .protocolError, .subscriberNotPrimary(canSubscribe: true), .server(.migration),
        ]
        var codes: [EndReason: Set<ExitCode>] = [:]
        for r in reasons { codes[EndReason(r), default: []].insert(r.exitCode) }
        for (end, set) in codes where end != .error { #expect(set == [end.exitCode], "\(end)") }
        #expect(codes[.roomEnded] == [.removed])
    }

    @Test func aKickAfterTheBotDecidedToLeaveIsStillAKick() {
        var l = L(rules: Self.rules(duration: 5), recording: true)
        _ = l.handle(.started, at: 0)
        _ = l.handle(.timerFired(.duration), at: 5)
        _ = l.handle(.roomEnded(.kicked), at: 5.1)
        #expect(l.ending?.reason == .kicked)
    }

    @Test func everyEndReasonHasItsSummaryName() {
        #expect(EndReason.allCases.map(\.rawValue) == [
            "duration", "alone", "nobody_came", "signal", "room_ended", "kicked", "replaced", "network",
            "disk_low", "disk_full", "write_error", "error", "left",
        ])
    }
}

/// `--include` / `--exclude`.
@Suite struct ParticipantFilterTests {
    @Test func nothingFilteredByDefault() {
        #expect(ParticipantFilter().records(identity: "u1", name: "Alice"))
    }

    @Test func includeByIdentityOrNameGlob() {
        let f = ParticipantFilter(include: ["Alice*", "guest-*"])
        #expect(f.records(identity: "u1", name: "Alice Martin"))
        #expect(f.records(identity: "guest-7", name: "Someone"))
        #expect(!f.records(identity: "u2", name: "Bob Chen"))
        #expect(!f.records(identity: "u3", name: ""))
    }

    @Test func excludeWinsOverInclude() {
        let f = ParticipantFilter(include: ["*"], exclude: ["Bob*", "u9"])
        #expect(f.records(identity: "u1", name: "Alice"))
        #expect(!f.records(identity: "u2", name: "Bob Chen"))
        #expect(!f.records(identity: "u9", name: "Carol"))
        #expect(!f.records(identity: "u2", name: "Bob Chen"))
    }

    @Test func anEmptyNameNeverMatchesAStar() {
        // A star matches "", but a missing name is not a name: only the identity counts then.
        let f = ParticipantFilter(exclude: ["*Martin"])
        #expect(f.records(identity: "u1", name: ""))
        #expect(!f.records(identity: "u1", name: "Alice Martin"))
    }
}

@testable import BedrudBot
import Testing

/// `RoomsOutcome` (several rooms in one process): where signals go and the process's exit code,
/// as transcripts of ``RoomsOutcome`` (no binary, no server).
@Suite struct RoomsOutcomeTests {
    typealias O = RoomsOutcome

    static func ok(_ detail: String = "duration of 5s reached", folder: String? = "/rec/a") -> O.RoomEnd {
        .init(code: .success, endReason: .duration, detail: detail, folder: folder)
    }

    static func failed(_ code: ExitCode, _ detail: String) -> O.RoomEnd {
        .init(code: code, endReason: nil, detail: detail, folder: nil)
    }

    @Test func everyRoomSucceedingExitsZeroOnceTheLastFinishes() {
        var o = O(labels: ["a", "b"])
        #expect(o.handle(.ready("a")) == [])
        #expect(o.handle(.ready("b")) == [])
        #expect(o.handle(.finished("b", Self.ok())) == [], "a is still recording")
        #expect(!o.isFinished)
        #expect(o.handle(.finished("a", Self.ok())) == [
            .finish(code: .success, line: "2 rooms finished: a (duration of 5s reached), b (duration of 5s reached)"),
        ])
        #expect(o.isFinished)
    }

    @Test func aFailingRoomDoesNotStopTheOthersAndMixedEndsExit16() {
        var o = O(labels: ["standup", "nosuch"])
        #expect(o.handle(.ready("standup")) == [])
        // The room that does not exist fails first: nothing is done to the other.
        #expect(o.handle(.finished("nosuch", Self.failed(.notFound, "Room not found"))) == [])
        #expect(o.handle(.finished("standup", Self.ok())) == [
            .finish(code: .roomsFailed, line: "1 of 2 rooms failed: nosuch (exit 5: Room not found); finished: standup (duration of 5s reached)"),
        ])
        #expect(ExitCode.roomsFailed.rawValue == 16)
    }

    @Test func allFailingAlikeExitWithTheirSharedCode() {
        #expect(O.exitCode([.notFound, .notFound, .notFound]) == .notFound)
        #expect(O.exitCode([.nobodyCame, .nobodyCame]) == .nobodyCame)
        #expect(O.exitCode([.notFound, .forbidden]) == .roomsFailed, "failing differently")
        #expect(O.exitCode([.success, .success, .success]) == .success)
        #expect(O.exitCode([.success, .diskLow]) == .roomsFailed)
        #expect(O.exitCode([.diskLow]) == .diskLow, "one room: its own code")
        var o = O(labels: ["a", "b"])
        _ = o.handle(.finished("a", Self.failed(.notFound, "Room not found")))
        #expect(o.handle(.finished("b", Self.failed(.notFound, "Room not found"))) == [
            .finish(code: .notFound, line: "2 of 2 rooms failed: a (exit 5: Room not found), b (exit 5: Room not found)"),
        ])
    }

    @Test func aSignalStopsEveryRunningRoomAndLaterOnesWhenTheyAreReady() {
        var o = O(labels: ["a", "b", "c"])
        _ = o.handle(.ready("a"))
        _ = o.handle(.ready("b"))
        _ = o.handle(.finished("b", Self.failed(.forbidden, "room is full")))
        // SIGTERM: a (running) stops; b is done; c is still asking for its token.
        #expect(o.handle(.signal(15)) == [.stop("a", signal: 15)])
        #expect(o.signal == 15)
        #expect(o.handle(.signal(2)) == [], "a second signal is the watcher's (exit 130), not forwarded")
        #expect(o.handle(.ready("c")) == [.stop("c", signal: 15)], "c stops as soon as it can take the signal")
        #expect(o.handle(.ready("c")) == [], "ready once")
        _ = o.handle(.finished("a", .init(code: .success, endReason: .signal, detail: "terminated (SIGTERM)", folder: "/rec/a")))
        #expect(o.handle(.finished("c", .init(code: .success, endReason: .signal, detail: "terminated (SIGTERM)", folder: "/rec/c"))) == [
            .finish(code: .roomsFailed, line: "1 of 3 rooms failed: b (exit 6: room is full); finished: a (terminated (SIGTERM)), c (terminated (SIGTERM))"),
        ])
    }

    @Test func hangupRotatesTheRoomsStillRecording() {
        var o = O(labels: ["a", "b", "c"])
        _ = o.handle(.ready("a"))
        _ = o.handle(.ready("c"))
        _ = o.handle(.finished("a", Self.ok()))
        #expect(o.handle(.hangup) == [.rotate("c")])
    }

    @Test func unknownAndRepeatedInputsAreIgnored() {
        var o = O(labels: ["a"])
        #expect(o.handle(.ready("zz")) == [])
        #expect(o.handle(.finished("zz", Self.ok())) == [])
        #expect(o.handle(.finished("a", Self.ok())).count == 1)
        #expect(o.handle(.finished("a", Self.failed(.network, "x"))) == [], "the first end counts")
        #expect(o.exitCode == .success)
        #expect(o.handle(.ready("a")) == [], "a finished room takes no signals")
    }

    @Test func labelsAreRoomNamesMadeUnique() {
        #expect(O.labels(["standup", "retro"]) == ["standup", "retro"])
        #expect(O.labels(["standup", "standup", "standup-2", "standup"]) == ["standup", "standup-2", "standup-2-2", "standup-3"])
    }
}

@testable import BedrudBot
import BedrudCore
import BedrudMedia
import Testing

/// `RoomRunPlan` and `RoomRunEnding`: what a run decides, as transcripts — the options and
/// what happened in, the pipeline's settings, the finishing steps and the exit code out —
/// with no room, no files and no server.
@Suite struct RoomRunPlanTests {
    typealias Step = RoomRunPlan.FinishStep

    static func options(record: Bool = true, json: Bool = false, onFinish: String? = nil, mix: Bool = true) -> RoomRunOptions {
        var o = RoomRunOptions()
        o.record = record
        o.json = json
        o.onFinish = onFinish
        o.media.mix = mix
        return o
    }

    // MARK: - Before the room

    @Test func theOptionsPipelineSettingsPassWholeWithWhatOnlyTheRunKnows() {
        var o = Self.options()
        o.media.mixCoder = .voice
        o.media.mixBitrate = 32000
        o.media.jitterWaitMillis = 80
        o.media.alignToSession = true
        let pc = RoomRunPlan(o).pipeline(room: "standup", startUnixNanos: 1_000, liveView: false, logRoom: "standup")
        #expect(pc.mixCoder == .voice && pc.mixBitrate == 32000 && pc.jitterWaitMillis == 80 && pc.alignToSession)
        #expect(pc.room == "standup" && pc.sessionStartUnixNanos == 1_000 && pc.logRoom == "standup")
        #expect(pc.decode && pc.mix)
    }

    @Test func onlyARecordingWritesTheMix() {
        #expect(!RoomRunPlan(Self.options(record: false, json: true)).pipeline(room: "r", startUnixNanos: 0, liveView: false, logRoom: nil).mix)
        #expect(!RoomRunPlan(Self.options(mix: false)).pipeline(room: "r", startUnixNanos: 0, liveView: false, logRoom: nil).mix)
    }

    /// Decoding feeds the recording, the JSON lines' speech events and the live view; a
    /// join with none of them only keeps the connection.
    @Test(arguments: [(false, false, false, false), (true, false, false, true), (false, true, false, true), (false, false, true, true)])
    func decodingIsForWhatUsesIt(record: Bool, json: Bool, liveView: Bool, decodes: Bool) {
        #expect(RoomRunPlan(Self.options(record: record, json: json)).decodes(liveView: liveView) == decodes)
    }

    // MARK: - Finishing

    @Test func aRecordingFinishesItsFilesThenReleasesTheFolder() {
        #expect(RoomRunPlan(Self.options()).finishing
                == [.writeTranscript, .writeSummary(onFinishPending: nil), .writeReport, .listFiles, .releaseFolder])
    }

    /// on_finish runs last, on a released folder, and the summary it reads already names it.
    @Test func onFinishRunsLastOnTheFinishedFolder() {
        #expect(RoomRunPlan(Self.options(onFinish: "upload")).finishing
                == [.writeTranscript, .writeSummary(onFinishPending: "upload"), .writeReport, .listFiles, .releaseFolder, .runOnFinish("upload")])
    }

    // MARK: - The ending

    @Test func aStopTheLifecycleDecidedIsASuccessInItsWords() {
        let stop = SessionLifecycle.Ending(reason: .duration, exitCode: .success, detail: "duration of 1m30s reached")
        var e = RoomRunEnding(room: .left, lifecycle: stop)
        #expect(e.lifecycleWords == "duration of 1m30s reached")
        e.finalLine("duration of 1m30s reached")
        #expect(e.failure == nil)
        #expect(e.code == .success)
        #expect(e.leftLine == "Left the room: duration of 1m30s reached.")
    }

    @Test func aPlainLeaveSaysItLeftTheRoom() {
        let e = RoomRunEnding(room: .left, lifecycle: nil)
        #expect(e.lifecycle == SessionLifecycle.Ending(reason: .left, exitCode: .success, detail: RoomEventFormatter.explain(.left)))
        #expect(e.lifecycleWords == "left the room")
    }

    @Test func theRoomEndingTheRunIsItsFailureInTheSessionsWords() {
        var e = RoomRunEnding(room: .kicked, lifecycle: nil)
        #expect(e.code == .removed)
        e.finalLine("removed from the room by a moderator")
        #expect(e.failure?.code == .removed)
        #expect(e.failure?.description == "removed from the room by a moderator")
    }

    /// A full disk's line says what became of the files; its code is the lifecycle's.
    @Test func aFullDiskReplacesTheLineNotTheCode() {
        let stop = SessionLifecycle.Ending(reason: .diskFull, exitCode: .diskLow, detail: "the disk is full")
        var e = RoomRunEnding(room: .left, lifecycle: stop)
        e.finalLine("the disk is full")
        e.diskFull(nil)
        #expect(e.message == "the disk is full")
        e.diskFull("the disk is full: ENOSPC; every file was finished")
        #expect(e.failure?.code == .diskLow)
        #expect(e.failure?.description == "the disk is full: ENOSPC; every file was finished")
    }

    /// A session file that cannot be written turns a success into exit 15 with its error;
    /// a run that already failed keeps its own code and words.
    @Test func anUnwrittenSessionFileOverridesOnlyASuccess() {
        var ok = RoomRunEnding(room: .left, lifecycle: SessionLifecycle.Ending(reason: .signal, exitCode: .success, detail: "interrupted (SIGINT)"))
        ok.sessionFileFailed("cannot write summary.json: No space left on device")
        #expect(ok.code == .diskLow && ok.message == "cannot write summary.json: No space left on device")
        ok.sessionFileFailed("cannot write transcript.vtt: I/O error")
        #expect(ok.message == "cannot write summary.json: No space left on device", "the first failure is the one said")

        var kicked = RoomRunEnding(room: .kicked, lifecycle: nil)
        kicked.finalLine("removed from the room by a moderator")
        kicked.sessionFileFailed("cannot write summary.json: No space left on device")
        #expect(kicked.code == .removed && kicked.message == "removed from the room by a moderator")
    }

    /// The room's own end stays the ending's reason: what serve and several rooms report.
    @Test func theReasonIsTheLifecyclesOrTheRooms() {
        #expect(RoomRunEnding(room: .roomDeleted, lifecycle: nil).lifecycle.reason == .roomEnded)
        let stop = SessionLifecycle.Ending(reason: .alone, exitCode: .success, detail: "alone for 1m")
        #expect(RoomRunEnding(room: .left, lifecycle: stop).lifecycle.reason == .alone)
        #expect(RoomRunEnding(room: .notAllowed, lifecycle: nil).lifecycleWords == RoomEventFormatter.explain(.notAllowed))
    }
}

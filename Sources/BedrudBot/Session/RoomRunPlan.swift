import BedrudCore
import BedrudMedia

/// The decisions of a ``RoomRun``, as a pure value: what the media pipeline is told, what
/// is finished in which order once the room has ended, and which exit code and final line
/// the run ends with. ``RoomRun`` is the shell that carries them out; this value does no
/// I/O, so its tests read as transcripts (facts in, decisions out).
struct RoomRunPlan: Sendable {
    /// `--record`: a session folder is written.
    var record: Bool
    /// `--json`: the room's events go to stdout as JSON lines.
    var json: Bool
    /// `on_finish`: the command run with the finished folder.
    var onFinish: String?
    /// The pipeline settings as the options give them (``RoomRunOptions/media``).
    var media: MediaPipelineConfig

    init(_ options: RoomRunOptions) {
        record = options.record
        json = options.json
        onFinish = options.onFinish
        media = options.media
    }

    // MARK: - Before the room

    /// Whether the run decodes what it receives. Decoding feeds the mix, the speech detector
    /// (`speaking_turn` events and `speaking_ms`) and the live view's meters; a run with
    /// none of them (`join` without `--record` or `--json`, its stdout not a live terminal)
    /// only keeps the connection, and decoding every track would be all of its CPU.
    func decodes(liveView: Bool) -> Bool { record || json || liveView }

    /// The pipeline's settings for this run: the options' own, with what only the run
    /// knows. `room.opus` is written only by a recording.
    func pipeline(room: String, startUnixNanos: Int64, liveView: Bool, logRoom: String?) -> MediaPipelineConfig {
        var pc = media
        pc.decode = decodes(liveView: liveView)
        pc.room = room
        pc.sessionStartUnixNanos = startUnixNanos
        pc.mix = record && media.mix
        // With several rooms in one process the lower layers' lines say which room (nil: one room).
        pc.logRoom = logRoom
        return pc
    }

    // MARK: - After the room

    /// One step of finishing a recorded session's folder, in the order ``finishing`` gives.
    enum FinishStep: Sendable, Equatable {
        /// Write `transcript.vtt`.
        case writeTranscript
        /// Write `summary.json`; `onFinishPending` is the `on_finish` command about to run
        /// (its `exit_code` null in the copy the command reads).
        case writeSummary(onFinishPending: String?)
        /// Write the HTML report.
        case writeReport
        /// Say which files the folder holds.
        case listFiles
        /// Release the folder (its lock): the files are final.
        case releaseFolder
        /// Run `on_finish` with the folder, then replace `summary.json` with its result.
        case runOnFinish(String)
    }

    /// What is done to a recording's folder, in order, once the media is finished: the
    /// session's files, then the folder is released, then `on_finish` runs on the result.
    var finishing: [FinishStep] {
        let steps: [FinishStep] = [.writeTranscript, .writeSummary(onFinishPending: onFinish), .writeReport, .listFiles, .releaseFolder]
        return steps + (onFinish.map { [.runOnFinish($0)] } ?? [])
    }
}

/// How a run ends, decided from what happened, in the order it is learned: the room's end
/// and the lifecycle's stop cause, the session's final line, a full disk, session files that
/// could not be written. One owner for the exit code and the line that says it.
struct RoomRunEnding: Sendable, Equatable {
    /// The lifecycle's ending (or the room's, when the lifecycle decided nothing).
    let lifecycle: SessionLifecycle.Ending
    /// How the room finished for the bot.
    let room: RoomDisconnectReason
    private(set) var code: ExitCode
    private(set) var message: String

    /// The room finished with `room`; `lifecycle` is the stop cause the lifecycle decided, if any.
    init(room: RoomDisconnectReason, lifecycle: SessionLifecycle.Ending?) {
        self.room = room
        self.lifecycle = lifecycle ?? SessionLifecycle.ending(room, stop: nil)
        code = self.lifecycle.exitCode
        message = self.lifecycle.detail
    }

    /// What the session's final line says where the room did not explain the end itself:
    /// the lifecycle's words where it stopped the run; the room's where the room ended it.
    var lifecycleWords: String {
        room == .notAllowed || lifecycle.reason != .left ? lifecycle.detail : "left the room"
    }

    /// The session's final line (``RoomSession/finalLine(_:otherwise:)``).
    mutating func finalLine(_ line: String) { message = line }

    /// A full disk: its line also says whether every file could be finished.
    mutating func diskFull(_ line: String?) {
        if let line { message = line }
    }

    /// A session file (`transcript.vtt`, `summary.json`) could not be written: the
    /// session's files are not all finished, which is not a success.
    mutating func sessionFileFailed(_ error: String) {
        if code == .success { (code, message) = (.diskLow, error) }
    }

    /// The failure the run ends with; nil for a success (which says ``leftLine``).
    var failure: CommandFailure? { code == .success ? nil : CommandFailure(code, message) }

    /// The last line of a successful run.
    var leftLine: String { "Left the room: \(message)." }
}

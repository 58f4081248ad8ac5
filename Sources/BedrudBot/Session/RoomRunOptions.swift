import BedrudCore
import BedrudMedia
import Glibc

/// What a `join` run should do once in the room. Every default is the settings table's
/// (``Settings/Record``); `join` reads each setting through the config.
///
/// The settings the lifecycle and the media pipeline use are their own values (``rules``,
/// ``media``), held here and handed on whole: a new rule or pipeline setting is added once.
struct RoomRunOptions: Sendable {
    var record = false
    var outputDir = "recordings"
    var pathTemplate = Settings.Record.pathTemplate.builtIn
    /// When to leave and when to rotate the files: `--duration`, `--alone-timeout`,
    /// `--wait-for-participants`, `record.min_free`, `--split`, `--split-size`.
    var rules = SessionLifecycle.Rules()
    /// The media pipeline's settings: the mix, the jitter waits, `--align`. The run adds
    /// what only it knows (the room, the start time, whether to decode, the log's room
    /// label) and writes `room.opus` only when recording.
    var media = MediaPipelineConfig()
    /// Seconds a lost connection is retried (record.max_outage); 0 = the resume schedule only.
    var maxOutage = Settings.Record.maxOutage.builtIn
    var showStats = false
    /// `--json`: room events as JSON lines on stdout (the objects of events.jsonl) instead of text.
    var json = false
    /// Seconds between the `--stats` lines.
    var statsIntervalSeconds = Self.statsInterval
    /// Permissions of recorded files and of the folders made for them (meetings are private).
    var fileMode = Settings.Record.fileMode.builtIn
    var directoryMode = Settings.Record.dirMode.builtIn
    /// Other participants that are bots, not people (see ``BotRecognition``).
    var bots = BotRecognition()
    /// `on_finish`: run with the finished folder.
    var onFinish: String?
    var onFinishTimeout = Settings.Record.onFinishTimeout.builtIn
    /// `--include` / `--exclude`: who is recorded.
    var filter = ParticipantFilter()
    /// Several rooms in one process (``MultiRoomRun``): the shared media threads, and the
    /// link the process's signals come through (nil: a thread and a watcher of its own).
    var pool: MediaThreadPool?
    var signalLink: RoomSignalLink?
    /// Ended meetings, missing rooms, rooms that forbid recording (``RoomEntry``).
    var entry = RoomEntry.Rules()
    /// With `record`: the chat posted once the bot is in the room (`record.announce`);
    /// nil posts nothing.
    var announce: String? = Settings.Record.announce.builtIn
    /// Whether this run posts the notice: only a recording tells the room.
    var announces: Bool { record && announce != nil }

    /// Seconds between two `--stats` lines (`join --help` says it).
    static let statsInterval: Double = 5
}

import BedrudMedia
import BedrudProtocol
import FoundationEssentials

/// One audio file of the session as the page shows it.
struct ReportFile: Equatable, Sendable {
    var name: String
    var bytes: Int64
    /// `verify`'s result: nil when the file could not be read at all.
    var valid: Bool?
    var problems: [String] = []
    /// Playable duration from the file itself (granule positions).
    var durationMs: Double?
    /// The participant (`PARTICIPANT_IDENTITY` tag); nil for the room mix.
    var identity: String?
    /// Where the file starts on the session timeline.
    var startOffsetMs: Int64 = 0
    /// The level strip: kept by the recording as it went, or decoded from the file.
    var levels: AudioLevels?
}

/// Everything ``ReportPage`` renders; built by ``SessionReport`` from a session folder.
struct ReportInput {
    /// nil when the folder has no readable summary.json (the page falls back on the events).
    var summary: SessionSummary?
    /// events.jsonl in file order.
    var events: [TranscriptLine]
    var unreadableEventLines = 0
    var files: [ReportFile]
    /// Other files of the folder (transcript, summary, attachments), relative paths and sizes.
    var otherFiles: [(path: String, bytes: Int64)] = []
    /// `*.part` files left behind (a crash not yet repaired).
    var leftoverParts: [String] = []
    var instance: String?
    /// The viewer's local UTC offset at the session start, for wall-clock times.
    var utcOffsetSeconds: Int = 0
    /// Relative paths that exist in the folder (attachments are shown only if they do).
    var existingPaths: Set<String> = []
}

import BedrudMedia
import BedrudProtocol
import FoundationEssentials

/// One line of `events.jsonl`, decoded tolerantly: its type, offset and every other key as
/// it was. A line of a type the page does not know is still an event (shown generically).
struct ReportEvent: Equatable, Sendable {
    var type: String
    var offsetMs: Int64
    var fields: [String: JSONValue]

    /// Decodes one line; nil for a line that is not a JSON object with a `type` (the cut-off
    /// last line a crash leaves).
    init?(line: Substring) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)), let o = value.object,
              let type = o["type"]?.string else { return nil }
        self.type = type
        offsetMs = ReportEvent.int64(o["offset_ms"]) ?? 0
        fields = o
    }

    init(type: String, offsetMs: Int64, fields: [String: JSONValue] = [:]) {
        self.type = type
        self.offsetMs = offsetMs
        self.fields = fields
    }

    /// Every line of an `events.jsonl` text that decodes, in file order, and how many did not.
    static func parse(_ text: String) -> (events: [ReportEvent], unreadable: Int) {
        var events: [ReportEvent] = []
        var bad = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let e = ReportEvent(line: line) { events.append(e) } else { bad += 1 }
        }
        return (events, bad)
    }

    static func int64(_ v: JSONValue?) -> Int64? {
        guard let d = v?.number, d.isFinite, abs(d) < 9e15 else { return nil }
        return Int64(d.rounded())
    }

    func string(_ key: String) -> String? { fields[key]?.string }
    func int64(_ key: String) -> Int64? { Self.int64(fields[key]) }

    /// The participant's identity: `participant` is `{identity, name}`, or (before issue 11)
    /// a bare identity string.
    var identity: String? {
        if let s = fields["participant"]?.string { return s }
        return fields["participant"]?.object?["identity"]?.string
    }

    /// The non-empty display name the line carries, if any.
    var name: String? {
        let n = fields["participant"]?.object?["name"]?.string ?? fields["name"]?.string
        return (n?.isEmpty ?? true) ? nil : n
    }
}

/// `summary.json` read tolerantly: a finished session's and `repair`'s shapes, and any
/// future one; a missing or mistyped field is nil.
struct ReportSummary: Equatable, Sendable {
    struct Participant: Equatable, Sendable {
        var identity: String
        var name: String
        var file: String?
        var startOffsetMs: Int64?
        var durationMs: Int64?
        var speakingMs: Int64?
        /// Counters by their summary.json key (`packets`, `lost`, `late`, …).
        var counts: [String: Int64]
        var gapsMs: [String: Int64]
    }
    struct NetworkTrack: Equatable, Sendable {
        var participant: String?
        var ssrc: Int64?
        var packets: Int64?
        var lost: Int64?
        var jitterMs: Double?
        var nacked: Int64?
        var recovered: Int64?
    }

    var room: String?
    var server: String?
    var started: String?
    var ended: String?
    var durationMs: Int64?
    var endReason: String?
    var exitCode: Int64?
    var message: String?
    var participants: [Participant] = []
    var reconnects: Int64?
    var chatMessages: Int64?
    var srtpProfile: String?
    var selectedPair: String?
    var networkTracks: [NetworkTrack] = []

    init() {}

    init(json: JSONValue) {
        guard let o = json.object else { return }
        let i = { (v: JSONValue?) in ReportEvent.int64(v) }
        room = o["room"]?.string
        server = o["server"]?.string
        started = o["started"]?.string
        ended = o["ended"]?.string
        durationMs = i(o["duration_ms"])
        endReason = o["end_reason"]?.string
        exitCode = i(o["exit_code"])
        message = o["message"]?.string
        reconnects = i(o["reconnects"])
        chatMessages = i(o["chat_messages"])
        for p in o["participants"]?.array ?? [] {
            guard let po = p.object, let id = po["identity"]?.string else { continue }
            var counts: [String: Int64] = [:]
            for key in ["packets", "lost", "late", "duplicates", "fec_recovered", "concealed_ms", "mix_late", "mix_concealed_ms"] {
                if let v = i(po[key]) { counts[key] = v }
            }
            var gaps: [String: Int64] = [:]
            for (k, v) in po["gaps_ms"]?.object ?? [:] { if let n = i(v) { gaps[k] = n } }
            participants.append(Participant(identity: id, name: po["name"]?.string ?? "", file: po["file"]?.string,
                                            startOffsetMs: i(po["start_offset_ms"]), durationMs: i(po["duration_ms"]),
                                            speakingMs: i(po["speaking_ms"]), counts: counts, gapsMs: gaps))
        }
        if let n = o["network"]?.object {
            srtpProfile = n["srtp_profile"]?.string
            selectedPair = n["selected_pair"]?.string
            for t in n["tracks"]?.array ?? [] {
                guard let to = t.object else { continue }
                networkTracks.append(NetworkTrack(participant: to["participant"]?.string, ssrc: i(to["ssrc"]), packets: i(to["packets"]),
                                                  lost: i(to["lost"]), jitterMs: to["jitter_ms"]?.number, nacked: i(to["nacked"]),
                                                  recovered: i(to["recovered"])))
            }
        }
    }
}

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
struct ReportInput: Sendable {
    var summary: ReportSummary
    var events: [ReportEvent]
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

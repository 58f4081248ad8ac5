import BedrudMedia
import BedrudProtocol

// MARK: - The summary of a live session, from values

extension SessionSummary {
    /// What the media events tell the summary, kept as they arrive: every file start (in
    /// order, with whether it begins a new recording or continues a rotated one) and every
    /// speaking turn. A value: the run's media task feeds it, the summary reads it.
    struct MediaLog: Sendable, Equatable {
        struct FileStart: Sendable, Equatable {
            var identity: String
            var output: RecordingOutput
            var startMs: Int64
            /// False for segment 2, 3, … of a rotated output (a `fileRotated` came first).
            var beginsRecording: Bool
        }
        struct Turn: Sendable, Equatable {
            var identity: String
            var startMs: Int64
            var endMs: Int64
        }
        private(set) var fileStarts: [FileStart] = []
        private(set) var turns: [Turn] = []
        /// Outputs whose next `fileStarted` is a segment of the file before.
        private var rotating: Set<RecordingOutput> = []

        init() {}

        mutating func handle(_ event: MediaEvent) {
            switch event {
            case .fileStarted(let identity, let output, let start):
                fileStarts.append(FileStart(identity: identity, output: output, startMs: start, beginsRecording: rotating.remove(output) == nil))
            case .fileRotated(_, let output, _, _, _):
                rotating.insert(output)
            case .speakingTurn(let identity, let start, let end):
                turns.append(Turn(identity: identity, startMs: start, endMs: end))
            case .fileFinished, .gap, .warning:
                break
            }
        }
    }

    /// Everything a finished live session knows that its summary says, as values: the
    /// run gathers them, ``SessionSummary/init(_:)`` decides what is written.
    struct Facts {
        var room: String
        var server: String
        var startUnixNanos: Int64
        var durationMs: Int64
        var endReason: EndReason
        var exitCode: Int
        var message: String
        /// Identity → the last display name seen.
        var names: [String: String]
        var media: MediaStats
        var log: MediaLog
        /// Every file each output was given, in order (``SessionFolder/madePaths``).
        var madePaths: [RecordingOutput: [String]]
        /// The names in the session folder when the summary is written.
        var folderFiles: [String]
        var reconnects: Int
        var reconnectAttempts = 0
        var chatMessages: Int
        var chat: ChatAssembler.Stats
        var network: Network?
    }

    /// The summary of a live session. One entry per recording of a participant: a
    /// participant who came back as a new session after a rejoin has one per file, each
    /// with its own `file`, `start_offset_ms`, `speaking_ms` and the counters of the
    /// session that wrote it; a rotated file stays one entry (its first file, all its
    /// segments' duration).
    init(_ f: Facts) {
        self.init(
            room: Nullable(f.room), server: Nullable(f.server), started: Nullable(TranscriptWriter.iso(f.startUnixNanos)),
            ended: Nullable(TranscriptWriter.iso(f.startUnixNanos + f.durationMs * 1_000_000)), durationMs: f.durationMs,
            endReason: f.endReason.rawValue, exitCode: Nullable(f.exitCode), message: f.message,
            participants: Self.participants(f), files: Set(f.folderFiles.filter { !$0.hasSuffix(".part") } + ["summary.json"]).sorted(),
            roomFile: Nullable(f.madePaths[.room]?.first.map { PathText.lastComponent($0) }),
            reconnects: f.reconnects, reconnectAttempts: f.reconnectAttempts, chatMessages: f.chatMessages, chat: Nullable(Chat(f.chat)),
            network: Nullable(f.network), onFinish: Nullable(nil))
    }

    /// One recording of one identity: where its file starts and the name of its first file.
    private struct Recording {
        var startMs: Int64
        var file: String?
    }

    private static func recordings(_ f: Facts) -> [String: [Recording]] {
        var out: [String: [Recording]] = [:]
        var used: [RecordingOutput: Int] = [:]
        for s in f.log.fileStarts where !s.identity.isEmpty {
            let n = used[s.output, default: 0]
            used[s.output] = n + 1
            guard s.beginsRecording else { continue }
            let made = f.madePaths[s.output] ?? []
            out[s.identity, default: []].append(Recording(startMs: s.startMs, file: n < made.count ? PathText.lastComponent(made[n]) : nil))
        }
        return out
    }

    private static func participants(_ f: Facts) -> [Participant] {
        let recordings = recordings(f)
        var taken: [String: Int] = [:]
        var out: [Participant] = []
        func speaking(_ identity: String, recording n: Int) -> Int64 {
            // A recording's turns run from its start to the next recording's start; the first
            // and the last are open-ended, so one recording has every turn of its identity.
            let list = recordings[identity] ?? []
            let from = n == 0 ? Int64.min : list[n].startMs
            let to = n + 1 < list.count ? list[n + 1].startMs : Int64.max
            return f.log.turns.filter { $0.identity == identity }.reduce(Int64(0)) { $0 + max(0, min($1.endMs, to) - max($1.startMs, from)) }
        }
        for p in f.media.participants {
            // The engine keeps one entry per session of a participant, in the order they came;
            // those that received audio wrote the recordings, in the same order.
            let hasFile = p.packets > 0 || p.fileDurationMillis > 0
            let n = taken[p.identity, default: 0]
            let recording = hasFile && n < (recordings[p.identity]?.count ?? 0) ? recordings[p.identity]?[n] : nil
            if recording != nil { taken[p.identity] = n + 1 }
            out.append(Participant(
                identity: p.identity, name: f.names[p.identity] ?? "", file: Nullable(recording?.file),
                startOffsetMs: Nullable(recording?.startMs), durationMs: Nullable(p.fileDurationMillis),
                speakingMs: recording != nil ? speaking(p.identity, recording: n) : (recordings[p.identity] ?? []).isEmpty ? speaking(p.identity, recording: 0) : 0,
                packets: Nullable(p.packets), lost: Nullable(p.lost), late: Nullable(p.late), duplicates: Nullable(p.duplicates),
                fecRecovered: Nullable(p.fecRecovered), concealedMs: Nullable(p.concealedMillis),
                gapsMs: Dictionary(uniqueKeysWithValues: p.gapMillis.map { ($0.key.rawValue, $0.value) }),
                mixLate: Nullable(p.mixLate), mixConcealedMs: Nullable(p.mixConcealedMillis),
                dropped: Nullable(p.overlapDropped + p.corrupt + p.ringDropped)))
        }
        return out
    }
}

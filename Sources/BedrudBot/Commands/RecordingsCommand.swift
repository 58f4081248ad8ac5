import BedrudMedia
import BedrudProtocol
import FoundationEssentials
import Glibc

/// `recordings [ROOM]`: the session folders under the output directory, newest first.
enum RecordingsCommand {
    static let spec = CommandSpec(
        "recordings", summary: "list recorded sessions, newest first: date, room, length, people, how it ended, size, problems",
        discussion: """
            Looks for session folders (folders with events.jsonl) under the output directory
            (--output, else record.output_dir, else ~/.local/share/bedrud-bot/recordings) and
            lists them newest first, each with the path of its report.html. Every .opus file is
            verified (as 'verify' does, without decoding); a failed check, a .part file left by a
            crash, or a missing summary.json is a problem. A folder still being recorded says so.

            Exit status: 0 (also when there is nothing to list), 5 when the output directory
            does not exist.

            Examples:
              bedrud-bot recordings
              bedrud-bot recordings standup --json | jq -r '.[0].report'
            """,
        arguments: [ArgumentSpec("ROOM", optional: true, help: "Only sessions of this room.")],
        options: OptionGroups.recordingsRoot + [
            Options.limit.spec,
            Options.json.spec,
        ],
        action: run)

    /// Declared once: the spec lists them and the command reads them through these.
    enum Options {
        static let limit = ValueOption("limit", value: "N", help: "List at most N sessions (default: all).")
        static let json = Flag("json", help: "Print a JSON array, one object per session.")
    }

    /// One session folder as listed (also the `--json` shape).
    struct Entry: Encodable, Equatable {
        var folder: String
        /// `report.html`'s path, or nil when the folder has none (older or unrepaired).
        @Nullable var report: String?
        @Nullable var room: String?
        @Nullable var started: String?
        @Nullable var durationMs: Int64?
        var people: Int
        /// summary.json's `end_reason`; `recording` while a bot holds the folder; `unfinished`
        /// for a crashed session not yet repaired.
        var endReason: String
        var bytes: Int64
        var problems: [String]

        enum CodingKeys: String, CodingKey {
            case folder, report, room, started, people, bytes, problems
            case durationMs = "duration_ms", endReason = "end_reason"
        }
    }

    // MARK: - Pure: one folder's contents → an entry

    /// The listing of one session folder; `busy` when a bot holds its lock (being recorded).
    static func entry(_ f: SessionFolder.Contents, busy: Bool) -> Entry {
        let sessionStarted = f.lines.first { $0.event?.type == .sessionStarted }
        let started = f.summary?.started.value ?? sessionStarted?.time
        let room = f.summary?.room.value ?? sessionStarted.flatMap { if case .sessionStarted(let e) = $0.event { e.room.text } else { nil } }
        var people = Set<String>()
        for line in f.lines { if case .participantJoined(let e) = line.event { people.insert(e.participant.identity.text) } }
        for p in f.summary?.participants ?? [] { people.insert(p.identity) }
        let ended = f.lines.lazy.compactMap { if case .sessionEnded(let e) = $0.event { e } else { nil } }.last
        let lastMs = f.lines.map { line in
            if case .speakingTurn(let t) = line.event { max(line.offsetMs, t.endMs) } else { line.offsetMs }
        }.max()
        let duration = f.summary?.durationMs ?? ended?.durationMs ?? lastMs
        let names = Set(f.files.map(\.name))
        var problems: [String] = []
        let parts = f.files.map(\.name).filter { $0.hasSuffix(".part") }.sorted()
        if !busy {
            if !parts.isEmpty { problems.append(".part left: " + parts.joined(separator: ", ") + " (run: bedrud-bot repair \(f.path))") }
            if f.summary == nil { problems.append("no summary.json") }
        }
        for a in f.audio {
            let p = a.verified?.problems ?? ["cannot be read"]
            guard !p.isEmpty else { continue }
            problems.append("verify \(a.name): \(p.first ?? "")" + (p.count > 1 ? " (+\(p.count - 1) more)" : ""))
        }
        // (A summary from elsewhere may lack `end_reason`: empty is taken as absent.)
        let reason = busy ? "recording" : f.summary.flatMap { $0.endReason.isEmpty ? nil : $0.endReason } ?? "unfinished"
        return Entry(folder: f.path, report: names.contains(SessionReport.fileName) ? f.path + "/" + SessionReport.fileName : nil,
                     room: room, started: started, durationMs: duration, people: people.count, endReason: reason,
                     bytes: f.files.reduce(0) { $0 + $1.bytes }, problems: problems)
    }

    /// Newest first (by start time; folders without one last, by path).
    static func sorted(_ entries: [Entry]) -> [Entry] {
        entries.sorted { a, b in
            let ta = a.started.flatMap(ReportFormat.unixMs(iso:)), tb = b.started.flatMap(ReportFormat.unixMs(iso:))
            switch (ta, tb) {
            case let (x?, y?): return x != y ? x > y : a.folder > b.folder
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return a.folder > b.folder
            }
        }
    }

    // MARK: - The shell

    /// Session folders under `root`, at most `depth` levels down (a session folder is not
    /// searched further).
    static func sessionFolders(under root: String, depth: Int = 5) -> [String] {
        let fm = FileManager.default
        var isDir = false
        guard depth >= 0, fm.fileExists(atPath: root, isDirectory: &isDir), isDir else { return [] }
        if fm.fileExists(atPath: root + "/events.jsonl") { return [root] }
        guard depth > 0 else { return [] }
        return ((try? fm.contentsOfDirectory(atPath: root)) ?? []).sorted().filter { !$0.hasPrefix(".") }
            .flatMap { sessionFolders(under: root + "/" + $0, depth: depth - 1) }
    }

    /// Every session under `root`, listed, newest first.
    static func entries(under root: String) -> [Entry] {
        sorted(sessionFolders(under: root).map { entry(SessionFolder.Contents(reading: $0), busy: SessionFolder.isBusy($0)) })
    }

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let root = PathText.fixingSlashes(try ctx.config.value(Settings.Record.outputDir, flag: OptionGroups.output))
        var limit = Int.max
        if let l = inv[Options.limit] {
            guard let n = Int(l), n > 0 else { throw CommandFailure(.usage, "--limit must be a whole number of sessions, 1 or more (got '\(l)')") }
            limit = n
        }
        var isDir = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDir), isDir else {
            throw CommandFailure(.notFound, "no recordings folder at \(root) (nothing recorded yet, or a different --output / record.output_dir)")
        }
        let room = inv.positionals.first
        let entries = Array(entries(under: root).filter { room == nil || $0.room == room }.prefix(limit))
        if inv[Options.json] {
            try JSONOutput.print(entries, to: inv.console)
            return .success
        }
        if entries.isEmpty {
            inv.console.out(room.map { "No recordings of room '\($0)' under \(root)." } ?? "No recordings under \(root). Record one with: bedrud-bot join ROOM --record")
            return .success
        }
        for line in table(entries) { inv.console.out(line) }
        return .success
    }

    /// The text listing: a header, one row per session, then its report's path and problems.
    static func table(_ entries: [Entry], utcOffset: (Int64) -> Int = localOffset) -> [String] {
        let rows = entries.map { e -> [String] in
            let date = e.started.flatMap(ReportFormat.unixMs(iso:)).map { ms in
                String(ReportFormat.localTime(unixMs: ms, utcOffsetSeconds: utcOffset(ms)).prefix(16))
            } ?? "-"
            return [date, e.room ?? "-", e.durationMs.map { ReportFormat.clock(ms: $0) } ?? "-", String(e.people), e.endReason,
                    ReportFormat.bytes(e.bytes), e.problems.isEmpty ? "-" : "\(e.problems.count)"]
        }
        let head = ["DATE", "ROOM", "LENGTH", "PEOPLE", "ENDED", "SIZE", "PROBLEMS"]
        let widths = head.indices.map { i in max(head[i].count, rows.map { $0[i].count }.max() ?? 0) + 2 }
        func line(_ r: [String]) -> String { r.indices.map { $0 == r.count - 1 ? r[$0] : r[$0].padded(to: widths[$0]) }.joined() }
        var out = [line(head)]
        for (e, r) in zip(entries, rows) {
            out.append(line(r))
            out.append("  " + (e.report ?? "\(e.folder) (no report.html: bedrud-bot report \(e.folder))"))
            for p in e.problems { out.append("  problem: \(p)") }
        }
        return out
    }

    static func localOffset(_ unixMs: Int64) -> Int {
        var t = time_t(unixMs / 1000)
        var tmv = tm()
        localtime_r(&t, &tmv)
        return Int(tmv.tm_gmtoff)
    }
}

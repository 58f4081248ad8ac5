import BedrudMedia
import BedrudProtocol
import FoundationEssentials
import Glibc

/// The shell around ``ReportPage``: reads a session folder (summary.json, events.jsonl,
/// the audio files, verified, attachments) and writes
/// `report.html` into it, replacing an older one. Called when a session finishes, by
/// `repair`, and by `bedrud-bot report`.
enum SessionReport {
    static let fileName = "report.html"

    /// Builds and writes the folder's report; returns its path.
    /// - Parameter levels: the level strips the recording kept as it went, by participant
    ///   identity ("" for the room mix), when the report is written at the end of the
    ///   session. A file without one (`repair`, `bedrud-bot report` later) is decoded for it.
    @discardableResult
    static func write(folder: String, instance: String? = nil, levels: [String: LevelStrip] = [:]) throws -> String {
        try write(SessionFolder.Contents(reading: folder), instance: instance, levels: levels)
    }

    /// ``write(folder:instance:levels:)`` of a folder already read.
    @discardableResult
    static func write(_ contents: SessionFolder.Contents, instance: String? = nil, levels: [String: LevelStrip] = [:]) throws -> String {
        let folder = contents.path
        let input = try read(contents, instance: instance, levels: levels)
        var rng = SystemRandomNumberGenerator()
        let nonce = (0..<4).map { _ in String(rng.next() as UInt32, radix: 16) }.joined()
        let html = ReportPage.render(input, nonce: nonce)
        let path = folder + "/" + fileName
        var st = stat()
        let mode: mode_t = stat(folder + "/events.jsonl", &st) == 0 ? st.st_mode & 0o666 : 0o640
        do throws(AtomicFile.Failure) {
            try AtomicFile.write(html.utf8, to: path, through: path + ".part", mode: mode, replacing: true)
        } catch {
            throw CommandFailure(.failure, error.step == .place ? "cannot write \(path): \(error.reason)" : error.description)
        }
        return path
    }

    /// Everything the page shows, from the folder's files.
    static func read(_ contents: SessionFolder.Contents, instance: String?, levels: [String: LevelStrip] = [:]) throws -> ReportInput {
        guard contents.hasEvents else {
            throw CommandFailure(.notFound, "\(contents.path) is not a session folder (it has no readable events.jsonl)")
        }
        let summary = contents.summary
        var files: [ReportFile] = []
        var other: [(String, Int64)] = []
        var existing = Set<String>()
        for f in contents.files {
            existing.insert(f.name)
            if let audio = contents.audio.first(where: { $0.name == f.name }) {
                files.append(audioFile(audio, folder: contents.path, summary: summary, levels: levels))
            } else if f.name == "attachments" {
                for a in contents.attachments {
                    existing.insert(a.name)
                    other.append((a.name, a.bytes))
                }
            } else if !f.name.hasSuffix(".part") && !f.name.hasSuffix(".tmp") && f.name != fileName && !f.name.hasPrefix(".") {
                other.append((f.name, f.bytes))
            }
        }
        // The room mix first, then participants in the order they appear in the summary.
        let order = Dictionary((summary?.participants ?? []).enumerated().map { ($1.file.value ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        files.sort { a, b in
            if (a.identity == nil) != (b.identity == nil) { return a.identity == nil }
            return (order[a.name] ?? Int.max, a.name) < (order[b.name] ?? Int.max, b.name)
        }
        let startMs = summary?.started.value.flatMap(ReportFormat.unixMs(iso:))
            ?? contents.lines.first { $0.event?.type == .sessionStarted }.flatMap { ReportFormat.unixMs(iso: $0.time) } ?? 0
        var t = time_t(startMs / 1000)
        var tmv = tm()
        localtime_r(&t, &tmv)
        return ReportInput(summary: summary, events: contents.lines, unreadableEventLines: contents.unreadableLines, files: files,
                           otherFiles: other.map { (path: $0.0, bytes: $0.1) },
                           leftoverParts: contents.files.map(\.name).filter { $0.hasSuffix(".part") }, instance: instance,
                           utcOffsetSeconds: Int(tmv.tm_gmtoff), existingPaths: existing)
    }

    /// One `.opus` file: verified (as `verify` does), its participant and start from its
    /// tags (else the summary), and its level strip: the one the recording kept, else
    /// decoded from the file with libopus.
    static func audioFile(_ audio: SessionFolder.Contents.Audio, folder: String, summary: SessionSummary?, levels: [String: LevelStrip] = [:]) -> ReportFile {
        var f = ReportFile(name: audio.name, bytes: audio.bytes)
        guard let report = audio.verified else { return f }
        f.valid = report.isValid
        f.problems = report.problems
        f.durationMs = report.durationMillis
        f.identity = audio.tag("PARTICIPANT_IDENTITY").flatMap { $0.isEmpty ? nil : $0 }
        let fromSummary = summary?.participants.first { $0.file.value == audio.name }
        if f.identity == nil, let p = fromSummary { f.identity = p.identity }
        f.startOffsetMs = audio.tag("START_OFFSET_MS").flatMap { Int64($0) } ?? fromSummary?.startOffsetMs.value ?? 0
        if let strip = levels[f.identity ?? ""], report.isValid {
            f.levels = strip.levels(startMs: f.startOffsetMs, durationMs: Int64(report.durationMillis.rounded(.up)))
        } else if let data = FileManager.default.contents(atPath: folder + "/" + audio.name) {
            f.levels = try? OggOpusLevels.measure([UInt8](data))
        }
        return f
    }
}

extension SessionReport {
    /// ``write(folder:instance:)`` for the end of a session and `repair`: a page that cannot
    /// be written is logged, never a reason to fail the session (its recordings are done).
    @discardableResult
    static func writeLogged(folder: String, instance: String? = nil, levels: [String: LevelStrip] = [:]) -> String? {
        do {
            return try write(folder: folder, instance: instance, levels: levels)
        } catch {
            Logger("report").error("report.html not written: \(error)")
            return nil
        }
    }
}

extension SessionReport {
    /// ``writeLogged(folder:instance:)`` on a thread of its own: decoding a long session's
    /// files takes seconds of CPU, which must not hold a thread of the cooperative pool
    /// (other rooms of the same process are still finishing).
    @discardableResult
    static func writeOffPool(folder: String, instance: String? = nil, levels: [String: LevelStrip] = [:]) async -> String? {
        await withCheckedContinuation { (k: CheckedContinuation<String?, Never>) in
            OSThread.start(name: "bedrud-report") { k.resume(returning: writeLogged(folder: folder, instance: instance, levels: levels)) }
        }
    }
}

import BedrudMedia
import BedrudProtocol
import Dispatch
import FoundationEssentials
import Glibc

/// `repair SESSION_DIR`: finishes a whole session left behind by a crash (`kill -9`,
/// power loss). Every `*.opus.part` is repaired (``OggOpusRepair``), and `transcript.vtt`
/// and `summary.json`, which are only written at the end, are rebuilt from
/// `events.jsonl` (flushed line by line, so it survives), with `end_reason` `crashed`.
///
/// Nothing that exists is replaced or removed before its replacement is complete: the
/// rebuilt files are written under temporary names and linked into place; the empty or
/// half-written `transcript.vtt.part` / `summary.json.part` a crash leaves are removed
/// after that. A session that is already complete is left exactly as it is.
enum SessionRepair {
    /// What one file of the session contributes to the summary: read from the file
    /// itself (its last granule and its tags), not from the events.
    struct RecordedFile: Equatable {
        var name: String
        /// `PARTICIPANT_IDENTITY`; nil for `room.opus`.
        var identity: String?
        var durationMillis: Int64
        /// `START_OFFSET_MS`: where the file starts, from session start.
        var startOffsetMillis: Int64? = nil

        /// Where the file ends, from session start.
        var endMillis: Int64 { (startOffsetMillis ?? 0) + durationMillis }
    }

    /// The rebuilt summary (``SessionSummary``, every key present): what a crash makes
    /// unknowable (the exit code, packet and loss counts, chat chunk counters, the
    /// transport's figures, how writing went) is `null`; `repaired` says what repair did.
    static func emptySummary(repairedFiles: [String]) -> SessionSummary {
        SessionSummary(
            room: Nullable(nil), server: Nullable(nil), started: Nullable(nil), ended: Nullable(nil), durationMs: 0, endReason: "crashed",
            exitCode: Nullable(nil), message: "the recorder stopped without finishing (crash, kill -9 or power loss); finished by 'bedrud-bot repair'",
            participants: [], files: [], roomFile: Nullable(nil), reconnects: 0, chatMessages: 0, chat: Nullable(nil), network: Nullable(nil),
            onFinish: Nullable(nil), storage: Nullable(nil),
            repaired: SessionSummary.Repair(eventLines: 0, eventLinesUnreadable: 0, filesRepaired: repairedFiles))
    }

    // MARK: - Pure: events.jsonl and the files → transcript.vtt and summary.json

    static func rebuild(events text: String, files: [RecordedFile], repairedFiles: [String]) -> (vtt: String, summary: SessionSummary) {
        rebuild(events: TranscriptLine.read(text), files: files, repairedFiles: repairedFiles)
    }

    /// ``rebuild(events:files:repairedFiles:)`` from lines already read (``SessionFolder/Contents``).
    static func rebuild(events read: (lines: [TranscriptLine], unreadable: Int), files: [RecordedFile], repairedFiles: [String])
        -> (vtt: String, summary: SessionSummary) {
        var turns: [(identity: String, name: String, startMs: Int64, endMs: Int64)] = []
        var chats: [(offsetMs: Int64, name: String, text: String)] = []
        /// Reactions and polls: transcript.vtt's NOTE blocks, as the live writer makes them.
        var notes: [(offsetMs: Int64, text: String)] = []
        var inOutage = false
        var gaps: [(identity: String, startMs: Int64, durationMs: Int64, cause: String)] = []
        var names: [String: String] = [:]
        /// Speaking that the server announced and never said stopped: identity → since.
        var openSince: [String: Int64] = [:]
        var bot: Set<String> = []
        var lastOffset: Int64 = 0
        var summary = emptySummary(repairedFiles: repairedFiles)
        // The half line a crash leaves does not decode.
        let repair = SessionSummary.Repair(eventLines: read.lines.count, eventLinesUnreadable: read.unreadable, filesRepaired: repairedFiles)
        var startedUnixMillis: Int64?
        for line in read.lines {
            let offset = line.offsetMs
            lastOffset = max(lastOffset, offset)
            switch line.event {
            case .sessionStarted(let e):
                summary.room = Nullable(e.room.text)
                summary.server = Nullable(e.server)
                // The session starts at offset 0; this event is written a moment later.
                startedUnixMillis = unixMillis(iso: line.time).map { $0 - offset }
                summary.started = Nullable(startedUnixMillis.map { TranscriptWriter.iso($0 * 1_000_000) })
                if !e.botIdentity.isEmpty { bot.insert(e.botIdentity.text) }
            case .joined(let e):
                bot.insert(e.participant.identity.text)
            case .participantJoined(let e): names[e.participant.identity.text] = e.participant.name.text
            case .participantRejoined(let e): names[e.participant.identity.text] = e.participant.name.text
            case .participantUpdated(let e): names[e.participant.identity.text] = e.participant.name.text
            case .speakingTurn(let e):
                let id = e.participant.identity.text
                let n = line.displayName ?? names[id].flatMap { $0.isEmpty ? nil : $0 } ?? id
                turns.append((id, n, e.startMs, e.endMs))
                if let since = openSince[id], since <= e.endMs { openSince[id] = nil }
            case .speakersChanged(let e):
                for id in e.started.map(\.text) where openSince[id] == nil { openSince[id] = offset }
                for id in e.stopped { openSince[id.text] = nil }
            case .participantLeft(let e):
                openSince[e.participant.identity.text] = nil
            case .gap(let e):
                if let p = e.participant.value, !e.cause.isEmpty { gaps.append((p.identity.text, offset, e.durationMs, e.cause)) }
            case .chat(let e):
                summary.chatMessages += 1
                let id = e.participant.identity.text
                let n = line.displayName ?? id
                chats.append((offset, n, e.message.text))
                if let poll = e.poll, notes.count < TranscriptWriter.maxNotes {
                    notes.append((offset, TranscriptEvents.pollNote(by: n, question: poll.question.text, options: poll.options.map(\.text.text))))
                }
            case .reaction(let e):
                // Named as the live line was: the bot as "(bot)", else the room's name, else the identity.
                if notes.count < TranscriptWriter.maxNotes {
                    let id = e.participant.identity.text
                    let who = bot.contains(id) ? "(bot)" : line.displayName.map(RoomEventFormatter.cut) ?? (id.isEmpty ? "(server)" : RoomEventFormatter.cut(id))
                    notes.append((offset, TranscriptEvents.reactionNote(by: who, emoji: e.emoji.text)))
                }
            case .reconnecting:
                // One outage, however many reconnecting lines it wrote (a resume that
                // became a rejoin writes two); attempts are not in events.jsonl.
                if !inOutage { summary.reconnects += 1 }
                inOutage = true
            case .reconnected:
                inOutage = false
            case .sessionEnded(let e):
                // The session did end, only its last files were not written.
                summary.endReason = e.endReason ?? (e.reason.isEmpty ? "crashed" : e.reason)
                summary.exitCode = Nullable(e.exitCode)
                if !e.detail.isEmpty { summary.message = e.detail.text }
            default:
                break
            }
        }
        // The session lasted as long as its longest file (granules and START_OFFSET_MS),
        // or to its last event when that is later: the events stop long before the audio
        // when nothing happens in the room.
        summary.durationMs = max(lastOffset, files.map(\.endMillis).max() ?? 0)
        if let s = startedUnixMillis { summary.ended = Nullable(TranscriptWriter.iso((s + summary.durationMs) * 1_000_000)) }
        // A turn still open at the crash: from when it started to the end of its speaker's
        // last file (or of the session).
        for (id, since) in openSince where !bot.contains(id) {
            let end = files.filter { $0.identity == id }.map(\.endMillis).max() ?? summary.durationMs
            guard end > since else { continue }
            let n = names[id].flatMap { $0.isEmpty ? nil : $0 } ?? id
            turns.append((id, n, since, end))
        }
        turns.sort { ($0.startMs, $0.identity) < ($1.startMs, $1.identity) }
        // One entry per participant file, each describing its own file.
        for f in files {
            guard let id = f.identity, !bot.contains(id) else { continue }
            let start = f.startOffsetMillis ?? 0, end = f.endMillis
            let speaking = turns.filter { $0.identity == id }.reduce(Int64(0)) { $0 + max(0, min($1.endMs, end) - max($1.startMs, start)) }
            var gapsMs: [String: Int64] = [:]
            for g in gaps where g.identity == id && g.startMs >= start && g.startMs < end { gapsMs[g.cause, default: 0] += g.durationMs }
            summary.participants.append(SessionSummary.Participant(
                identity: id, name: names[id] ?? "", file: Nullable(f.name), startOffsetMs: Nullable(f.startOffsetMillis),
                durationMs: Nullable(f.durationMillis), speakingMs: speaking, packets: Nullable(nil), lost: Nullable(nil), late: Nullable(nil),
                duplicates: Nullable(nil), fecRecovered: Nullable(nil), concealedMs: Nullable(nil), gapsMs: gapsMs,
                mixLate: Nullable(nil), mixConcealedMs: Nullable(nil), dropped: Nullable(nil)))
        }
        summary.roomFile = Nullable(files.first { $0.name == "room.opus" }?.name)
        summary.repaired = repair
        return (TranscriptWriter.vtt(turns: turns, chats: chats, notes: notes), summary)
    }

    /// Milliseconds since 1970 of an event's `time` (`2026-12-01T10:00:00.123Z`).
    static func unixMillis(iso: String) -> Int64? {
        let s = Array(iso.utf8)
        guard s.count == 24, s[4] == UInt8(ascii: "-"), s[7] == UInt8(ascii: "-"), s[10] == UInt8(ascii: "T"),
              s[13] == UInt8(ascii: ":"), s[16] == UInt8(ascii: ":"), s[19] == UInt8(ascii: "."), s[23] == UInt8(ascii: "Z") else { return nil }
        func n(_ r: Range<Int>) -> Int32? {
            var v: Int32 = 0
            for i in r {
                guard (48...57).contains(s[i]) else { return nil }
                v = v * 10 + Int32(s[i] - 48)
            }
            return v
        }
        guard let y = n(0..<4), let mo = n(5..<7), let d = n(8..<10), let h = n(11..<13), let mi = n(14..<16), let sec = n(17..<19), let ms = n(20..<23) else { return nil }
        var t = tm()
        t.tm_year = y - 1900
        t.tm_mon = mo - 1
        t.tm_mday = d
        t.tm_hour = h
        t.tm_min = mi
        t.tm_sec = sec
        return Int64(timegm(&t)) * 1000 + Int64(ms)
    }

    // MARK: - The shell

    static func isSession(_ path: String) -> Bool {
        var isDir = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir
            && FileManager.default.fileExists(atPath: path + "/events.jsonl")
    }

    static func run(_ dir: String, console: Console) throws -> ExitCode {
        let folder: SessionFolder
        do {
            folder = try SessionFolder.adopt(dir)
        } catch is SessionFolder.Busy {
            throw CommandFailure(.forbidden, "\(dir) is still being recorded (another bedrud-bot holds its lock); repair it after that run ends")
        }
        defer { folder.release() }
        let fm = FileManager.default
        var worst = ExitCode.success
        var repaired: [String] = []
        unlink(dir + "/" + DiskReserve.fileName)  // the room a crashed session kept for finishing its files
        for name in (try fm.contentsOfDirectory(atPath: dir)).sorted() where name.hasSuffix(".opus.part") {
            do {
                let r = try OggOpusRepair.repair(path: dir + "/" + name)
                repaired.append(PathText.lastComponent(r.outputPath))
                console.out(MediaCommands.describe(name, r))
            } catch {
                console.err("bedrud-bot: cannot repair \(dir)/\(name): \(error)")
                worst = .fileProblems
            }
        }
        let vttMissing = !fm.fileExists(atPath: dir + "/transcript.vtt")
        let summaryMissing = !fm.fileExists(atPath: dir + "/summary.json")
        if repaired.isEmpty && !vttMissing && !summaryMissing && worst == .success {
            console.out("\(dir): a finished session; nothing to repair (nothing was changed).")
            return .success
        }
        let contents = SessionFolder.Contents(reading: dir)
        let files = contents.audio.compactMap { a in
            a.verified.map { RecordedFile(name: a.name, identity: a.tag("PARTICIPANT_IDENTITY"), durationMillis: Int64($0.durationMillis.rounded()),
                                          startOffsetMillis: a.tag("START_OFFSET_MS").flatMap { Int64($0) }) }
        }
        let rebuilt = rebuild(events: (contents.lines, contents.unreadableLines), files: files, repairedFiles: repaired)
        var summary = rebuilt.summary
        for (name, missing, text) in [("transcript.vtt", vttMissing, rebuilt.vtt), ("summary.json", summaryMissing, "")] where missing {
            var body = text
            if name == "summary.json" {
                summary.files = Set(((try? fm.contentsOfDirectory(atPath: dir)) ?? []).filter { !$0.hasSuffix(".part") && !$0.hasSuffix(".repairing") } + ["summary.json", "transcript.vtt"]).sorted()
                body = summary.json()
            }
            try SessionFolder.writeFinished(dir + "/" + name, body, mode: folder.fileMode, temporarySuffix: ".repairing")
            unlink(dir + "/" + name + ".part")  // the crash's empty or partial copy, now replaced
            console.out("\(dir)/\(name): rebuilt from events.jsonl (\(rebuilt.summary.repaired?.eventLines ?? 0) events" +
                        ((rebuilt.summary.repaired?.eventLinesUnreadable ?? 0) > 0 ? ", \(rebuilt.summary.repaired?.eventLinesUnreadable ?? 0) cut-off line skipped" : "") + ")")
        }
        if let path = SessionReport.writeLogged(folder: dir) { console.out("\(path): written") }
        return worst
    }
}

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
    /// What one file of the session contributes to the summary.
    struct RecordedFile: Equatable {
        var name: String
        var identity: String?
        var durationMillis: Int64
    }

    /// The rebuilt summary: the same keys as a finished session's summary.json where
    /// they can be known from the transcript, and what repair did.
    struct Summary: Encodable {
        struct Participant: Encodable {
            var identity: String
            var name: String
            var file: String?
            var durationMs: Int64?
        }
        struct Repair: Encodable {
            var eventLines: Int
            var eventLinesUnreadable: Int
            var filesRepaired: [String]
        }
        var room: String?
        var server: String?
        var started: String?
        var ended: String?
        var durationMs: Int64
        var endReason: String
        var exitCode: Int?
        var message: String
        var participants: [Participant]
        var files: [String]
        var roomFile: String?
        var reconnects: Int
        var chatMessages: Int
        var repaired: Repair
    }

    // MARK: - Pure: events.jsonl → transcript.vtt and summary.json

    static func rebuild(events text: String, files: [RecordedFile], repairedFiles: [String]) -> (vtt: String, summary: Summary) {
        var turns: [(identity: String, name: String, startMs: Int64, endMs: Int64)] = []
        var chats: [(offsetMs: Int64, name: String, text: String)] = []
        var names: [String: String] = [:]
        var order: [String] = []
        var summary = Summary(durationMs: 0, endReason: "crashed", exitCode: nil,
                              message: "the recorder stopped without finishing (crash, kill -9 or power loss); finished by 'bedrud-bot repair'",
                              participants: [], files: [], reconnects: 0, chatMessages: 0,
                              repaired: Summary.Repair(eventLines: 0, eventLinesUnreadable: 0, filesRepaired: repairedFiles))
        func int64(_ v: Any?) -> Int64? { (v as? Double).flatMap { $0.isFinite && abs($0) < 9e18 ? Int64($0) : nil } }
        /// The event's participant and its non-empty name: an object `{identity, name}`, or,
        /// in transcripts written before it had one shape, an identity string and a `name` key.
        func participant(_ o: [String: Any]) -> (String, String?)? {
            let nonEmpty = { (s: Any?) in (s as? String).flatMap { $0.isEmpty ? nil : $0 } }
            if let p = o["participant"] as? [String: Any], let id = p["identity"] as? String { return (id, nonEmpty(p["name"])) }
            if let id = o["participant"] as? String { return (id, nonEmpty(o["name"])) }
            return nil
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let o = (try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)))?.anyValue as? [String: Any], let type = o["type"] as? String else {
                summary.repaired.eventLinesUnreadable += 1  // the half line a crash leaves
                continue
            }
            summary.repaired.eventLines += 1
            let offset = int64(o["offset_ms"]) ?? 0
            summary.durationMs = max(summary.durationMs, offset)
            if let t = o["time"] as? String { summary.ended = t }
            switch type {
            case "session_started":
                summary.room = o["room"] as? String
                summary.server = o["server"] as? String
                summary.started = o["time"] as? String
            case "participant_joined", "participant_rejoined", "participant_updated":
                if let p = o["participant"] as? [String: Any], let id = p["identity"] as? String {
                    if names[id] == nil { order.append(id) }
                    names[id] = p["name"] as? String ?? names[id] ?? ""
                }
            case "speaking_turn":
                if let (id, name) = participant(o), let s = int64(o["start_ms"]), let e = int64(o["end_ms"]) {
                    let n = name ?? names[id].flatMap { $0.isEmpty ? nil : $0 } ?? id
                    turns.append((id, n, s, e))
                }
            case "chat":
                summary.chatMessages += 1
                let (id, name) = participant(o) ?? ("", nil)
                chats.append((offset, name ?? id, o["message"] as? String ?? ""))
            case "reconnecting":
                summary.reconnects += 1
            case "session_ended":
                // The session did end, only its last files were not written.
                summary.endReason = o["end_reason"] as? String ?? o["reason"] as? String ?? "crashed"
                summary.exitCode = int64(o["exit_code"]).map { Int($0) }
                summary.message = o["detail"] as? String ?? summary.message
            default:
                break
            }
        }
        for id in order {
            let file = files.first { $0.identity == id }
            summary.participants.append(Summary.Participant(identity: id, name: names[id] ?? "", file: file?.name, durationMs: file?.durationMillis))
        }
        summary.roomFile = files.first { $0.name == "room.opus" }?.name
        return (TranscriptWriter.vtt(turns: turns, chats: chats), summary)
    }

    static func encode(_ s: Summary) -> String {
        let enc = JSONEncoder()
        enc.keyEncodingStrategy = .convertToSnakeCase
        enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? enc.encode(s)) ?? Data("{}".utf8)
        return TerminalText.escapingJSON(String(decoding: data, as: UTF8.self)) + "\n"
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
        var files: [RecordedFile] = []
        for name in (try fm.contentsOfDirectory(atPath: dir)).sorted() where name.hasSuffix(".opus") {
            guard let report = try? OggOpusVerifier.verify(path: dir + "/" + name) else { continue }
            let identity = report.tags?.comments.first { $0.key == "PARTICIPANT_IDENTITY" }?.value
            files.append(RecordedFile(name: name, identity: identity, durationMillis: Int64(report.durationMillis.rounded())))
        }
        let events = (try? String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8)) ?? ""
        let rebuilt = rebuild(events: events, files: files, repairedFiles: repaired)
        var summary = rebuilt.summary
        for (name, missing, text) in [("transcript.vtt", vttMissing, rebuilt.vtt), ("summary.json", summaryMissing, "")] where missing {
            var body = text
            if name == "summary.json" {
                summary.files = Set(((try? fm.contentsOfDirectory(atPath: dir)) ?? []).filter { !$0.hasSuffix(".part") && !$0.hasSuffix(".repairing") } + ["summary.json", "transcript.vtt"]).sorted()
                body = encode(summary)
            }
            try SessionFolder.writeFinished(dir + "/" + name, body, mode: folder.fileMode, temporarySuffix: ".repairing")
            unlink(dir + "/" + name + ".part")  // the crash's empty or partial copy, now replaced
            console.out("\(dir)/\(name): rebuilt from events.jsonl (\(summary.repaired.eventLines) events" +
                        (summary.repaired.eventLinesUnreadable > 0 ? ", \(summary.repaired.eventLinesUnreadable) cut-off line skipped" : "") + ")")
        }
        if let path = SessionReport.writeLogged(folder: dir) { console.out("\(path): written") }
        return worst
    }
}

@testable import BedrudBot
import BedrudProtocol
import Foundation
import Testing

/// summary.json keeps its field names, and writes absent values as null.
@Suite struct SessionSummaryTests {
    @Test func fieldNamesAndNulls() throws {
        let p = SessionSummary.Participant(
            identity: "alice", name: "Alice", file: Nullable(nil), startOffsetMs: Nullable(120), durationMs: Nullable(5000), speakingMs: 3100,
            packets: Nullable(250), lost: Nullable(2), late: Nullable(1), duplicates: Nullable(0), fecRecovered: Nullable(1), concealedMs: Nullable(40),
            gapsMs: ["loss": 40, "noPackets": 0])
        let s = SessionSummary(
            room: Nullable("standup"), server: Nullable("http://127.0.0.1:1"), started: Nullable("2026-12-01T13:00:00.000Z"),
            ended: Nullable("2026-12-01T13:00:05.000Z"), durationMs: 5000, endReason: EndReason.nobodyCame.rawValue, exitCode: Nullable(14), message: "nobody came within 1s", participants: [p],
            files: ["events.jsonl", "summary.json"], roomFile: Nullable(nil), reconnects: 0, chatMessages: 0, network: Nullable(nil),
            onFinish: Nullable(.init(command: "upload", exitCode: Nullable(nil), signal: Nullable(9), timedOut: true, durationMs: 12)))
        let text = s.json()
        let o = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(Set(o.keys) == ["room", "server", "started", "ended", "duration_ms", "end_reason", "exit_code", "message", "participants",
                                "files", "room_file", "reconnects", "reconnect_attempts", "chat_messages", "chat", "network", "on_finish", "storage"])
        #expect(o["end_reason"] as? String == "nobody_came")
        #expect(o["room_file"] is NSNull && o["network"] is NSNull && o["storage"] is NSNull && o["chat"] is NSNull)
        #expect(o["repaired"] == nil, "only a summary repair rebuilt says what repair did")
        let q = try #require((o["participants"] as? [[String: Any]])?.first)
        #expect(Set(q.keys) == ["identity", "name", "file", "start_offset_ms", "duration_ms", "speaking_ms", "packets", "lost", "late",
                                "duplicates", "fec_recovered", "concealed_ms", "gaps_ms", "mix_late", "mix_concealed_ms", "dropped"])
        #expect(q["file"] is NSNull && q["start_offset_ms"] as? Int == 120)
        #expect((q["gaps_ms"] as? [String: Int]) == ["loss": 40, "noPackets": 0], "gap causes keep their names")
        let f = try #require(o["on_finish"] as? [String: Any])
        #expect(f["exit_code"] is NSNull && f["signal"] as? Int == 9 && f["timed_out"] as? Bool == true)
        #expect(text.hasSuffix("}\n"))
    }

    /// summary.json's text is what `JSONEncoder` (pretty, sorted keys, `/` as it is) wrote
    /// before ``JSONWriter`` wrote it: nulls, empty lists and objects, numbers, hostile text.
    @Test func theTextIsWhatJSONEncoderWrote() throws {
        let hostile = "a/b\u{2028}c\u{0}d\u{1B}[31me\u{85}f\u{202E}g\"h\\i\tj\nk👍\u{7F}"
        let p = SessionSummary.Participant(
            identity: "u-\(hostile)", name: hostile, file: Nullable("\(hostile).opus"), startOffsetMs: Nullable(-3), durationMs: Nullable(5_000_000_000),
            speakingMs: 0, packets: Nullable(nil), lost: Nullable(2), late: Nullable(1), duplicates: Nullable(0), fecRecovered: Nullable(1),
            concealedMs: Nullable(40), gapsMs: [:])
        let q = SessionSummary.Participant(
            identity: "u-2", name: "", file: Nullable(nil), startOffsetMs: Nullable(nil), durationMs: Nullable(nil), speakingMs: 1, packets: Nullable(1),
            lost: Nullable(nil), late: Nullable(nil), duplicates: Nullable(nil), fecRecovered: Nullable(nil), concealedMs: Nullable(nil),
            gapsMs: ["loss": 40, "noPackets": 0, "dtx": 7])
        var s = SessionSummary(
            room: Nullable(hostile), server: Nullable("http://127.0.0.1:1/x"), started: Nullable("2026-12-01T13:00:00.000Z"), ended: Nullable(nil),
            durationMs: 5000, endReason: EndReason.nobodyCame.rawValue, exitCode: Nullable(14), message: hostile, participants: [p, q],
            files: [], roomFile: Nullable("room.opus"), reconnects: 2, chatMessages: 3, network: Nullable(nil),
            onFinish: Nullable(.init(command: "upload \(hostile)", exitCode: Nullable(0), signal: Nullable(nil), timedOut: false, durationMs: 12)))
        s.storage = Nullable(.init(diskFull: true, error: Nullable("No space left"), pagesDropped: 4, unfinishedFiles: 1, eventsLost: 0))
        s.repaired = .init(eventLines: 10, eventLinesUnreadable: 1, filesRepaired: ["a.opus"])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let before = TerminalText.escapingJSON(String(decoding: try encoder.encode(s), as: UTF8.self)) + "\n"
        #expect(s.json() == before)
    }
}

/// on_finish's runner: argument, environment, exit code, timeout, nothing left behind.
@Suite struct FinishHookTests {
    @Test func argumentEnvironmentAndExitCode() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hook-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.path + "/out"
        let r = await FinishHook.run("printf '%s|%s|%s' \"$BEDRUD_BOT_EXIT_CODE\" \"$BEDRUD_BOT_SESSION_DIR\" > '\(out)'; exit 4; :",
                                     folder: dir.path, exitCode: 15, timeout: 20, environment: ["PATH": "/usr/bin:/bin"])
        #expect(r.exitCode == 4 && r.signal == nil && !r.timedOut && r.spawnError == nil)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "15|\(dir.path)|")
        let arg = await FinishHook.run("test \"$1\" = '\(dir.path)' && test $# -eq 1 && exit 0; exit 1; :", folder: dir.path, exitCode: 0,
                                       timeout: 20, environment: [:])
        #expect(arg.exitCode == 0, "the folder is the shell's $1, its only argument")
        let direct = await FinishHook.run("test", folder: dir.path, exitCode: 0, timeout: 20, environment: [:])
        #expect(direct.succeeded, "`test FOLDER` is true: the folder is the last argument")
    }

    @Test func aHangingCommandIsStoppedAtItsTimeout() async throws {
        let start = Date()
        // It ignores SIGTERM, so only the SIGKILL 5 s later ends it.
        let r = await FinishHook.run("trap '' TERM; sleep 60; :", folder: "/", exitCode: 0, timeout: 0.5, environment: ["PATH": "/usr/bin:/bin"])
        #expect(r.timedOut && r.exitCode == nil && r.signal == 9, "\(r)")
        #expect(Date().timeIntervalSince(start) < 20)
    }
}

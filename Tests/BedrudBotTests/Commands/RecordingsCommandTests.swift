import Foundation
import Testing
import TestSupport
@testable import BedrudBot

/// `bedrud-bot recordings` on an output folder with a finished and a crashed session.
@Suite struct RecordingsCommandTests {
    /// A finished session's folder: events, summary, report; no audio (the list reads them only to verify).
    static func finishedSession(_ dir: String, room: String, started: String) throws -> String {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try """
            {"type":"session_started","time":"\(started)","offset_ms":0,"room":"\(room)"}
            {"type":"participant_joined","offset_ms":10,"participant":{"identity":"a","name":"A"}}
            {"type":"participant_joined","offset_ms":20,"participant":{"identity":"b","name":"B"}}
            {"type":"session_ended","offset_ms":754000,"reason":"left","end_reason":"signal","exit_code":0,"detail":"stopped","duration_ms":754000}

            """.write(toFile: dir + "/events.jsonl", atomically: true, encoding: .utf8)
        try #"{"room":"\#(room)","started":"\#(started)","duration_ms":754000,"end_reason":"signal","participants":[]}"#
            .write(toFile: dir + "/summary.json", atomically: true, encoding: .utf8)
        try "<!DOCTYPE html>".write(toFile: dir + "/report.html", atomically: true, encoding: .utf8)
        return dir
    }

    @Test func newestFirstWithTheCrashedSessionsProblems() async throws {
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let old = try Self.finishedSession(out + "/standup/2026-11-28_090000", room: "standup", started: "2026-11-28T09:00:00.000Z")
        // Crashed: no summary, a .part left, and a damaged .opus.
        let crashed = out + "/review/2026-11-29_100000"
        try FileManager.default.createDirectory(atPath: crashed, withIntermediateDirectories: true)
        try """
            {"type":"session_started","time":"2026-11-29T10:00:00.000Z","offset_ms":0,"room":"review"}
            {"type":"participant_joined","offset_ms":5,"participant":{"identity":"x","name":"X"}}
            {"type":"speaking_turn","offset_ms":1000,"participant":{"identity":"x","name":"X"},"start_ms":1000,"end_ms":65000}
            {"type":"chat","offset_ms":6500
            """.write(toFile: crashed + "/events.jsonl", atomically: true, encoding: .utf8)
        try Data(repeating: 7, count: 300).write(to: URL(fileURLWithPath: crashed + "/X.opus.part"))
        try Data("OggS not really".utf8).write(to: URL(fileURLWithPath: crashed + "/room.opus"))

        let r = try await user.expect(0, ["recordings", "--output", out])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines == [
            "DATE              ROOM     LENGTH  PEOPLE  ENDED       SIZE   PROBLEMS",
            "2026-11-29 10:00  review   1:05    1       unfinished  638 B  3",
            "  \(crashed) (no report.html: bedrud-bot report \(crashed))",
            "  problem: .part left: X.opus.part (run: bedrud-bot repair \(crashed))",
            "  problem: no summary.json",
            lines.count > 5 && lines[5].hasPrefix("  problem: verify room.opus: ") ? lines[5] : "  problem: verify room.opus: …",
            "2026-11-28 09:00  standup  12:34   2       signal      533 B  -",
            "  \(old)/report.html",
        ], "\(r.stdout)")

        let j = try await user.expect(0, ["recordings", "review", "--json", "--output", out])
        let list = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [[String: Any]]
        #expect(list?.count == 1)
        #expect(list?.first?["end_reason"] as? String == "unfinished")
        #expect(list?.first?["report"] is NSNull)
        #expect(list?.first?["duration_ms"] as? Int == 65000)
        #expect((list?.first?["problems"] as? [String])?.count == 3)

        let none = try await user.expect(0, ["recordings", "nosuchroom", "--output", out])
        #expect(none.stdout == "No recordings of room 'nosuchroom' under \(out).\n")
        let missing = try await user.expect(5, ["recordings", "--output", out + "/nope"])
        #expect(missing.stderr.contains("no recordings folder at \(out)/nope"), "\(missing.stderr)")
    }
}

import Foundation
import Testing
import TestSupport

/// The session lifecycle end to end against the devserver: how a session ends (`end_reason`,
/// exit code), `--wait-for-participants`, `on_finish`, `--include`, and the summary's
/// per-participant and network figures.
@Suite(.serialized) struct CLILifecycleTests {
    static let password = "a long enough password"

    static func summary(_ dir: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The one session folder under `root/room`.
    static func session(_ root: String, _ room: String) throws -> String {
        let sessions = try FileManager.default.contentsOfDirectory(atPath: root + "/" + room).sorted()
        #expect(sessions.count == 1, "\(sessions)")
        return root + "/" + room + "/" + (sessions.first ?? "")
    }

    @Test func nobodyCameDurationAndOnFinish() async throws {
        let server = try await DevServer.start(["--seed-user", "rec@example.com:\(Self.password)", "--seed-room", "empty"])
        let user = try CLIUser()
        let pw = try user.writeFile("pw", Self.password)
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com", "--password-file", pw])
        let noMedia = try await user.expect(2, ["join", "empty", "--no-media", "--wait-for-participants", "1s"])
        #expect(noMedia.stderr.contains("--wait-for-participants needs media; drop --no-media"), "\(noMedia.stderr)")
        let noRecord = try await user.expect(2, ["join", "empty", "--on-finish", "true"])
        #expect(noRecord.stderr.contains("--on-finish runs with the finished recording folder: add --record"), "\(noRecord.stderr)")
        let hookOut = user.home.appendingPathComponent("hook.out").path
        let hook = try user.writeFile("hook.sh", """
            #!/bin/sh
            printf '%s %s %s\\n' "$#" "$1" "$BEDRUD_BOT_EXIT_CODE" >> '\(hookOut)'
            test -f "$1/summary.json" || exit 9
            exit "${HOOK_EXIT:-0}"
            """, mode: 0o700)

        // Nobody comes within 1 s: exit 14, end_reason nobody_came; on_finish sees the
        // finished folder and the code, and its own exit code lands in the summary.
        let out1 = user.home.appendingPathComponent("rec1").path
        let r = try await user.expect(14, ["join", "empty", "--record", "--output", out1, "--wait-for-participants", "1s", "--on-finish", hook], timeout: 90)
        #expect(r.stderr.contains("nobody came within 1s"), "\(r.stderr)")
        let dir1 = try Self.session(out1, "empty")
        let s1 = try Self.summary(dir1)
        #expect(s1["end_reason"] as? String == "nobody_came" && s1["exit_code"] as? Int == 14, "\(s1)")
        let onFinish1 = try #require(s1["on_finish"] as? [String: Any], "\(s1)")
        #expect(onFinish1["exit_code"] as? Int == 0 && onFinish1["timed_out"] as? Bool == false && onFinish1["command"] as? String == hook, "\(onFinish1)")
        #expect(try String(contentsOfFile: hookOut, encoding: .utf8) == "1 \(dir1) 14\n")

        // --duration: a success with end_reason duration; a failing on_finish is logged
        // and recorded, and does not change the exit code.
        user.extraEnvironment["HOOK_EXIT"] = "3"
        let out2 = user.home.appendingPathComponent("rec2").path
        let d = try await user.expect(0, ["join", "empty", "--record", "--output", out2, "--duration", "2s", "--on-finish", hook], timeout: 90)
        #expect(d.stderr.contains("on_finish failed with exit code 3"), "\(d.stderr)")
        let dir2 = try Self.session(out2, "empty")
        let s2 = try Self.summary(dir2)
        #expect(s2["end_reason"] as? String == "duration" && s2["exit_code"] as? Int == 0, "\(s2)")
        #expect((s2["on_finish"] as? [String: Any])?["exit_code"] as? Int == 3, "\(s2)")
        #expect(try String(contentsOfFile: hookOut, encoding: .utf8).hasSuffix("1 \(dir2) 0\n"))
        #expect(s2["network"] is [String: Any], "the transport's figures are kept after it closed: \(s2)")

        // Free space below record.min_free: stopped before joining, exit 15, one clear line.
        user.extraEnvironment["BEDRUD_BOT_RECORD_MIN_FREE"] = "1000000GiB"
        let out3 = user.home.appendingPathComponent("rec3").path
        let low = try await user.expect(15, ["join", "empty", "--record", "--output", out3], timeout: 90)
        #expect(low.stderr.contains("free on the recording disk, below record.min_free"), "\(low.stderr)")
        #expect(!low.stdout.contains("joined room") && !low.stderr.contains("joined room"), "a low disk never joins")
        let s3 = try Self.summary(try Self.session(out3, "empty"))
        #expect(s3["end_reason"] as? String == "disk_low" && s3["exit_code"] as? Int == 15, "\(s3)")
    }

    /// A second SIGINT once the files are finished (summary.json is written, the report is
    /// being made) changes nothing: the report is written and the exit code is the summary's.
    @Test func aSecondSignalAfterTheFilesAreFinishedChangesNothing() async throws {
        let server = try await DevServer.start(scenario: "two-person-standup")
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let p = try user.start(["join", server.baseURL + "/m/standup", "--record", "--output", out])
        defer { _ = p.stop(grace: 0) }
        try await p.line(timeout: 60, "Alice speaks") { $0.contains("speaking: Alice Martin") }
        p.signal(SIGINT)
        let summary = try await waitFor("summary.json", timeout: 60, every: 0.002) { () -> String? in
            let sessions = (try? FileManager.default.contentsOfDirectory(atPath: out + "/standup")) ?? []
            return sessions.map { out + "/standup/" + $0 + "/summary.json" }.first { FileManager.default.fileExists(atPath: $0) }
        }
        p.signal(SIGINT)
        let end = await p.exit(timeout: 60)
        #expect(end?.code == 0, "\(String(describing: end))\n\(p.stderr)")
        let dir = (summary as NSString).deletingLastPathComponent
        #expect(FileManager.default.fileExists(atPath: dir + "/report.html"), "the report is written")
        let s = try Self.summary(dir)
        #expect(s["exit_code"] as? Int == 0, "\(s)")
    }

    @Test func sigtermIncludeAndTheSummaryFigures() async throws {
        let server = try await DevServer.start(scenario: "two-person-standup")
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let p = try user.start(["join", server.baseURL + "/m/standup", "--record", "--output", out, "--include", "Alice*", "--stats"])
        defer { _ = p.stop(grace: 0) }
        try await p.line(timeout: 60, "joined room") { $0.contains("joined room") }
        // Alice speaks from 1 s, Bob from 8 s: once the server says Bob speaks, Alice's
        // first turn is over. Then stop the bot.
        try await p.line(timeout: 60, "Bob speaks") { $0.contains("speaking: Bob Chen") }
        p.signal(SIGTERM)
        let end = await p.exit(timeout: 60)
        #expect(end?.code == 0, "\(String(describing: end)) \(p.stdout.suffix(2000))")
        let dir = try Self.session(out, "standup")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files == ["Alice Martin.opus", "events.jsonl", "report.html", "room.opus", "summary.json", "transcript.vtt"], "--include Alice* leaves Bob out: \(files)")
        let s = try Self.summary(dir)
        #expect(s["end_reason"] as? String == "signal" && s["message"] as? String == "terminated (SIGTERM)", "\(s)")
        let people = try #require(s["participants"] as? [[String: Any]])
        #expect(people.map { $0["name"] as? String } == ["Alice Martin"], "\(people)")
        let alice = try #require(people.first)
        #expect((alice["start_offset_ms"] as? Int).map { $0 >= 0 && $0 < 5000 } == true, "\(alice)")
        #expect((alice["speaking_ms"] as? Int).map { $0 > 0 } == true, "\(alice)")
        let network = try #require(s["network"] as? [String: Any], "\(s)")
        let tracks = try #require(network["tracks"] as? [[String: Any]])
        #expect(network["srtp_profile"] is String && network["selected_pair"] is String, "\(network)")
        // Bob's track is received (and counted) but not recorded.
        #expect(Set(tracks.compactMap { $0["participant"] as? String }) == ["alice", "bob"], "\(tracks)")
        #expect(tracks.allSatisfy { ($0["packets"] as? Int ?? 0) > 0 }, "\(tracks)")
    }
}

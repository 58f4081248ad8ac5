import Foundation
import Testing
import TestSupport

/// Several rooms in one process: `join ROOM ROOM… --record` against the
/// devserver, as a person runs it — two rooms with a scripted speaker each, recorded by
/// one process; a room that does not exist next to one that records to the end; SIGTERM.
@Suite(.serialized) struct CLIMultiRoomTests {
    /// A devserver with rooms `alpha` (Alice) and `beta` (Bob), each speaker with a long tone,
    /// plus `extra` scenario files.
    static func server(_ extra: [String] = []) async throws -> DevServer {
        var args: [String] = []
        for text in extra {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("extra-\(UUID().uuidString).scenario")
            try text.write(to: file, atomically: true, encoding: .utf8)
            args += ["--scenario", file.path]
        }
        for (room, id, name, hz) in [("alpha", "alice", "Alice Martin", 440), ("beta", "bob", "Bob Chen", 660)] {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(room)-\(UUID().uuidString).scenario")
            try """
                room \(room) public
                start first-join
                at 0s join \(id) name="\(name)"
                at 1s tone \(id) \(hz)Hz 60s amplitude=0.3
                """.write(to: file, atomically: true, encoding: .utf8)
            args += ["--scenario", file.path]
        }
        return try await DevServer.start(args)
    }

    /// Every `.opus` of the session folder passes `bedrud-bot verify`; returns the file names.
    @discardableResult
    static func expectVerified(_ user: CLIUser, _ dir: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(!files.contains { $0.hasSuffix(".part") }, "\(dir): \(files)", sourceLocation: sourceLocation)
        let opus = files.filter { $0.hasSuffix(".opus") }
        #expect(opus.count == 2, "\(dir): \(files)", sourceLocation: sourceLocation)
        try await user.expect(0, ["verify"] + opus.map { dir + "/" + $0 }, sourceLocation: sourceLocation)
        return files
    }

    /// ROOM's session folder under `out`, verified, and its summary, which must say it
    /// ended for `reason` with `exit`.
    @discardableResult
    static func endedSession(_ user: CLIUser, _ out: String, _ room: String, reason: String, exit: Int,
                             sourceLocation: SourceLocation = #_sourceLocation) async throws -> (dir: String, summary: [String: Any]) {
        let dir = try CLILifecycleTests.session(out, room)
        _ = try await expectVerified(user, dir, sourceLocation: sourceLocation)
        let s = try CLILifecycleTests.summary(dir)
        #expect(s["end_reason"] as? String == reason && s["exit_code"] as? Int == exit, "\(room): \(s)", sourceLocation: sourceLocation)
        return (dir, s)
    }

    @Test func sigtermFinishesBothRoomsRecordedInOneProcess() async throws {
        let server = try await Self.server()
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let p = try user.start(["join", server.baseURL + "/m/alpha", server.baseURL + "/m/beta", "--record", "--output", out, "-v"])
        defer { _ = p.stop(grace: 0) }
        // Both rooms' lines say which room they are of; both hear their speaker before the stop.
        try await p.line(timeout: 60, "alpha hears Alice") { $0.hasPrefix("[alpha] ") && $0.contains("speaking: Alice Martin") }
        try await p.line(timeout: 60, "beta hears Bob") { $0.hasPrefix("[beta] ") && $0.contains("speaking: Bob Chen") }
        p.signal(SIGTERM)
        let end = await p.exit(timeout: 60)
        #expect(end?.code == 0, "\(String(describing: end))\n\(p.stdout.suffix(2000))\n\(p.stderr.suffix(2000))")
        #expect(!p.lines().contains { $0.hasPrefix("[alpha] ") && $0.contains("Bob Chen") }, "Bob is only in beta")
        #expect(!p.lines().contains { $0.hasPrefix("[beta] ") && $0.contains("Alice Martin") }, "Alice is only in alpha")
        #expect(p.stderr.contains("2 rooms finished: alpha (terminated (SIGTERM)), beta (terminated (SIGTERM))."), "\(p.stderr)")
        // With -v the layers below the session show too, and each of their lines says its
        // room: every room's subscriber connection logged its pair, and no WebRTC, signal
        // or media line is untagged.
        let logLines = p.lines(.stderr)
        for room in ["alpha", "beta"] {
            #expect(logLines.contains { $0.hasPrefix("[\(room)] ") && $0.contains(" rtc.pc.subscriber: selected pair ") }, "\(p.stderr)")
        }
        let layers = [" rtc.", " webrtc: ", " signal: ", " websocket: ", " room: ", " media: ", " media.writer: "]
        let untagged = logLines.filter { line in !line.hasPrefix("[") && layers.contains { line.contains($0) } }
        #expect(untagged.isEmpty, "\(untagged)")
        for (room, person) in [("alpha", "Alice Martin"), ("beta", "Bob Chen")] {
            let dir = try CLILifecycleTests.session(out, room)
            let files = try await Self.expectVerified(user, dir)
            #expect(files == ["\(person).opus", "events.jsonl", "report.html", "room.opus", "summary.json", "transcript.vtt"], "\(room): \(files)")
            let s = try CLILifecycleTests.summary(dir)
            #expect(s["room"] as? String == room && s["end_reason"] as? String == "signal" && s["exit_code"] as? Int == 0, "\(s)")
            let people = try #require(s["participants"] as? [[String: Any]])
            #expect(people.map { $0["name"] as? String } == [person], "\(room): \(people)")
            #expect(people.allSatisfy { ($0["duration_ms"] as? Int ?? 0) > 500 }, "\(people)")
            #expect(p.stderr.contains("[\(room)] Recording into \(dir)"), "\(p.stderr)")
        }
        try await expectValidEvents(out)
    }

    @Test func aRoomThatDoesNotExistDoesNotStopTheOther() async throws {
        let server = try await Self.server()
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let started = Date()
        let r = try await user.expect(16, ["join", server.baseURL + "/m/alpha", server.baseURL + "/m/nosuch", "--record", "--output", out,
                                           "--duration", "4s", "--json"], timeout: 90)
        #expect(Date().timeIntervalSince(started) < 45)
        #expect(r.stderr.contains("[nosuch] bedrud-bot: error: "), "\(r.stderr)")
        #expect(r.stderr.contains("bedrud-bot: error: 1 of 2 rooms failed: nosuch (exit 5: "), "\(r.stderr)")
        #expect(r.stderr.contains("; finished: alpha (duration of 4s reached)"), "\(r.stderr)")

        // alpha recorded to the end of its duration.
        let dir = try await Self.endedSession(user, out, "alpha", reason: "duration", exit: 0).dir
        #expect(!FileManager.default.fileExists(atPath: out + "/nosuch"), "a room that was never joined has no folder")

        // stdout: every line tagged with its room, one session_ended per room, run_ended last.
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)") }
        let events = objects.dropLast()
        #expect(events.allSatisfy { ($0["session_room"] as? String).map { ["alpha", "nosuch"].contains($0) } == true }, "\(lines.prefix(3))")
        let ended = events.filter { $0["type"] as? String == "session_ended" }
        #expect(ended.map { $0["session_room"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") } == ["alpha", "nosuch"], "\(ended)")
        #expect(ended.first { $0["session_room"] as? String == "nosuch" }?["exit_code"] as? Int == 5, "\(ended)")
        let last = try #require(objects.last)
        #expect(last["type"] as? String == "run_ended" && last["exit_code"] as? Int == 16, "\(last)")
        let rooms = try #require(last["rooms"] as? [[String: Any]])
        #expect(rooms.map { $0["session_room"] as? String } == ["alpha", "nosuch"])
        #expect(rooms.map { $0["exit_code"] as? Int } == [0, 5])
        #expect(rooms.first?["folder"] as? String == dir && rooms.last?["folder"] is NSNull, "\(rooms)")
        // The file keeps its own shape: events.jsonl has no session_room.
        #expect(try !String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).contains("session_room"))
        let saved = try user.writeFile("stdout.jsonl", r.stdout)
        let check = try await EventSchema.run([saved])
        #expect(check.exitCode == 0, "stdout of join --json with several rooms: \(check.stdout)\(check.stderr)")
        try await expectValidEvents(out)

        // Options that follow one room only are refused with several.
        let noMedia = try await user.expect(2, ["join", "alpha", "beta", "--no-media"])
        #expect(noMedia.stderr.contains("--no-media follows one room: give one ROOM|LINK, or drop --no-media"), "\(noMedia.stderr)")
        let twice = try await user.expect(2, ["join", "alpha", "alpha"])
        #expect(twice.stderr.contains("'alpha' is given twice: each room is joined once"), "\(twice.stderr)")
    }

    @Test func aRoomDeletedMidSessionEndsAloneAndTheOtherGoesOn() async throws {
        let server = try await Self.server(["room doomed public\nstart first-join\nat 0s join host name=Host\nat 1s tone host 500Hz 10s\nat 3s delete-room\n"])
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let r = try await user.expect(16, ["join", server.baseURL + "/m/doomed", server.baseURL + "/m/alpha", "--record", "--output", out,
                                           "--duration", "7s"], timeout: 90)
        #expect(r.stderr.contains("[doomed] bedrud-bot: error: "), "\(r.stderr)")
        #expect(r.stderr.contains("bedrud-bot: error: 1 of 2 rooms failed: doomed (exit 10: "), "\(r.stderr)")
        #expect(r.stderr.contains("; finished: alpha (duration of 7s reached)"), "\(r.stderr)")
        // The deleted room's session is finished and says why; alpha recorded its 7 s.
        try await Self.endedSession(user, out, "doomed", reason: "room_ended", exit: 10)
        let a = try await Self.endedSession(user, out, "alpha", reason: "duration", exit: 0).summary
        #expect((a["duration_ms"] as? Int).map { $0 >= 6500 } == true, "alpha went on after doomed ended: \(a)")
    }
}

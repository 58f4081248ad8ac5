import Foundation
import Testing
import TestSupport

/// `join` under Bedrud v0.12.0's room rules (``RoomEntry``, ``JoinPlan``) against the
/// devserver, as a user runs it: meetings that end and come back, waiting for the host,
/// private rooms, `recordingsAllowed`, and a full rejoin into a meeting that ended during
/// the outage. Each message is checked whole, with its exit code.
@Suite struct CLIRoomEntryTests {
    static let password = "a long enough password"

    /// A user logged in to the devserver as `email` (instance `dev`).
    static func user(_ server: DevServer, _ email: String) async throws -> CLIUser {
        let user = try CLIUser()
        let pw = try user.writeFile("pw", password)
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", email, "--password-file", pw])
        return user
    }

    static func errorLine(_ stderr: String) -> String {
        stderr.split(separator: "\n").first { $0.hasPrefix("bedrud-bot: error: ") }.map { String($0.dropFirst("bedrud-bot: error: ".count)) } ?? ""
    }

    static func scenario(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString).scenario")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    static func events(_ dir: String) throws -> [[String: Any]] {
        try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func sessionDir(_ out: String, room: String) throws -> String {
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/" + room)
        #expect(sessions.count == 1, "\(sessions)")
        return out + "/" + room + "/" + (sessions.first ?? "")
    }

    static let seeds = ["--seed-user", "owner@example.com:\(password):Owner", "--seed-user", "bot@example.com:\(password):Bot"]

    @Test func anEndedMeetingIsStartedAgainByItsOwnerOnly() async throws {
        let server = try await DevServer.start(Self.seeds + ["--seed-room", "standup:public:owner=owner@example.com"])
        let bot = try await Self.user(server, "bot@example.com")
        let owner = try await Self.user(server, "owner@example.com")
        _ = try server.dev("POST", "/_dev/rooms/standup/deactivate")

        var r = try await bot.expect(5, ["join", "standup", "--no-media", "--duration", "2s"])
        #expect(Self.errorLine(r.stderr) == "the meeting in 'standup' has ended; it comes back when its owner starts it (--wait-for-room DURATION waits for that)")
        r = try await owner.expect(5, ["join", "standup", "--no-media", "--no-recreate"])
        #expect(Self.errorLine(r.stderr) == "the meeting in 'standup' has ended; as its owner, start it again in Bedrud or run without --no-recreate")
        r = try await owner.expect(5, ["join", "standup", "--dry-run"])
        #expect(Self.errorLine(r.stderr) == "the meeting in 'standup' has ended; without --dry-run the bot would start a new one as the room's owner")
        r = try await bot.expect(5, ["join", "standup", "--no-media", "--wait-for-room", "2s"])
        #expect(r.stderr.contains("Waiting up to 2s for 'standup' (the meeting in 'standup' has ended): asking the server again every few seconds."))
        #expect(Self.errorLine(r.stderr) == "waited 2s for 'standup': the meeting in 'standup' has ended; it comes back when its owner starts it")

        // The owner starts a new meeting the way the web client does, and says so in one line.
        r = try await owner.expect(0, ["join", "standup", "--no-media", "--duration", "1s"])
        #expect(r.stderr.contains("The meeting in 'standup' had ended; starting a new one as its owner (same name, mode and settings)."), "\(r.stderr)")
        #expect(r.stdout.contains("joined room 'standup'"))
        r = try await owner.expect(0, ["rooms", "list"])
        let row = r.stdout.split(separator: "\n").first { $0.hasPrefix("standup ") }.map(String.init) ?? ""
        #expect(row.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).prefix(3) == ["yes", "yes", "yes"], "public, active, recordings allowed: \(r.stdout)")
        // Now everyone gets in.
        try await bot.expect(0, ["join", "standup", "--no-media", "--duration", "1s"])
        // No such room at all.
        r = try await bot.expect(5, ["join", "nosuch", "--no-media"])
        #expect(Self.errorLine(r.stderr) == "there is no room 'nosuch' on this server (check the name; 'bedrud-bot rooms list' shows your own rooms)")
    }

    @Test func aCronRunWaitsForTheHostThenRecords() async throws {
        // The idle rule at a few seconds: the room from last week is inactive by itself.
        let requests = FileManager.default.temporaryDirectory.appendingPathComponent("requests-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: requests) }
        let server = try await DevServer.start(Self.seeds + ["--seed-room", "allhands:public:owner=owner@example.com",
                                                             "--room-min-age", "1", "--room-idle-after", "1", "--request-log", requests])
        let bot = try await Self.user(server, "bot@example.com")
        let owner = try await Self.user(server, "owner@example.com")
        func joinRequests() -> Int {
            ((try? String(contentsOfFile: requests, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains(#""path":"/api/room/join""#) }.count
        }
        // Until the sweep has idled the room (a dry run is answered 410, exit 5).
        try await waitUntil("the room went idle", timeout: 30, every: 0.5) { try await bot.run(["join", "allhands", "--dry-run"]).exitCode == 5 }
        let out = bot.home.appendingPathComponent("rec").path
        let before = joinRequests()
        let cron = try bot.start(["-q", "join", "allhands", "--record", "--wait-for-room", "5m", "--duration", "8s", "--output", out])
        // The quiet bot says nothing: the server's request log shows it asking, and asking again.
        try await waitUntil("the bot asked twice", timeout: 60, every: 0.2) {
            guard cron.isRunning else { throw WaitAbandoned("the bot ended: \(cron.stdout)\(cron.stderr)") }
            return joinRequests() >= before + 2
        }
        #expect(cron.isRunning && !FileManager.default.fileExists(atPath: out), "waiting, nothing recorded yet")
        // The host starts the meeting (the web client's "Start new meeting") and talks.
        let hostStarted = Date()
        try await owner.expect(0, ["play", "allhands", "--tone", "440", "--duration", "20s"], timeout: 90)
        let ended = await cron.exit(timeout: 60)
        #expect(ended == .exited(0), "\(cron.stdout)\(cron.stderr)")
        #expect(cron.stdout.isEmpty && cron.stderr.isEmpty, "-q: a successful run prints nothing")
        let dir = try Self.sessionDir(out, room: "allhands")
        let verify = try await bot.expect(0, ["verify", dir + "/Owner.opus", dir + "/room.opus"])
        #expect(verify.stdout.contains("Owner.opus: valid"))
        let started = try #require(Self.events(dir).first { $0["type"] as? String == "session_started" }?["time"] as? String)
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(try #require(iso.date(from: started)) >= hostStarted.addingTimeInterval(-1), "joined only after the host started: \(started)")
        try await expectValidEvents(dir)
    }

    @Test func aRoomThatForbidsRecordingIsNotRecorded() async throws {
        let server = try await DevServer.start(Self.seeds + ["--seed-room", "quiet:public:norecord:owner=owner@example.com"])
        let bot = try await Self.user(server, "bot@example.com")
        let owner = try await Self.user(server, "owner@example.com")
        let out = bot.home.appendingPathComponent("rec").path
        var r = try await bot.expect(6, ["join", "quiet", "--record", "--output", out])
        #expect(Self.errorLine(r.stderr) == "the owner of 'quiet' does not allow recording in it (the room's recordingsAllowed setting is off): "
            + "join without --record, or ask them to allow it ('bedrud-bot rooms settings quiet --recordings-allowed yes')")
        #expect(!FileManager.default.fileExists(atPath: out), "nothing was written")
        r = try await owner.expect(0, ["rooms", "list"])
        #expect(r.stdout.contains("RECORD"))
        // The owner allows it; every other setting is sent back as it was.
        _ = try server.dev("POST", "/_dev/rooms/quiet/settings", json: ["e2ee": true])
        r = try await owner.expect(0, ["rooms", "settings", "quiet", "--recordings-allowed", "yes"])
        #expect(r.stdout.contains("recordings:       allowed"), "\(r.stdout)")
        #expect(r.stdout.contains("e2ee:             yes"), "kept: \(r.stdout)")
        #expect(r.stdout.contains("chat:             yes"), "kept: \(r.stdout)")
        try await bot.expect(0, ["join", "quiet", "--record", "--output", out, "--duration", "1s"])
        r = try await owner.expect(0, ["rooms", "settings", "quiet", "--recordings-allowed", "no"])
        #expect(r.stdout.contains("recordings:       not allowed"))
        try await bot.expect(6, ["join", "quiet", "--record", "--output", out])
    }

    @Test func privateRoomsSayWhoGetsIn() async throws {
        let server = try await DevServer.start(Self.seeds + ["--seed-room", "secret:private:owner=owner@example.com"])
        let bot = try await Self.user(server, "bot@example.com")
        var r = try await bot.expect(6, ["join", "secret", "--no-media"])
        #expect(Self.errorLine(r.stderr) == "'secret' is a private room: Bedrud admits only the account that created it and people already in the meeting "
            + "(and nobody can ask to be let in). Join with the creator's account, or ask the owner to make the room public")
        _ = try server.dev("POST", "/_dev/rooms/secret/settings", json: ["requireApproval": true])
        r = try await bot.expect(6, ["join", "secret", "--no-media"])
        #expect(Self.errorLine(r.stderr) == "'secret' is a private room that requires approval, and Bedrud has no approval flow a bot can use: "
            + "only the account that created the room, or someone already in the meeting, gets in. Join with the creator's account")
        // The creator's own bot gets in.
        let owner = try await Self.user(server, "owner@example.com")
        try await owner.expect(0, ["join", "secret", "--no-media", "--duration", "1s"])
    }

    @Test func aPrivateRoomForgetsTheBotAfterADrop() async throws {
        let server = try await DevServer.start(Self.seeds + ["--seed-room", "team:public:owner=owner@example.com"])
        let bot = try await Self.user(server, "bot@example.com")
        let owner = try await Self.user(server, "owner@example.com")
        let run = try bot.start(["join", "team", "--no-media"])
        try await run.line(timeout: 60, "joined") { $0.contains("joined room 'team'") }
        // The owner makes the room private while the bot is in (an active participant: still admitted).
        try await owner.expect(0, ["rooms", "settings", "team", "--public", "no"])
        let state = try server.dev("GET", "/_dev/state") as? [String: Any]
        let botID = try #require((state?["users"] as? [[String: Any]])?.first { $0["email"] as? String == "bot@example.com" }?["id"] as? String)
        // A drop ends the bot's LiveKit session, so its participant row goes inactive.
        _ = try server.dev("POST", "/_dev/rooms/team/drop/\(botID)", json: ["seconds": 4])
        let ended = await run.exit(timeout: 90)
        #expect(ended == .exited(6), "\(run.stdout)\(run.stderr)")
        #expect(Self.errorLine(run.stderr) == "Bedrud no longer lets the bot into 'team' after the drop: 'team' is a private room: Bedrud admits only the account that created it and people already in the meeting "
            + "(and nobody can ask to be let in). Join with the creator's account, or ask the owner to make the room public",
                "\(run.stderr)")
    }

    /// An outage across the meeting's end: the meeting ends while the bot is cut off
    /// (the server drops the bot's silent session after about 15 s, Alice has left, and
    /// LiveKit closes the empty room 2 s later: room_finished makes it inactive), Alice is
    /// back first (30 s), then the bot's connection returns (43 s) and it rejoins.
    static let outage = """
        room meet public
        start first-join
        at 0s    join alice name="Alice"
        at 0.5s  tone alice 440Hz 3s amplitude=0.2
        at 3s    drop $client 40s
        at 4s    leave alice
        at 30s   join alice name="Alice"
        at 30.5s tone alice 550Hz 60s amplitude=0.2
        """
    static let outageServer = ["--scenario-start", "first-join", "--lk-departure-timeout", "2"]

    @Test func theOwnersBotStartsTheMeetingAgainAfterAnOutageAndContinuesInNewFiles() async throws {
        let server = try await DevServer.start(["--seed-user", "bot@example.com:\(Self.password):Bot", "--seed-room", "meet:public:owner=bot@example.com",
                                                "--scenario", try Self.scenario(Self.outage)] + Self.outageServer)
        let bot = try await Self.user(server, "bot@example.com")
        let out = bot.home.appendingPathComponent("rec").path
        let run = try bot.start(["join", "meet", "--record", "--output", out, "--max-outage", "5m"])
        try await run.line(on: .stderr, timeout: 120, "restarted") { $0.contains("The meeting in 'meet' ended during the outage; started a new one as the room's owner.") }
        try await run.line(timeout: 60, "rejoined") { $0.contains("reconnected (joined again as a new session)") }
        // Alice, back in the new meeting, goes on in her next numbered file.
        try await waitUntil("Alice.002.opus.part", timeout: 30, every: 0.2) {
            guard run.isRunning else { throw WaitAbandoned("the bot ended: \(run.stdout)\(run.stderr)") }
            return try FileManager.default.contentsOfDirectory(atPath: out + "/meet").contains { session in
                FileManager.default.fileExists(atPath: out + "/meet/" + session + "/Alice.002.opus.part")
            }
        }
        run.signal(SIGINT)
        let ended = await run.exit(timeout: 30)
        #expect(ended == .exited(0), "\(run.stdout)\(run.stderr)")
        let dir = try Self.sessionDir(out, room: "meet")
        let all = try Self.events(dir)
        let rotated = all.filter { $0["type"] as? String == "file_rotated" }
        #expect(rotated.count >= 1 && rotated.allSatisfy { $0["reason"] as? String == "meeting_restarted" }, "\(rotated)")
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: dir))
        #expect(files == ["Alice.opus", "Alice.002.opus", "room.opus", "room.002.opus", "events.jsonl", "summary.json", "transcript.vtt", "report.html"], "\(files)")
        let gaps = all.filter { $0["type"] as? String == "gap" && $0["cause"] as? String == "reconnect" }
        #expect(!gaps.isEmpty, "the outage is a reconnect gap: \(all.filter { $0["type"] as? String == "gap" })")
        let opus = files.filter { $0.hasSuffix(".opus") }.sorted().map { dir + "/" + $0 }
        let verify = try await bot.expect(0, ["verify"] + opus)
        #expect(!verify.stdout.contains("problem"), "\(verify.stdout)")
        try await expectValidEvents(dir)
    }

    @Test func anotherUsersBotEndsAsRoomEndedAfterAnOutage() async throws {
        let server = try await DevServer.start(Self.seeds + ["--seed-room", "meet:public:owner=owner@example.com",
                                                             "--scenario", try Self.scenario(Self.outage)] + Self.outageServer)
        let bot = try await Self.user(server, "bot@example.com")
        let out = bot.home.appendingPathComponent("rec").path
        let run = try bot.start(["join", "meet", "--record", "--output", out, "--max-outage", "5m"])
        let ended = await run.exit(timeout: 150)
        #expect(ended == .exited(10), "\(run.stdout)\(run.stderr)")
        #expect(Self.errorLine(run.stderr) == "the meeting in 'meet' ended while the bot was disconnected; it comes back when its owner starts it", "\(run.stderr)")
        let dir = try Self.sessionDir(out, room: "meet")
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))) as? [String: Any]
        #expect(summary?["exit_code"] as? Int == 10 && summary?["end_reason"] as? String == "room_ended", "\(summary ?? [:])")
        try await bot.expect(0, ["verify", dir + "/Alice.opus", dir + "/room.opus"])
        try await expectValidEvents(dir)
    }
}

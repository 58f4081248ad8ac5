import Foundation
import Testing
import TestSupport

/// `join` as a user runs it, against scripted rooms on the devserver: the printed events
/// follow the scenario and the exit code says how the room ended.
@Suite struct CLIJoinTests {
    func lines(_ out: String) -> [String] {
        // Drop the time stamps: "13:32:26.316 joined room …" → "joined room …".
        out.split(separator: "\n").map { l in String(l.split(separator: " ", maxSplits: 1).last ?? "") }
    }

    @Test func eventsFollowTheLateJoinerScenario() async throws {
        let server = try await DevServer.start(scenario: "late-joiner")
        let user = try CLIUser()
        let r = try await user.expect(0, ["join", server.baseURL + "/m/late-joiner", "--no-media", "--duration", "28s"], timeout: 60)
        let l = lines(r.stdout)
        func index(_ text: String) -> Int? { l.firstIndex { $0.contains(text) } }
        let expected = ["joined room 'late-joiner'", "+ Host joined", "speaking: Host", "+ Late Joiner joined", "Late Joiner muted microphone",
                        "Late Joiner unmuted microphone", "- Late Joiner left", "disconnected: left the room"]
        var last = -1
        for e in expected {
            let i = try #require(index(e), "missing '\(e)' in:\n\(r.stdout)")
            #expect(i > last, "'\(e)' out of order in:\n\(r.stdout)")
            last = i
        }
        #expect(l.contains { $0.contains("speaking: Late Joiner") })
    }

    @Test func kickedAfterADroppedConnection() async throws {
        // The scenario drops the bot's connection at 3 s for 4 s, then kicks it at 13 s.
        // Without media the server forgets a session at once when its socket drops, so the
        // bot must come back with a full rejoin, and then learn it was kicked.
        let server = try await DevServer.start(scenario: "kicked-bot")
        let user = try CLIUser()
        let r = try await user.expect(10, ["join", server.baseURL + "/m/kicked-bot", "--no-media"], timeout: 60)
        let l = lines(r.stdout)
        #expect(l.contains { $0.contains("reconnecting") }, "\(r.stdout)")
        #expect(l.contains { $0.contains("reconnected (joined again as a new session)") }, "\(r.stdout)")
        #expect(l.last?.contains("disconnected: removed from the room by a moderator") == true, "\(r.stdout)")
        #expect(r.stderr.contains("removed from the room"))
    }

    @Test func roomDeleted() async throws {
        let scenario = "room doomed public\nstart first-join\nat 0s join host name=Host\nat 2s delete-room\n"
        let server = try await DevServer.start(scenarioText: scenario)
        let user = try CLIUser()
        let r = try await user.expect(10, ["join", server.baseURL + "/m/doomed", "--no-media"], timeout: 60)
        #expect(r.stdout.contains("disconnected: the room was deleted"), "\(r.stdout)")
        #expect(r.stderr.hasSuffix("\nbedrud-bot: error: the room was deleted\n"), "\(r.stderr)")

        // With --json (and -q): events.jsonl's objects up to the disconnect, and on stderr
        // only the one final line.
        let again = try await DevServer.start(scenarioText: scenario)
        let j = try await user.expect(10, ["-q", "join", again.baseURL + "/m/doomed", "--no-media", "--json"], timeout: 60)
        #expect(j.stderr == "bedrud-bot: error: the room was deleted\n", "\(j.stderr)")
        let objects = j.stdout.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.map { $0?["type"] as? String } == ["joined", "connected", "participant_joined", "track_published", "disconnected"], "\(j.stdout)")
        #expect(objects.last??["reason"] as? String == "room deleted", "\(j.stdout)")
        let check = try await EventSchema.run([try user.writeFile("doomed.jsonl", j.stdout)])
        #expect(check.exitCode == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func duplicateIdentityEndsTheOlderSession() async throws {
        let server = try await DevServer.start(["--seed-user", "bot@example.com:a long enough password", "--seed-room", "dup"])
        let user = try CLIUser()
        let pw = try user.writeFile("pw", "a long enough password")
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "bot@example.com", "--password-file", pw])
        let first = try user.start(["join", "dup", "--no-media", "--duration", "30s"])
        try await first.line(timeout: 60, "joined") { $0.contains("joined room 'dup'") }
        let second = try await user.expect(0, ["join", "dup", "--no-media", "--duration", "2s"], timeout: 60)
        #expect(second.stdout.contains("joined room 'dup'"))
        let ended = await first.exit(timeout: 30)
        #expect(ended == .exited(10), "\(first.stdout)\(first.stderr)")
        #expect(first.stdout.contains("another connection with the same account replaced this one"))
    }

    @Test func ctrlCLeavesCleanly() async throws {
        let server = try await DevServer.start(["--seed-room", "quiet", "--seed-user", "o@example.com:a long enough password"])
        let user = try CLIUser()
        let p = try user.start(["join", server.baseURL + "/m/quiet", "--no-media"])
        try await p.line(timeout: 60, "joined") { $0.contains("joined room 'quiet'") }
        p.signal(SIGINT)
        let ended = await p.exit(timeout: 10)
        #expect(ended == .exited(0), "\(p.stdout)\(p.stderr)")
        #expect(p.stdout.contains("disconnected: left the room"), "\(p.stdout)")
        // The server saw a clean leave: no participant left behind.
        let state = try server.dev("GET", "/_dev/state") as? [String: Any]
        let rooms = state?["rooms"] as? [[String: Any]] ?? []
        let left = rooms.flatMap { ($0["participants"] as? [[String: Any]]) ?? [] }
        #expect(left.isEmpty, "\(left)")
    }
}

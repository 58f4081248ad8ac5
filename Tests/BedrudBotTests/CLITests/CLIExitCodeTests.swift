import BedrudBot
import Foundation
import Testing
import TestSupport

/// Every exit code in docs/CLI.md's table, produced by the path the table
/// names, as cron and systemd see it.
@Suite struct CLIExitCodeTests {
    static let password = "a long enough password"

    @Test func everyCodeInTheTable() async throws {
        let server = try await DevServer.start(["--seed-user", "rec@example.com:\(Self.password)", "--seed-room", "taken"])
        let user = try CLIUser()
        let pw = try user.writeFile("pw", Self.password)
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com", "--password-file", pw])
        var seen: Set<Int32> = []
        func check(_ code: ExitCode, _ args: [String], _ text: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let r = try await user.expect(code.rawValue, args, sourceLocation: sourceLocation)
            #expect((r.stdout + r.stderr).contains(text), "\(args): \(r.stdout)\(r.stderr)", sourceLocation: sourceLocation)
            seen.insert(code.rawValue)
        }
        try await check(.success, ["version"], "bedrud-bot ")
        try await check(.usage, ["join"], "missing argument ROOM|LINK")
        let bad = try user.writeFile("bad.conf", "[network]\nconnect_timeout = soon\n")
        try await check(.config, ["config", "check", bad], "bad.conf:2: network.connect_timeout")
        let wrong = try user.writeFile("wrong", "not the password at all")
        try await check(.auth, ["login", "--password-file", wrong], "Wrong password, or no account yet? Create one with: bedrud-bot register")
        try await check(.notFound, ["-i", "nosuch", "whoami"], "no instance named 'nosuch'")
        try await check(.notFound, ["join", "no-such-room", "--dry-run"], "there is no room 'no-such-room' on this server")
        try await check(.roomsFailed, ["join", "taken", "no-such-room", "--dry-run"], "1 of 2 rooms failed: no-such-room (exit 5: ")
        try await check(.network, ["instance", "add", "http://127.0.0.1:1", "--name", "down"], "was refused")
        try await check(.rejected, ["rooms", "create", "taken"], "409")
        let quick = user.home.path + "/rec-quick"
        try await check(.nobodyCame, ["join", server.baseURL + "/m/taken", "--record", "--output", quick, "--wait-for-participants", "1s"], "nobody came within 1s")
        user.extraEnvironment["BEDRUD_BOT_RECORD_MIN_FREE"] = "1000000GiB"
        try await check(.diskLow, ["join", server.baseURL + "/m/taken", "--record", "--output", quick], "below record.min_free")
        user.extraEnvironment["BEDRUD_BOT_RECORD_MIN_FREE"] = nil
        // smoke: one code per stage (the devserver faults for the others are in CLISmokeTests).
        try await check(.smokeAPI, ["smoke", "http://127.0.0.1:1/m/taken", "--timeout", "5s"], "✗ API answers")
        try await check(.smokeRoom, ["smoke", "no-such-room", "--timeout", "5s"], "no such room 'no-such-room'")

        // A session folder another bot is writing (its lock held): repair refuses it.
        let busy = user.home.appendingPathComponent("busy").path
        try FileManager.default.createDirectory(atPath: busy, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: busy + "/events.jsonl", contents: Data())
        let lock = open(busy, O_RDONLY | O_DIRECTORY)
        #expect(flock(lock, LOCK_EX) == 0)
        try await check(.forbidden, ["repair", busy], "is still being recorded")
        close(lock)

        let notOgg = try user.writeFile("summary.json", "{}\n")
        try await check(.fileProblems, ["verify", notOgg], "not an Ogg file")

        let tlsServer = try await DevServer.start(["--tls"])
        try await check(.tls, ["instance", "add", tlsServer.baseURL, "--name", "tls"], "is not trusted")
        let other = try await PythonServer.start(script: "scripts/not_bedrud_server.py")
        try await check(.server, ["instance", "add", other.url, "--name", "other"], "Is this a Bedrud server?")

        let doomed = try await DevServer.start(scenarioText: "room doomed public\nstart first-join\nat 0s join host name=Host\nat 2s delete-room\n")
        try await check(.removed, ["join", doomed.baseURL + "/m/doomed", "--no-media"], "the room was deleted")

        // Signals: one is a clean stop (0, with or without --duration); a second one stops at once (130).
        for extra in [[], ["--duration", "60s"]] {
            let r = try await signalled(user, ["join", server.baseURL + "/m/taken", "--record", "--output", user.home.path + "/rec"] + extra, signals: 1)
            #expect(r.status == 0, "SIGTERM with \(extra): \(r.status)")
        }
        seen.insert(0)
        // The two signals are sent back to back, but each reaches the bot through its own
        // dispatch source: on a starved machine the clean stop of the first can finish (exit
        // 0, nothing left unfinished with --no-media) before the second is handled. That is
        // the documented contract too, so 0 is allowed on a try; 130 must show within five.
        for _ in 0..<5 {
            let twice = try await signalled(user, ["join", server.baseURL + "/m/taken", "--no-media"], signals: 2)
            #expect(twice.status == ExitCode.interrupted.rawValue || twice.status == 0, "two signals: \(twice.status)")
            if twice.status == ExitCode.interrupted.rawValue {
                seen.insert(twice.status)
                break
            }
        }

        // 1 is for bugs only: no path produces it on purpose.
        // 23–27: CLISmokeTests (devserver faults refuseUpgrades, --turn-only without TURN,
        // badFingerprint, --loss 100% and 30%). 21, 28, 29: no devserver fault produces them
        // yet (a failed login, a lost chat message, an unclean leave); SmokeRunTests checks
        // their mapping.
        let smokeElsewhere: [ExitCode] = [.smokeAuth, .smokeSignalling, .smokeICE, .smokeDTLS, .smokeMedia, .smokeQuality, .smokeData, .smokeLeave]
        let untested = Set([ExitCode.failure.rawValue] + smokeElsewhere.map(\.rawValue))
        #expect(Set(ExitCode.allCases.map(\.rawValue)).subtracting(untested) == seen)
    }

    /// Starts `args`, waits (with a deadline) until the bot is in the room, sends
    /// `signals` signals and returns the exit status.
    func signalled(_ user: CLIUser, _ args: [String], signals: Int) async throws -> (status: Int32, stdout: String) {
        let p = try user.start(args)
        defer { _ = p.stop(grace: 0) }
        try await p.line(timeout: 60, "joined room") { $0.contains("joined room") }
        // SIGTERM, then SIGINT: two different signals are never merged by the kernel. While
        // the bot is stopped both stay pending, so they reach it at the same moment.
        if signals > 1 { p.signal(SIGSTOP) }
        for sig in [SIGTERM, SIGINT].prefix(signals) { p.signal(sig) }
        if signals > 1 { p.signal(SIGCONT) }
        guard let end = await p.exit(timeout: 60) else {
            throw TestSupportError("bot did not exit within 60 s of \(signals) signal(s); stdout: \(p.stdout.suffix(2000))")
        }
        return (end.code, p.stdout)
    }
}

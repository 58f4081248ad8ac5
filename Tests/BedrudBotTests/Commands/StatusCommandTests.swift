import Foundation
import Testing
import TestSupport
@testable import BedrudBot

/// `bedrud-bot status` in its three states, as a user runs it, and its text from values.
@Suite struct StatusCommandTests {
    static let password = "correct horse battery staple"

    @Test func withNoInstanceItSaysWhatInstanceAddNeeds() async throws {
        let user = try CLIUser()
        let r = try await user.expect(0, ["status"])
        #expect(r.stdout.hasPrefix("""
            No Bedrud server is set up yet.

            Add one with its address (a meeting link works too):
              bedrud-bot instance add https://meet.example.com --name work --email you@example.com

            """), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("Recordings: none yet (bedrud-bot join ROOM --record)\n"))
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        let j = try await user.expect(0, ["status", "--json"])
        let o = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
        #expect(o?["state"] as? String == "no_instance")
        #expect(o?["instance"] is NSNull)
        #expect(FileManager.default.fileExists(atPath: user.configPath) == false, "status wrote nothing")
    }

    @Test func withAnInstanceButNoSessionItSaysHowToLogIn() async throws {
        var server: DevServer? = try await DevServer.start(["--seed-user", "rec@example.com:\(Self.password):Recorder", "--registration", "on"])
        let user = try CLIUser()
        let url = try #require(server?.baseURL)
        try await user.expect(0, ["instance", "add", url, "--name", "dev", "--email", "rec@example.com"])
        let r = try await user.expect(0, ["status"])
        #expect(r.stdout.hasPrefix("""
            Server: dev (\(url))
            Not logged in.
              The server does not require email verification.
              Guests are allowed: bedrud-bot login --guest "Meeting recorder"
              New accounts can register: bedrud-bot register --name "Meeting recorder"
            Log in with: bedrud-bot login --email you@example.com

            """), "\(r.stdout)")
        let j = try await user.expect(0, ["status", "--json"])
        let o = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
        #expect(o?["state"] as? String == "logged_out")
        #expect((o?["server"] as? [String: Any])?["reachable"] as? Bool == true)

        // The server stops: said within the HTTP timeouts, still exit 0 (the state is the answer).
        server = nil
        let start = Date()
        let down = try await user.expect(0, ["status"])
        #expect(Date().timeIntervalSince(start) < 30)
        let lines = down.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count > 2 && lines[1].hasPrefix("  not answering: ") && lines[1].contains("refused"), "\(down.stdout)")
        #expect(lines.count > 2 && lines[2] == "Not logged in.")
    }

    @Test func loggedInItShowsWhoTheTokenRoomsAndRecordings() async throws {
        let server = try await DevServer.start(["--seed-user", "rec@example.com:\(Self.password):Recorder", "--seed-room", "standup:public", "--access-ttl", "2h"])
        let user = try CLIUser()
        let pw = try user.writeFile("secrets/pw", Self.password + "\n")
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com"])
        try await user.expect(0, ["login", "--password-file", pw])
        let session = try Data(contentsOf: URL(fileURLWithPath: user.stateDir + "/sessions/dev.json"))
        let out = user.home.appendingPathComponent("rec").path
        _ = try RecordingsCommandTests.finishedSession(out + "/standup/2026-11-29_140000", room: "standup", started: "2026-11-29T14:00:00.000Z")
        let r = try await user.expect(0, ["status", "--output", out])
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "Server: dev (\(server.baseURL))")
        #expect(lines[1].hasPrefix("Logged in as Recorder <rec@example.com>; access token valid for 1h59m") || lines[1].hasPrefix("Logged in as Recorder <rec@example.com>; access token valid for 2h"), "\(lines[1])")
        #expect(lines[2] == "Rooms:")
        #expect(lines[3] == "  standup (active, public)")
        #expect(lines[5] == "Last recordings (bedrud-bot recordings for all):")
        #expect(lines[7].hasPrefix("2026-11-29 14:00  standup"), "\(r.stdout)")
        // Nothing changed: the stored session is byte for byte what login wrote.
        #expect(try Data(contentsOf: URL(fileURLWithPath: user.stateDir + "/sessions/dev.json")) == session)
        let j = try await user.expect(0, ["status", "--json", "--output", out])
        let o = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
        #expect(o?["state"] as? String == "logged_in")
        #expect((o?["rooms"] as? [[String: Any]])?.map { $0["name"] as? String } == ["standup"])
        #expect((o?["recordings"] as? [[String: Any]])?.count == 1)
        #expect(!j.stdout.contains("access_token") && !j.stdout.contains("refresh"))
    }

    /// A password file others may read: status says so with exit 3, as every other
    /// command does, after what it knows locally, and sends the server nothing.
    @Test func aWorldReadablePasswordFileIsRefusedAfterWhatIsKnownLocally() async throws {
        let server = try await DevServer.start(["--seed-user", "rec@example.com:\(Self.password):Recorder", "--seed-room", "standup:public", "--access-ttl", "2h"])
        let user = try CLIUser()
        let pw = try user.writeFile("secrets/pw", Self.password + "\n")
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com", "--password-file", pw])
        try await user.expect(0, ["login"])
        chmod(pw, 0o644)
        let r = try await user.expect(3, ["status"])
        #expect(r.stdout.contains("Logged in as Recorder <rec@example.com>"), "\(r.stdout)")
        #expect(r.stdout.contains("not fetched: the password file is refused"), "\(r.stdout)")
        #expect(r.stderr.contains("chmod 600"), "\(r.stderr)")
        #expect(try await user.run(["rooms", "list"]).exitCode == 3, "as every other command")
    }

    @Test func bareBedrudBotInAPipeStillPrintsHelp() async throws {
        let user = try CLIUser()
        let r = try await user.expect(0, [])
        #expect(r.stdout.hasPrefix("bedrud-bot: a headless meeting bot and recorder for Bedrud.") || r.stdout.contains("USAGE") || r.stdout.contains("Usage"), "\(r.stdout.prefix(300))")
        #expect(!r.stdout.contains("No Bedrud server is set up yet."))
    }

    @Test func bareBedrudBotOnATerminalShowsTheStatus() async throws {
        let user = try CLIUser()
        // script(1) (util-linux, essential in Debian) gives the binary a terminal as stdout.
        let r = try await offPool {
            try Subprocess.run(URL(fileURLWithPath: "/usr/bin/script"), ["-qec", Repo.binary.path, "/dev/null"], environment: user.environment,
                               timeout: 60, inheritEnvironment: false)
        }
        #expect(r.exitCode == 0)
        #expect(r.stdout.hasPrefix("No Bedrud server is set up yet.\r\n"), "\(r.stdout.prefix(200))")
        let help = try await user.expect(0, ["--help"])
        #expect(!help.stdout.contains("No Bedrud server is set up yet."))
    }

    @Test func severalInstancesAndNoDefaultSayHowToPickOne() async throws {
        let user = try CLIUser()
        _ = try user.writeFile(".config/bedrud-bot/config", "[instance a]\nurl = https://a.example.com\n\n[instance b]\nurl = https://b.example.com\n")
        let r = try await user.expect(0, ["status"])
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count > 1 && lines[1] == "Configured: a, b. Pick one with: bedrud-bot instance use NAME (or -i NAME)", "\(r.stdout)")
    }

    @Test func theLoggedOutTextSaysWhatTheServerRequires() {
        let r = StatusCommand.Report(state: .loggedOut, instance: .init(name: "work", url: "https://meet.example.com"), instances: ["work"],
                                     server: .init(reachable: true, requireEmailVerification: true, guestLoginEnabled: false, registrationEnabled: false),
                                     recordings: [])
        #expect(StatusCommand.lines(r) == [
            "Server: work (https://meet.example.com)",
            "Not logged in.",
            "  The server requires a verified email address: verify the account's email before logging in.",
            "  Guests are not allowed on this server: log in with an account.",
            "Log in with: bedrud-bot login --email you@example.com",
            "",
            "Recordings: none yet (bedrud-bot join ROOM --record)",
        ])
        var open = r
        open.server = .init(reachable: true, requireEmailVerification: false, guestLoginEnabled: true)
        #expect(StatusCommand.lines(open)[2...3] == [
            "  The server does not require email verification.",
            "  Guests are allowed: bedrud-bot login --guest \"Meeting recorder\"",
        ])
    }
}

import Foundation
import Testing
import TestSupport

/// Bad configuration is a one-line error with file:line and exit code 3; typos are
/// warnings with a suggestion.
@Suite struct CLIConfigTests {
    static let cases: [(String, Int32, String)] = [
        ("log_level = info\n[network]\nconect_timeout = 5s\n", 0, "unknown key 'conect_timeout' in [network]; did you mean 'connect_timeout'?"),
        ("[network]\nconnect_timeout = ten seconds\n", 3, "config:2: network.connect_timeout: expected a duration like 90s, 30m or 2h, got 'ten seconds'"),
        ("[instance work]\nurl = \"https://x.example\n", 3, "config:2: unterminated quoted value"),
        ("[instance]\nurl = https://x.example\n", 3, "config:1: section [instance] needs a name"),
        ("[instance work]\nemail = a@b.c\n", 3, "config:1: [instance work] has no url"),
        ("default_instance = nope\n[instance work]\nurl = https://x.example\n", 3, "config:1: default_instance names 'nope'"),
        ("[instance work]\nurl = https://x.example\ntls_insecure = maybe\n", 3, "config:3: instance.tls_insecure: expected yes or no, got 'maybe'"),
        ("[instance work]\nurl = https://x.example\npin_sha256 = 12:34\n", 3, "config:3: instance.pin_sha256: expected a SHA-256 fingerprint"),
        ("[record]\nmix_bitrate = fast\n", 3, "config:2: record.mix_bitrate: expected a bit rate between 6k and 510k, like 64k, got 'fast'"),
        ("[record]\nmix_bitrate = 600k\n", 3, "config:2: record.mix_bitrate: expected a bit rate between 6k and 510k"),
        ("[record]\nmix_coder = silk\n", 3, "config:2: record.mix_coder: expected one of celt, voice, got 'silk'"),
        ("[netwrok]\nconnect_timeout = 5s\n", 0, "unknown section [netwrok]; did you mean [network]?"),
        ("[network]\nemail = a@b.c\n", 0, "it belongs in an [instance NAME] section"),
    ]

    @Test(arguments: cases)
    func configCheckReportsTheLine(text: String, code: Int32, message: String) async throws {
        let user = try CLIUser()
        let path = try user.writeFile("config", text)
        let r = try await user.expect(code, ["config", "check", path])
        let all = r.stdout + r.stderr
        #expect(all.contains(message), "\(all)")
        if code == 3 {
            // One line, naming the file.
            let errorLines = r.stderr.split(separator: "\n").filter { $0.contains("error") }
            #expect(errorLines.count == 1)
            #expect(errorLines.first?.contains(path) == true)
        }
    }

    @Test func everyCommandRefusesABrokenConfig() async throws {
        let user = try CLIUser()
        _ = try user.writeFile(".config/bedrud-bot/config", "[network]\nread_timeout = 5 parsecs\n")
        let r = try await user.expect(3, ["rooms", "list"])
        #expect(r.stderr.contains("config:2:"))
    }

    @Test func sampleConfigPassesCheck() async throws {
        let user = try CLIUser()
        let sample = Repo.root.appendingPathComponent("samples/bedrud-bot.conf").path
        let r = try await user.expect(0, ["config", "check", sample])
        #expect(r.stdout.contains("OK"))
        #expect(!r.stderr.contains("unknown key"))
    }

    @Test func configShowNamesSourcesAndPrecedence() async throws {
        let user = try CLIUser()
        _ = try user.writeFile(".config/bedrud-bot/config", """
            log_level = warning
            [network]
            connect_timeout = 7s
            read_timeout = 9s
            [instance work]
            url = https://work.example
            email = rec@work.example
            """)
        user.extraEnvironment["BEDRUD_BOT_NETWORK_READ_TIMEOUT"] = "11s"
        user.extraEnvironment["BEDRUD_BOT_EMAIL"] = "env@work.example"
        let r = try await user.expect(0, ["config", "show", "--log-level", "debug"])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        func line(_ key: String) -> String { lines.first { $0.hasPrefix(key + " =") } ?? "" }
        #expect(line("log_level").contains("debug") && line("log_level").contains("flag --log-level"))
        #expect(line("connect_timeout").contains("7s") && line("connect_timeout").contains("config:3"))
        #expect(line("read_timeout").contains("11s") && line("read_timeout").contains("env BEDRUD_BOT_NETWORK_READ_TIMEOUT"))
        #expect(line("request_timeout").contains("60s") && line("request_timeout").contains("default"))
        #expect(line("email").contains("env@work.example") && line("email").contains("env BEDRUD_BOT_EMAIL"))
    }

    @Test func environmentTyposAreCaught() async throws {
        let user = try CLIUser()
        user.extraEnvironment["BEDRUD_BOT_NETWORK_CONNECT_TIMEOUT"] = "soon"
        var r = try await user.expect(3, ["config", "show"])
        #expect(r.stderr.contains("BEDRUD_BOT_NETWORK_CONNECT_TIMEOUT: expected a duration"))
        user.extraEnvironment = ["BEDRUD_BOT_PASWORD": "x"]
        r = try await user.expect(0, ["config", "show"])
        #expect(r.stderr.contains("did you mean BEDRUD_BOT_PASSWORD?"))
    }

    @Test func sessionFileReadableByOthersIsRefused() async throws {
        let user = try CLIUser()
        _ = try user.writeFile(".config/bedrud-bot/config", "[instance work]\nurl = http://127.0.0.1:9\n")
        let session = try user.writeFile(".local/state/bedrud-bot/sessions/work.json", "{}", mode: 0o644)
        chmod(user.stateDir + "/sessions", 0o700)
        let r = try await user.expect(3, ["whoami"])
        #expect(r.stderr.contains("Refusing to use \(session)"))
        #expect(r.stderr.contains("chmod 600 \(session)"))
    }

    @Test func passwordFileReadableByOthersIsRefused() async throws {
        let server = try await DevServer.start(["--seed-user", "a@example.com:a long enough password"])
        let user = try CLIUser()
        let pw = try user.writeFile("pw", "a long enough password", mode: 0o644)
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--no-check"])
        let r = try await user.expect(3, ["login", "--email", "a@example.com", "--password-file", pw])
        #expect(r.stderr.contains("chmod 600"))
    }

    @Test func usageErrors() async throws {
        let user = try CLIUser()
        var r = try await user.expect(2, ["rooms", "craete"])
        #expect(r.stderr.contains("Did you mean 'create'?"))
        r = try await user.expect(2, ["rooms", "list", "--jsno"])
        #expect(r.stderr.contains("Did you mean '--json'?"))
        r = try await user.expect(2, ["instance", "add"])
        #expect(r.stderr.contains("missing argument URL"))
        r = try await user.expect(2, ["rooms"])
        #expect(r.stderr.contains("needs a subcommand"))
        r = try await user.expect(0, ["login", "--help"])
        #expect(r.stdout.contains("--password-file FILE"))
        r = try await user.expect(0, ["--help"])
        #expect(r.stdout.contains("Exit codes:"))
        #expect(r.stdout.contains("  8    TLS failure"))
    }
}

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
        // A value must never crash the process: this one trapped (SIGILL, exit 132).
        ("[record]\nmix_bitrate = 18446744073709551616k\n", 3, "config:2: record.mix_bitrate: expected a bit rate between 6k and 510k, like 64k, got '18446744073709551616k'"),
        ("[network]\nconnect_timeout = 99999999999999999999999h\n", 3, "config:2: network.connect_timeout: expected a duration of at most 5m, got '99999999999999999999999h'"),
        ("[network]\nread_timeout = 1e309s\n", 3, "config:2: network.read_timeout: expected a duration like 90s, 30m or 2h, got '1e309s'"),
        ("[record]\nsplit_size = 18446744073709551616k\n", 3, "config:2: record.split_size: expected a size of at most 1024GiB, got '18446744073709551616k'"),
        // CRLF is read like LF (it was one long line: OK, 0 instances); a lone CR is an error.
        ("# my bot\r\nlog_level = bogus\r\n[instance p]\r\nurl = http://127.0.0.1:9\r\n", 3, "config:2: log_level: expected one of trace, debug, info, warning, error, off, got 'bogus'"),
        ("# my bot\r\n[instance p]\r\nurl = http://127.0.0.1:9\r\n", 0, "config: OK (1 instance, default 'p')."),
        ("log_level = info\rurl = x\n", 3, "config:1: a carriage return (CR) inside the line"),
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

    /// `BEDRUD_BOT_RECORD_MIX_BITRATE=10000000000000000k bedrud-bot config show` and
    /// `play --bitrate 10000000000000000k` trapped (exit 132) like the file did.
    @Test func hugeNumbersInTheEnvironmentAndFlagsAreErrors() async throws {
        let user = try CLIUser()
        user.extraEnvironment["BEDRUD_BOT_RECORD_MIX_BITRATE"] = "10000000000000000k"
        var r = try await user.expect(3, ["config", "show"])
        #expect(r.stderr.contains("BEDRUD_BOT_RECORD_MIX_BITRATE: expected a bit rate between 6k and 510k, like 64k, got '10000000000000000k'"), "\(r.stderr)")
        user.extraEnvironment = ["BEDRUD_BOT_NETWORK_CONNECT_TIMEOUT": "99999999999999999999999h"]
        r = try await user.expect(3, ["config", "show"])
        #expect(r.stderr.contains("BEDRUD_BOT_NETWORK_CONNECT_TIMEOUT: expected a duration of at most 5m, got '99999999999999999999999h'"), "\(r.stderr)")
        user.extraEnvironment = [:]
        r = try await user.expect(2, ["play", "standup", "--tone", "440", "--bitrate", "10000000000000000k"])
        #expect(r.stderr.contains("--bitrate expects a bit rate between 6k and 510k, like 48k, got '10000000000000000k'"), "\(r.stderr)")
        r = try await user.expect(2, ["join", "standup", "--duration", "99999999999999999999999h"])
        #expect(r.stderr.contains("--duration expects a duration"), "\(r.stderr)")
    }

    /// `join -c FILE` with no such file carried on ("no Bedrud server configured", or the
    /// environment's server with defaults). Only the default locations may be absent.
    @Test func anExplicitConfigFileMustBeReadable() async throws {
        let user = try CLIUser()
        let missing = user.home.appendingPathComponent("nope.conf").path
        var r = try await user.expect(3, ["-c", missing, "join", "standup"])
        #expect(r.stderr.contains("\(missing): cannot read the config file: it does not exist"), "\(r.stderr)")
        user.extraEnvironment = ["BEDRUD_BOT_URL": "http://127.0.0.1:9", "BEDRUD_BOT_CONFIG": missing]
        r = try await user.expect(3, ["join", "standup"])
        #expect(r.stderr.contains("\(missing): cannot read the config file: it does not exist"), "\(r.stderr)")
        user.extraEnvironment = [:]
        let link = user.home.appendingPathComponent("link.conf").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: link)
        r = try await user.expect(3, ["-c", link, "config", "show"])
        #expect(r.stderr.contains("\(link): cannot read the config file: its symbolic links go round in a loop"), "\(r.stderr)")
        r = try await user.expect(3, ["config", "check", link])
        #expect(r.stderr.contains("\(link): cannot read the config file: its symbolic links go round in a loop"), "\(r.stderr)")
        // instance add creates the file it is given.
        try await user.expect(0, ["-c", missing, "instance", "add", "http://127.0.0.1:9", "--name", "x", "--no-check"])
        #expect(FileManager.default.fileExists(atPath: missing))
    }

    /// "the file is not UTF-8 text", with no line: now its line and column.
    @Test func invalidUTF8IsReportedAtItsLineAndColumn() async throws {
        let user = try CLIUser()
        let path = user.home.appendingPathComponent("latin1.conf").path
        try Data(Array("[network]\n# caf".utf8) + [0xE9] + Array(" au lait\n".utf8)).write(to: URL(fileURLWithPath: path))
        let r = try await user.expect(3, ["config", "check", path])
        #expect(r.stderr.contains("\(path):2: column 6: byte 0xE9 is not UTF-8 text; save the file as UTF-8"), "\(r.stderr)")
    }

    /// A 100 kB key was printed whole in its warning (values were cut, keys were not).
    @Test func echoedKeysAreCut() async throws {
        let user = try CLIUser()
        let path = try user.writeFile("long.conf", String(repeating: "k", count: 100_000) + " = 1\n")
        let r = try await user.expect(0, ["config", "check", path])
        #expect(r.stderr.utf8.count < path.utf8.count + 150, "\(r.stderr.utf8.count) bytes of warning")
        #expect(r.stderr.contains("\(path):1: unknown key '\(String(repeating: "k", count: 40))… (100000 bytes in all)'"), "\(r.stderr.prefix(300))")
    }

    /// A 64 MB password file was read whole; a 50 MB config took 27 s and 1 GB.
    @Test func bigFilesAreRefusedWithoutReadingThem() async throws {
        let user = try CLIUser()
        let big = try user.writeFile("big.conf", String(repeating: "log_level = info\n", count: 70_000))
        var r = try await user.expect(3, ["config", "check", big])
        #expect(r.stderr.contains("\(big): the file is 1190000 bytes; a config file may be at most 1MiB"), "\(r.stderr)")
        // Below the limit, a file of repeats prints 20 warnings and a count.
        let dup = try user.writeFile("dup.conf", String(repeating: "log_level = info\n", count: 50_001))
        r = try await user.expect(0, ["config", "check", dup])
        #expect(r.stderr.split(separator: "\n").count == 21, "\(r.stderr.prefix(3000))")
        #expect(r.stderr.contains("… and 49,980 more warnings"), "\(r.stderr.suffix(300))")
        #expect(r.stdout.contains("OK (0 instances, 50,000 warnings)"), "\(r.stdout)")
    }

    /// A world-readable password_file was accepted while a stored session was valid: the
    /// exit 3 came at the next login, in the middle of a schedule.
    @Test func aWorldReadablePasswordFileIsRefusedWhileTheSessionIsValid() async throws {
        let server = try await DevServer.start(["--seed-user", "a@example.com:a long enough password"])
        let user = try CLIUser()
        let pw = try user.writeFile("pw", "a long enough password\n", mode: 0o600)
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "a@example.com", "--password-file", pw, "--no-check"])
        try await user.expect(0, ["login"])
        try await user.expect(0, ["whoami"])
        chmod(pw, 0o644)
        var r = try await user.expect(3, ["join", "standup", "--dry-run"])
        #expect(r.stderr.contains("Refusing to use \(pw): its permissions (644) let other users read it. Fix it with: chmod 600 \(pw)"), "\(r.stderr)")
        r = try await user.expect(3, ["whoami"])
        #expect(r.stderr.contains("chmod 600 \(pw)"), "\(r.stderr)")
        r = try await user.expect(0, ["config", "check"])
        #expect(r.stderr.contains("[instance dev] Refusing to use \(pw): its permissions (644)"), "\(r.stderr)")
        #expect(r.stdout.contains("OK (1 instance, default 'dev', 1 warning)"), "\(r.stdout)")
        chmod(pw, 0o600)
        try await user.expect(0, ["whoami"])
    }

    /// A wrong `record.jitter_wait` once became 60 ms without a word; from the file or the
    /// environment it is a config error (exit 3) naming the key and the limit.
    @Test func aWrongJitterWaitStopsJoin() async throws {
        let user = try CLIUser()
        let path = try user.writeFile("config", "[record]\njitter_wait = 2s\n[instance p]\nurl = http://127.0.0.1:9\n")
        var r = try await user.expect(3, ["join", "standup", "-c", path])
        #expect(r.stderr.contains("config:2: record.jitter_wait: expected a duration of at most 1s, got '2s'"), "\(r.stderr)")
        user.extraEnvironment["BEDRUD_BOT_RECORD_JITTER_WAIT"] = "soon"
        r = try await user.expect(3, ["join", "standup"])
        #expect(r.stderr.contains("BEDRUD_BOT_RECORD_JITTER_WAIT: expected a duration like 90s, 30m or 2h, got 'soon'"), "\(r.stderr)")
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

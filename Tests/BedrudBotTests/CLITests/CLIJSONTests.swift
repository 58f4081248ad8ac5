import Foundation
import Testing
import TestSupport

/// Machine-readable output. `join --json` prints the transcript's objects,
/// `--log-format json` makes every stderr line a JSON object, and the account commands'
/// `--json` carries what their text shows, as values, never a secret.
@Suite(.serialized) struct CLIJSONTests {
    static let password = "correct horse battery staple"

    static func objects(_ text: String) -> [[String: Any]?] {
        text.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func joinJSONPrintsTheTranscriptAndLogsAsJSON() async throws {
        let server = try await DevServer.start(scenarioText: """
            room jsonroom public
            start first-join
            at 0s join alice name="Alice Martin"
            at 0s tone alice 440Hz 2s amplitude=0.3
            at 1s chat alice "see the notes"
            at 4s leave alice
            """)
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path

        // With --record: stdout is events.jsonl, line for line; no human event lines.
        let r = try await user.expect(0, ["join", server.baseURL + "/m/jsonroom", "--json", "--record", "--output", out, "--alone-timeout", "1s"], timeout: 90)
        let session = try #require(try FileManager.default.contentsOfDirectory(atPath: out + "/jsonroom").first)
        let dir = out + "/jsonroom/" + session
        let file = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8)
        #expect(r.stdout == file, "stdout:\n\(r.stdout)\nevents.jsonl:\n\(file)")
        let types = Self.objects(r.stdout).map { $0?["type"] as? String }
        for t in ["session_started", "joined", "participant_joined", "chat", "speaking_turn", "participant_left", "session_ended"] {
            #expect(types.contains(t), "no \(t) on stdout: \(types)")
        }
        #expect(!r.stdout.contains("joined room"), "no human lines in --json mode: \(r.stdout)")
        #expect(r.stderr.contains("Recording into"), "notes stay on stderr: \(r.stderr)")
        try await expectValidEvents(dir)

        // Without --record, under --log-format json: the same objects on stdout, and every
        // stderr line one JSON log object.
        let live = try await user.expect(0, ["--log-format", "json", "join", server.baseURL + "/m/jsonroom", "--json", "--duration", "2s"], timeout: 60)
        let saved = try user.writeFile("live.jsonl", live.stdout)
        let check = try await EventSchema.run([saved])
        #expect(check.exitCode == 0, "\(check.stdout)\(check.stderr)")
        let liveTypes = Self.objects(live.stdout).map { $0?["type"] as? String }
        #expect(liveTypes.first == "session_started" && liveTypes.last == "session_ended" && liveTypes.contains("joined"), "\(liveTypes)")
        #expect(!FileManager.default.fileExists(atPath: user.home.appendingPathComponent("events.jsonl").path))
        let logs = Self.objects(live.stderr)
        #expect(!logs.isEmpty && logs.allSatisfy { o in
            guard let o else { return false }
            return Set(o.keys) == ["time", "level", "category", "message"] && (o["time"] as? String)?.hasSuffix("Z") == true
        }, "stderr:\n\(live.stderr)")
        #expect(logs.contains { ($0?["message"] as? String)?.hasPrefix("Room 'jsonroom' on ") == true && $0?["level"] as? String == "info" }, "\(live.stderr)")

        // Signalling only (--no-media): the same objects, offsets from the connect.
        let signalling = try await user.expect(0, ["-q", "join", server.baseURL + "/m/jsonroom", "--json", "--no-media", "--duration", "1s"], timeout: 60)
        let signallingFile = try user.writeFile("signalling.jsonl", signalling.stdout)
        let signallingCheck = try await EventSchema.run([signallingFile])
        #expect(signallingCheck.exitCode == 0, "\(signallingCheck.stdout)\(signallingCheck.stderr)")
        #expect(Self.objects(signalling.stdout).contains { $0?["type"] as? String == "joined" }, "\(signalling.stdout)")
        #expect(signalling.stderr.isEmpty, "\(signalling.stderr)")
    }

    /// Decoding every track is most of what a listening bot costs, so `join` decodes only
    /// when something uses it: `--json` (speech turns), a recording or the live view. Both
    /// bots listen to the same speaker at once; stdout is a pipe, so neither has a live view.
    @Test func audioIsDecodedOnlyWhenSomethingUsesIt() async throws {
        let server = try await DevServer.start(scenarioText: """
            room hum public
            at 0s join alice name="Alice Martin"
            at 0s tone alice 300Hz 60s amplitude=0.3
            """)
        let link = server.baseURL + "/m/hum"
        let quiet = try CLIUser(), listening = try CLIUser()
        async let plainRun = quiet.expect(0, ["-v", "join", link, "--duration", "4s"], timeout: 60)
        async let jsonRun = listening.expect(0, ["-v", "join", link, "--json", "--duration", "4s"], timeout: 60)
        let (plain, json) = try await (plainRun, jsonRun)
        #expect(plain.stderr.contains("not decoding the audio: no recording, no --json, no live view"), "\(plain.stderr)")
        #expect(!json.stderr.contains("not decoding"), "\(json.stderr)")
        let turns = Self.objects(json.stdout).filter { $0?["type"] as? String == "speaking_turn" }
        #expect(!turns.isEmpty, "the decoding bot heard Alice speak: \(json.stdout)")
    }

    @Test func anExpiredSessionIsAValue() async throws {
        let server = try await DevServer.start(["--seed-user", "rec@example.com:\(Self.password):Recorder", "--access-ttl", "2s"])
        let user = try CLIUser()
        let pwFile = try user.writeFile("secrets/pw", Self.password + "\n")
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com"])
        try await user.expect(0, ["login", "--password-file", pwFile])
        // The access token lives 2 s: wait (with a deadline) until the list says so.
        let listed = try await waitFor("the session no longer logged in", timeout: 20, every: 0.3) { () -> String? in
            let r = try await user.expect(0, ["instance", "list", "--json"])
            let row = (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])?.first ?? [:]
            return row["session"] as? String != "logged_in" ? r.stdout : nil
        }
        let row = (try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])?.first ?? [:]
        #expect(row["session"] as? String == "expired" && row["token_valid_seconds"] as? Int == 0 && row["token_expires_at"] is String, "\(row)")
        // whoami refreshes the session on use: valid again.
        let me = try await user.expect(0, ["whoami", "--json"])
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(me.stdout.utf8)) as? [String: Any])
        #expect(obj["token_expired"] as? Bool == false, "\(obj)")
    }

    @Test func accountCommandsPrintValuesNotSentences() async throws {
        let server = try await DevServer.start(["--seed-user", "rec@example.com:\(Self.password):Recorder"])
        let user = try CLIUser()
        let pwFile = try user.writeFile("secrets/pw", Self.password + "\n")
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com"])

        func json(_ args: [String]) async throws -> Any {
            let r = try await user.expect(0, args)
            return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8), options: [.fragmentsAllowed])
        }
        var list = try #require(try await json(["instance", "list", "--json"]) as? [[String: Any]])
        #expect(list.count == 1 && list[0]["name"] as? String == "dev" && list[0]["default"] as? Bool == true)
        #expect(list[0]["session"] as? String == "logged_out", "\(list)")
        #expect(list[0]["token_expires_at"] is NSNull && list[0]["logged_in_as"] is NSNull)

        try await user.expect(0, ["login", "--password-file", pwFile])
        list = try #require(try await json(["instance", "list", "--json"]) as? [[String: Any]])
        #expect(list[0]["session"] as? String == "logged_in" && list[0]["logged_in_as"] as? String == "rec@example.com", "\(list)")
        #expect((list[0]["token_valid_seconds"] as? Int ?? 0) > 0 && list[0]["token_expires_at"] is String, "\(list)")

        let me = try #require(try await json(["whoami", "--json"]) as? [String: Any])
        #expect(me["instance"] as? String == "dev" && me["url"] as? String == server.baseURL, "\(me)")
        #expect((me["user"] as? [String: Any])?["email"] as? String == "rec@example.com")
        #expect(me["token_expired"] as? Bool == false && (me["token_valid_seconds"] as? Int ?? 0) > 0, "\(me)")
        let expires = try #require(me["token_expires_at"] as? String)
        #expect(expires.count == 24 && expires.hasSuffix("Z"), "\(expires)")

        let created = try #require(try await json(["rooms", "create", "json-room", "--json"]) as? [String: Any])
        #expect(created["meeting_link"] as? String == server.baseURL + "/m/json-room", "\(created)")
        #expect(created["instance"] as? String == "dev" && (created["room"] as? [String: Any])?["name"] as? String == "json-room", "\(created)")

        user.extraEnvironment["BEDRUD_BOT_PASSWORD"] = Self.password
        let config = try #require(try await json(["config", "show", "--json"]) as? [String: Any])
        #expect(config["config_file"] as? String == user.configPath && config["config_file_exists"] as? Bool == true, "\(config)")
        let settings = try #require(config["settings"] as? [String: [String: Any]])
        #expect(settings["log_level"]?["value"] as? String == "info")
        #expect((settings["log_level"]?["origin"] as? [String: Any])?["kind"] as? String == "default")
        #expect(settings["record.output_dir"] != nil, "\(settings.keys.sorted())")
        let instances = try #require(config["instances"] as? [[String: Any]])
        let dev = try #require(instances.first)
        #expect(dev["name"] as? String == "dev" && dev["selected"] as? Bool == true)
        let devSettings = try #require(dev["settings"] as? [String: [String: Any]])
        #expect(devSettings["url"]?["value"] as? String == server.baseURL)
        #expect((devSettings["url"]?["origin"] as? [String: Any])?["kind"] as? String == "file", "\(devSettings)")
        #expect(devSettings["password"]?["value"] as? String == "********")

        // The error that ends a command is a JSON log line too.
        let missing = try await user.expect(5, ["--log-format", "json", "rooms", "delete", "no-such-room"])
        let line = try #require(Self.objects(missing.stderr).first ?? nil, "\(missing.stderr)")
        #expect(missing.stderr.split(separator: "\n").count == 1)
        #expect(line["level"] as? String == "error" && (line["message"] as? String)?.contains("no room named 'no-such-room'") == true, "\(line)")
        let bad = try await user.expect(2, ["--log-format", "yaml", "whoami"])
        #expect(bad.stderr.contains("--log-format must be text or json"))

        // Secrets never shown.
        #expect(!user.transcript.contains(Self.password))
        #expect(!user.transcript.contains("eyJ"))  // no JWT anywhere
    }
}

import Foundation
import Testing
import TestSupport

/// `bedrud-bot serve` as an operator runs it, against the devserver's Bedrud v0.12.0
/// webhooks: `webhooks add` registers the endpoint and writes the secret, serve records
/// meetings that only a webhook announces, reconciles after a restart, refuses what it
/// must, and shares rooms between shards.
@Suite(.serialized) struct CLIServeTests {
    static let password = "serve-test-password-1"

    /// A TCP port nobody listens on now (bound to port 0 and released).
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return UInt16(bigEndian: a.sin_port)
    }

    /// A superadmin recorder account, rooms, and a CLI user configured for it.
    static func setUp(rooms: [String]) async throws -> (DevServer, CLIUser) {
        var args = ["--seed-user", "rec@example.com:\(password):Recorder", "--superadmin", "rec@example.com"]
        for r in rooms { args += ["--seed-room", r] }
        let server = try await DevServer.start(args)
        let user = try CLIUser()
        let pw = try user.writeFile("password", password)
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com", "--password-file", pw])
        user.extraEnvironment["BEDRUD_BOT_RECORD_ALONE_TIMEOUT"] = "2s"
        return (server, user)
    }

    /// Registers `http://127.0.0.1:PORT/bedrud/webhook` as a user would; returns the secret file.
    static func register(_ user: CLIUser, port: UInt16, name: String = "secret") async throws -> String {
        let file = user.home.appendingPathComponent(name).path
        let r = try await user.expect(0, ["webhooks", "add", "http://127.0.0.1:\(port)/bedrud/webhook", "--secret-file", file])
        #expect(r.stdout.contains("for participant.joined, room.ended"), "\(r.stdout)")
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        return file
    }

    static func serve(_ user: CLIUser, port: UInt16, secret: String, out: String, extra: [String] = []) async throws -> ChildProcess {
        let p = try user.start(["serve", "--listen", "127.0.0.1:\(port)", "--secret-file", secret, "--output", out] + extra)
        try await p.line(on: .stderr, timeout: 30, "serve listens") { $0.contains("Listening on http://127.0.0.1:\(port)") }
        return p
    }

    /// A meeting in `room`: someone joins (firing participant.joined), talks, and leaves.
    static func meeting(_ server: DevServer, _ room: String, who: String = "alice", seconds: Int = 6) throws {
        let text = """
            at 0s join \(who) name="\(who.capitalized) Person"
            at 1s tone \(who) 440Hz \(seconds)s amplitude=0.3
            at \(seconds + 2)s leave \(who)
            """
        _ = try server.devBytes("/_dev/rooms/\(room)/scenario", body: Array(text.utf8))
    }

    /// The finished session folders of `room` under `out` (summary.json written).
    static func finished(_ out: String, _ room: String) -> [String] {
        let dir = out + "/" + room
        let sessions = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return sessions.sorted().map { dir + "/" + $0 }.filter { FileManager.default.fileExists(atPath: $0 + "/summary.json") }
    }

    static func summary(_ dir: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))) as? [String: Any] ?? [:]
    }

    /// POSTs `body` to the port with a signature header; returns the HTTP status.
    static func post(port: UInt16, body: String, signature: String) throws -> Int {
        let r = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", """
            import sys, urllib.request, urllib.error
            req = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), headers={"X-Bedrud-Signature": sys.argv[3]})
            try:
                print(urllib.request.urlopen(req, timeout=10).status)
            except urllib.error.HTTPError as e:
                print(e.code)
            """, "http://127.0.0.1:\(port)/bedrud/webhook", body, signature], timeout: 20)
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    static func get(port: UInt16, _ path: String) throws -> String {
        try Subprocess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", """
            import sys, urllib.request
            print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
            """, "http://127.0.0.1:\(port)\(path)"], timeout: 20).stdout
    }

    @Test func recordsMeetingsOnlyAWebhookAnnouncesRefusesWhatItMustAndRejoinsAfterARestart() async throws {
        let (server, user) = try await Self.setUp(rooms: ["alpha", "beta", "closed:norecord", "gamma"])
        defer { server.stop() }
        let out = user.home.appendingPathComponent("rec").path
        let port = try Self.freePort()
        let secret = try await Self.register(user, port: port)
        // Webhooks alone first: Bedrud lists a room as occupied from its creator's row on, so a
        // reconcile would also join the seeded rooms before anyone is in them.
        user.extraEnvironment["BEDRUD_BOT_SERVE_RECONCILE_INTERVAL"] = "0"
        var p = try await Self.serve(user, port: port, secret: secret, out: out)
        defer { _ = p.stop(grace: 0) }
        try await waitUntil("ready", timeout: 30) { (try? Self.get(port: port, "/readyz"))?.contains("ready") == true }

        // Two meetings at once, announced only by their participant.joined webhooks.
        try Self.meeting(server, "alpha", who: "alice")
        try Self.meeting(server, "beta", who: "bob")
        try Self.meeting(server, "closed", who: "carol")
        try await waitUntil("both meetings finished", timeout: 90, every: 0.5) {
            !Self.finished(out, "alpha").isEmpty && !Self.finished(out, "beta").isEmpty
        }
        for room in ["alpha", "beta"] {
            let dir = try #require(Self.finished(out, room).first)
            try await CLIMultiRoomTests.expectVerified(user, dir)
            let s = try Self.summary(dir)
            #expect(s["end_reason"] as? String == "alone", "\(room): \(s)")
        }
        #expect(p.stderr.contains("[alpha] Recording the meeting in 'alpha' (announced by a webhook)."), "\(p.stderr)")
        #expect(p.stderr.contains("Told the room it is being recorded"), "\(p.stderr)")
        // A room whose owner does not allow recording: no folder, and the bot never joined it.
        #expect(!FileManager.default.fileExists(atPath: out + "/closed"))
        #expect(p.stderr.contains("Not recording 'closed': its owner does not allow recording"), "\(p.stderr)")
        let deliveries = try #require((try server.dev("GET", "/_dev/webhooks") as? [String: Any])?["deliveries"] as? [[String: Any]])
        let joins = deliveries.filter { ($0["event"] as? String) == "participant.joined" }.compactMap { $0["body"] as? String }
        #expect(!joins.contains { $0.contains("\"roomName\":\"closed\"") && $0.contains("Recorder") }, "the bot asked for no token in 'closed'")

        // A wrong signature is refused without a word and starts nothing.
        let forged = "{\"data\":{\"roomId\":\"x\",\"roomName\":\"gamma\",\"userId\":\"u\"},\"event\":\"participant.joined\",\"timestamp\":\"\(Self.nowRFC3339())\"}"
        #expect(try Self.post(port: port, body: forged, signature: "sha256=" + String(repeating: "0", count: 64)) == 401)
        #expect(try Self.post(port: port, body: forged, signature: "") == 401)
        let metrics = try Self.get(port: port, "/metrics")
        #expect(metrics.contains("bedrud_bot_webhook_requests_total{result=\"signature\"} 2"), "\(metrics)")
        #expect(metrics.contains("bedrud_bot_meetings_started_total{cause=\"webhook\"} 3"), "\(metrics)")
        #expect(metrics.contains("bedrud_bot_meetings_failed_total{reason=\"not_allowed\"} 1"), "\(metrics)")
        #expect(metrics.contains("bedrud_bot_meetings_finished_total{reason=\"alone\"} 2"), "\(metrics)")
        #expect(!FileManager.default.fileExists(atPath: out + "/gamma"))

        // Killed in the middle of a meeting: the restarted serve finds it by reconcile.
        try Self.meeting(server, "gamma", who: "dave", seconds: 25)
        try await p.line(on: .stderr, timeout: 30, "gamma recording") { $0.contains("[gamma] Recording into") }
        p.signal(SIGKILL)
        _ = await p.exit(timeout: 10)
        user.extraEnvironment["BEDRUD_BOT_SERVE_RECONCILE_INTERVAL"] = "2s"
        p = try await Self.serve(user, port: port, secret: secret, out: out)
        try await p.line(on: .stderr, timeout: 30, "reconcile rejoins gamma") { $0.contains("[gamma] Recording the meeting in 'gamma' (announced by the reconcile).") }
        try await waitUntil("gamma finished", timeout: 90, every: 0.5) { !Self.finished(out, "gamma").isEmpty }
        let gamma = try #require(Self.finished(out, "gamma").last)
        #expect(try Self.summary(gamma)["end_reason"] as? String == "alone")

        // SIGTERM: nothing is recording, serve stops at once with 0.
        p.signal(SIGTERM)
        let end = await p.exit(timeout: 30)
        #expect(end?.code == 0, "\(String(describing: end))\n\(p.stderr)")
        #expect(!user.transcript.contains(try String(contentsOfFile: secret, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(!p.stderr.contains(try String(contentsOfFile: secret, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test func twoShardsReceivingEveryWebhookRecordEachMeetingOnce() async throws {
        let rooms = ["room-one", "room-two", "room-three", "room-four"]
        let (server, user) = try await Self.setUp(rooms: rooms)
        defer { server.stop() }
        user.extraEnvironment["BEDRUD_BOT_SERVE_RECONCILE_INTERVAL"] = "0"
        var shards: [(ChildProcess, String)] = []
        for k in 0..<2 {
            let port = try Self.freePort()
            let secret = try await Self.register(user, port: port, name: "secret-\(k)")
            let out = user.home.appendingPathComponent("rec-\(k)").path
            shards.append((try await Self.serve(user, port: port, secret: secret, out: out, extra: ["--shard", "\(k)/2"]), out))
        }
        defer { for (p, _) in shards { _ = p.stop(grace: 0) } }
        for (i, room) in rooms.enumerated() { try Self.meeting(server, room, who: ["alice", "bob", "carol", "dave"][i], seconds: 4) }
        try await waitUntil("every meeting recorded", timeout: 120, every: 0.5) {
            rooms.allSatisfy { room in shards.contains { !Self.finished($0.1, room).isEmpty } }
        }
        // Let a late duplicate show itself, then count.
        try await Task.sleep(for: .seconds(3))
        for room in rooms {
            let count = shards.map { Self.finished($0.1, room).count + ((try? FileManager.default.contentsOfDirectory(atPath: $0.1 + "/" + room).count) ?? 0) }
            #expect(count.reduce(0, +) == 2, "\(room) is recorded by exactly one shard, once: \(count)")
        }
        for (p, _) in shards {
            p.signal(SIGTERM)
            #expect(await p.exit(timeout: 30)?.code == 0, "\(p.stderr)")
        }
    }

    /// `webhooks list|test|remove` as a superadmin; anyone else is told they need that.
    @Test func webhooksAreListedTestedAndRemoved() async throws {
        let (server, user) = try await Self.setUp(rooms: [])
        defer { server.stop() }
        let port = try Self.freePort()  // nothing listens there
        _ = try await Self.register(user, port: port)
        let list = try await user.expect(0, ["webhooks", "list", "--json"])
        let hooks = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(hooks.count == 1 && hooks.first?["url"] as? String == "http://127.0.0.1:\(port)/bedrud/webhook", "\(list.stdout)")
        #expect(!list.stdout.contains("secret"), "the list shows no secret, masked or not")
        let id = try #require(hooks.first?["id"] as? String)
        let test = try await user.expect(7, ["webhooks", "test", id])
        #expect(test.stderr.contains("Bedrud could not deliver the ping"), "\(test.stderr)")
        try await user.expect(0, ["webhooks", "remove", id])
        try await user.expect(5, ["webhooks", "remove", id])
        #expect(try await user.expect(0, ["webhooks", "list"]).stdout.contains("No webhook endpoints"))

        let other = try CLIUser()
        let pw = try other.writeFile("password", Self.password)
        try await other.expect(0, ["instance", "add", server.baseURL, "--name", "dev"])
        try await other.expect(0, ["register", "--email", "someone@example.com", "--name", "Someone", "--password-file", pw])
        let refused = try await other.expect(6, ["webhooks", "list"])
        #expect(refused.stderr.contains("is not a superadmin"), "\(refused.stderr)")
    }

    /// `room.ended` (an owner deleted the room) finishes that meeting's recording at once.
    @Test func aDeletedRoomsRecordingIsFinishedAtOnce() async throws {
        let (server, user) = try await Self.setUp(rooms: ["doomed"])
        defer { server.stop() }
        user.extraEnvironment["BEDRUD_BOT_SERVE_RECONCILE_INTERVAL"] = "0"
        let port = try Self.freePort()
        let secret = try await Self.register(user, port: port)
        let out = user.home.appendingPathComponent("rec").path
        let p = try await Self.serve(user, port: port, secret: secret, out: out)
        defer { _ = p.stop(grace: 0) }
        try Self.meeting(server, "doomed", who: "erin", seconds: 60)
        try await p.line(on: .stdout, timeout: 30, "Erin speaks") { $0.hasPrefix("[doomed] ") && $0.contains("speaking: Erin Person") }
        try await user.expect(0, ["rooms", "delete", "doomed"])
        try await p.line(on: .stderr, timeout: 15, "finishing") { $0.contains("was deleted: finishing its recording") }
        try await waitUntil("the files finished", timeout: 30, every: 0.2) { !Self.finished(out, "doomed").isEmpty }
        let dir = try #require(Self.finished(out, "doomed").first)
        try await CLIMultiRoomTests.expectVerified(user, dir)
    }

    /// A webhook body for `room`, signed with `secret` as Bedrud signs (HMAC-SHA256, hex).
    static func signed(_ secret: String, room: String) throws -> (body: String, signature: String) {
        let body = "{\"data\":{\"roomId\":\"id-\(room)\",\"roomName\":\"\(room)\",\"userId\":\"u\"},\"event\":\"ping\",\"timestamp\":\"\(Self.nowRFC3339())\"}"
        let r = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", """
            import hashlib, hmac, sys
            print("sha256=" + hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha256).hexdigest())
            """, secret, body], timeout: 20)
        return (body, r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// SIGHUP reads a rotated secret: the old one is refused from then on, the new one
    /// accepted, and serve goes on; the secret is never printed.
    @Test func sighupReadsARotatedSecret() async throws {
        let (server, user) = try await Self.setUp(rooms: ["alpha"])
        defer { server.stop() }
        user.extraEnvironment["BEDRUD_BOT_SERVE_RECONCILE_INTERVAL"] = "0"
        let port = try Self.freePort()
        let secretFile = try user.writeFile("secret", "first-secret-0123456789abcdef\n")
        let p = try await Self.serve(user, port: port, secret: secretFile, out: user.home.appendingPathComponent("rec").path)
        defer { _ = p.stop(grace: 0) }
        let one = try Self.signed("first-secret-0123456789abcdef", room: "alpha")
        #expect(try Self.post(port: port, body: one.body, signature: one.signature) == 200)
        _ = try user.writeFile("secret", "second-secret-0123456789abcdef\n")
        p.signal(SIGHUP)
        try await p.line(on: .stderr, timeout: 20, "reloaded") { $0.contains("Reloaded the configuration and the webhook secret (SIGHUP).") }
        let old = try Self.signed("first-secret-0123456789abcdef", room: "alpha")
        #expect(try Self.post(port: port, body: old.body, signature: old.signature) == 401)
        let new = try Self.signed("second-secret-0123456789abcdef", room: "alpha")
        #expect(try Self.post(port: port, body: new.body, signature: new.signature) == 200)
        p.signal(SIGTERM)
        #expect(await p.exit(timeout: 30)?.code == 0)
        #expect(!p.stderr.contains("secret-0123456789abcdef"))
    }

    static func nowRFC3339() -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Date())
    }
}

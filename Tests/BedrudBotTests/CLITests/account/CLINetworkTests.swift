import BedrudProtocol
import Foundation
import Testing
import TestSupport

/// TLS trust and misbehaving servers, end to end through the CLI.
@Suite struct CLINetworkTests {
    static let password = "correct horse battery staple"

    @Test func tlsWithCAFilePinAndRefusal() async throws {
        let server = try await DevServer.start(["--tls", "--seed-user", "rec@example.com:\(Self.password)"])
        #expect(server.baseURL.hasPrefix("https://"))
        let ca = try #require(server.caFile)
        let pin = try #require(server.pinSHA256)
        let user = try CLIUser()
        let pw = try user.writeFile("pw", Self.password)

        // Neither: refused with the fingerprint and what to do, exit 8.
        var r = try await user.expect(8, ["instance", "add", server.baseURL, "--name", "plain"])
        #expect(r.stderr.contains("not trusted"))
        #expect(r.stderr.contains("ca_file"))

        // ca_file.
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "viaca", "--ca-file", ca, "--email", "rec@example.com"])
        r = try await user.expect(0, ["login", "--password-file", pw])
        #expect(r.stdout.contains("Logged in to viaca"))
        try await user.expect(0, ["whoami"])
        try await user.expect(0, ["instance", "remove", "viaca"])

        // Pinned fingerprint.
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "viapin", "--pin-sha256", pin, "--email", "rec@example.com"])
        r = try await user.expect(0, ["login", "--password-file", pw])
        #expect(r.stdout.contains("Logged in to viapin"))
        r = try await user.expect(0, ["rooms", "list"])

        // A wrong pin is refused.
        let config = user.configPath
        var text = try String(contentsOfFile: config, encoding: .utf8)
        text = text.replacingOccurrences(of: pin, with: String(repeating: "ab", count: 32))
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        r = try await user.expect(8, ["whoami"])
        #expect(r.stderr.contains("does not match the pinned fingerprint"))

        // Insecure works, with a warning on every run.
        try await user.expect(0, ["instance", "add", server.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost"), "--name", "yolo", "--tls-insecure"])
        r = try await user.expect(0, ["-i", "yolo", "login", "--email", "rec@example.com", "--password-file", pw])
        #expect(r.stderr.contains("TLS certificate verification is OFF"))
        #expect(!user.transcript.contains(Self.password))
    }

    /// Points an instance at a scripted server and runs `whoami` (which needs a session,
    /// so one is planted) or `instance add` (the health check).
    func misbehaving(_ script: @escaping @Sendable (ScriptedConnection) -> Void, expect code: Int32, contains text: String) async throws {
        let server = try ScriptedServer(script: script)
        let user = try CLIUser()
        _ = try user.writeFile(".config/bedrud-bot/config", """
            [network]
            read_timeout = 2s
            request_timeout = 4s
            connect_timeout = 2s
            """)
        let start = Date()
        let r = try await user.expect(code, ["instance", "add", server.baseURL, "--name", "bad"], timeout: 60)
        #expect(r.stderr.contains(text), "\(r.stderr)")
        #expect(Date().timeIntervalSince(start) < 30)
        #expect(r.stderr.split(separator: "\n").count == 1, "one clear line: \(r.stderr)")
    }

    @Test func garbageJSON() async throws {
        try await misbehaving({ c in _ = c.readRequest(); c.respond(headers: [("Content-Type", "application/json")], body: "{\"registrationEnabled\": tru") },
                        expect: 9, contains: "not JSON")
    }

    @Test func htmlPage() async throws {
        try await misbehaving({ c in _ = c.readRequest(); c.respond(headers: [("Content-Type", "text/html")], body: "<!DOCTYPE html><html><body>Welcome to nginx</body></html>") },
                        expect: 9, contains: "HTML page")
    }

    @Test func emptyBody() async throws {
        try await misbehaving({ c in _ = c.readRequest(); c.respond(body: "") }, expect: 9, contains: "body was empty")
    }

    @Test func serverError() async throws {
        try await misbehaving({ c in _ = c.readRequest(); c.respond(status: 500, reason: "Internal Server Error", body: "{\"error\":\"database is locked\"}") },
                        expect: 9, contains: "HTTP 500: database is locked")
    }

    @Test func connectionReset() async throws {
        try await misbehaving({ c in _ = c.readRequest(); c.reset() }, expect: 7, contains: "reset")
    }

    @Test func acceptsAndNeverAnswers() async throws {
        try await misbehaving({ c in c.hang(seconds: 45) }, expect: 7, contains: "Timed out")
    }

    @Test func nothingListening() async throws {
        let user = try CLIUser()
        let r = try await user.expect(7, ["instance", "add", "http://127.0.0.1:9", "--name", "x"])
        #expect(r.stderr.contains("refused"))
    }

    @Test func tokenRefreshWhenTheAccessTokenExpires() async throws {
        // Access tokens live 2 s; after they expire every command refreshes transparently,
        // and parallel runs share the rotation correctly.
        let server = try await DevServer.start(["--access-ttl", "2s", "--seed-user", "rec@example.com:\(Self.password)"])
        let user = try CLIUser()
        let pw = try user.writeFile("pw", Self.password)
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev"])
        try await user.expect(0, ["login", "--email", "rec@example.com", "--password-file", pw])
        // Each step waits until the stored access token has expired for the server (its
        // `exp`, read from the token), and then must have rotated it exactly once.
        var token = try storedAccessToken(user)
        for command in [["whoami"], ["rooms", "list"]] {
            try await waitUntilWallClock(passes: try #require(JWTClaims(token: token)?.expiresAt), atMost: 5)
            let blockedBefore = try blockedRefreshTokens(server)
            let r = try await user.expect(0, command)
            if command == ["whoami"] { #expect(r.stdout.contains("rec@example.com")) }
            let fresh = try storedAccessToken(user)
            #expect(fresh != token, "\(command) refreshed the expired token")
            #expect(try blockedRefreshTokens(server) == blockedBefore + 1, "one rotation of the refresh token")
            token = fresh
        }
    }

    /// The access token the CLI stored for instance `dev`.
    func storedAccessToken(_ user: CLIUser) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: user.stateDir + "/sessions/dev.json"))
        let session = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return try #require((session?["tokens"] as? [String: Any])?["accessToken"] as? String)
    }

    /// How many refresh tokens the devserver has seen rotated out.
    func blockedRefreshTokens(_ server: DevServer) throws -> Int {
        let state = try server.dev("GET", "/_dev/state") as? [String: Any]
        return try #require(state?["blockedRefreshTokens"] as? Int)
    }

    /// A LiveKit that sends 10,000 trickle candidates at once, a third of them garbage
    /// (the devserver's /_dev trickle-flood): the transport falls behind and drops calls,
    /// which is said in a few lines, not one per call (it was 270 lines, 27 kB), and the
    /// recording ends as it would have.
    @Test func aTrickleFloodIsSaidInAFewLines() async throws {
        let server = try await DevServer.start(scenario: "two-person-standup")
        defer { server.stop() }
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let p = try user.start(["join", server.baseURL + "/m/standup", "--record", "--output", out, "--duration", "12s", "--guest-name", "Rec"])
        defer { _ = p.stop(grace: 0) }
        try await p.line(timeout: 60, "Alice speaks") { $0.contains("speaking: Alice Martin") }
        let state = try #require(try server.dev("GET", "/_dev/state") as? [String: Any])
        let rooms = try #require(state["rooms"] as? [[String: Any]])
        let me = try #require(rooms.flatMap { ($0["participants"] as? [[String: Any]]) ?? [] }.first { $0["client"] as? Bool == true }?["identity"] as? String)
        _ = try server.dev("POST", "/_dev/rooms/standup/trickle-flood/\(me)?count=10000&garbage=3")
        let end = await p.exit(timeout: 60)
        #expect(end?.code == 0, "\(String(describing: end))\n\(p.stderr.suffix(3000))")
        #expect(p.stderr.utf8.count < 10_000, "\(p.stderr.utf8.count) bytes of stderr")
        #expect(p.stderr.hasSuffix("Left the room: duration of 12s reached.\n"), "\(p.stderr.suffix(500))")
        let drops = p.lines(.stderr).filter { $0.contains("dropped WebRTC calls") }
        #expect(drops.count <= 5, "\(drops)")
    }
}

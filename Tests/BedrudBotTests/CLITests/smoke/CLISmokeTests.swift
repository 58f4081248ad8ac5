import Foundation
import Testing
import TestSupport

/// `bedrud-bot smoke` end to end on the devserver (forwarding mode): it passes and
/// reports latency, loss and jitter; and each fault the devserver can inject makes it fail
/// at the right stage, with that stage's exit code and a JUnit file (read back by
/// junitparser in scripts/check_smoke_junit.py) naming the failure.
@Suite struct CLISmokeTests {
    /// Checks `file` with junitparser: every stage passed, or `failed` failed with `message`.
    static func checkJUnit(_ file: String, failed: String? = nil, message: String = "", sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let python = Repo.root.appendingPathComponent(".venv/bin/python")
        var args = [Repo.root.appendingPathComponent("scripts/check_smoke_junit.py").path, file]
        if let failed { args += ["--failed", failed, "--message", message] }
        let argv = args
        let r = try await offPool { try Subprocess.run(python, argv, timeout: 60) }
        #expect(r.exitCode == 0, "junitparser check: \(r.stdout)\(r.stderr)", sourceLocation: sourceLocation)
    }

    /// Runs smoke against ROOM on `server`; expects `code` and a JUnit failure at `stage`
    /// whose message contains `message`.
    func failure(_ server: DevServer, _ user: CLIUser, room: String = "smoke", extra: [String] = [],
                 code: Int32, stage: String, message: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let junit = user.home.appendingPathComponent("smoke-\(stage).xml").path
        let r = try await user.expect(code, ["smoke", server.baseURL + "/m/" + room, "--duration", "3s", "--timeout", "10s", "--junit", junit] + extra,
                                      timeout: 90, sourceLocation: sourceLocation)
        #expect(r.stdout.contains("✗ "), "\(r.stdout)", sourceLocation: sourceLocation)
        #expect(r.stdout.contains("FAILED at"), "\(r.stdout)", sourceLocation: sourceLocation)
        try await Self.checkJUnit(junit, failed: stage, message: message, sourceLocation: sourceLocation)
    }

    /// Each fault, one after the other on one devserver (global switches are turned on and
    /// off again; loss is per room): the failing stage, its exit code, the JUnit failure.
    @Test func failsAtTheRightStageWithItsExitCode() async throws {
        let server = try await DevServer.start(["--seed-room", "smoke", "--seed-room", "lossy", "--seed-room", "dropped"])
        let user = try CLIUser()
        func toggle(_ key: String, _ on: Bool) throws { _ = try server.dev("POST", "/_dev/config", json: [key: on]) }

        try await failure(server, user, room: "nosuch", code: 22, stage: "token", message: "no such room 'nosuch'")

        try toggle("refuseTokens", true)
        try await failure(server, user, code: 22, stage: "token", message: "the media server refused the join token")
        try toggle("refuseTokens", false)

        _ = try server.dev("POST", "/_dev/rooms/lossy/faults", json: ["loss": "30%"])
        try await failure(server, user, room: "lossy", code: 27, stage: "quality", message: "% > 5.0 %")

        _ = try server.dev("POST", "/_dev/rooms/dropped/faults", json: ["loss": "100%"])
        try await failure(server, user, room: "dropped", code: 26, stage: "receive", message: "no audio reached the listener")

        try toggle("refuseUpgrades", true)
        try await failure(server, user, code: 23, stage: "signalling", message: "could not join")
        try toggle("refuseUpgrades", false)

        try toggle("badFingerprint", true)
        try await failure(server, user, code: 25, stage: "dtls", message: "does not match the fingerprint in its SDP")
        try toggle("badFingerprint", false)

        // The devserver has no TURN server: relay-only ICE finds no pair.
        try await failure(server, user, extra: ["--turn-only"], code: 24, stage: "ice", message: "(relay only: is TURN reachable, is its secret right?)")

        // A `[smoke]` threshold from the config file replaces the default: the lossy room
        // (30 % seeded loss) fails against 1 %, and the report names that limit. (Not
        // latency: on loopback a burst can be detected within its own frame, which the
        // report rightly calls 0 ms, so no latency limit is sure to be exceeded.)
        let strict = try user.writeFile("strict.conf", "[smoke]\nmax_loss = 1%\n")
        let r = try await user.expect(27, ["-c", strict, "smoke", server.baseURL + "/m/lossy", "--duration", "3s"], timeout: 90)
        #expect(r.stdout.contains(" % > 1.0 %"), "\(r.stdout)")
        let bad = try user.writeFile("bad.conf", "[smoke]\nmax_loss = 150%\n")
        try await user.expect(3, ["-c", bad, "smoke", server.baseURL + "/m/smoke"])
    }

    @Test func passesAndReportsLatencyLossAndJitter() async throws {
        let server = try await DevServer.start(["--seed-room", "smoke"])
        let user = try CLIUser()
        let junit = user.home.appendingPathComponent("smoke.xml").path
        let wav = user.home.appendingPathComponent("heard.wav").path
        let r = try await user.expect(0, ["smoke", server.baseURL + "/m/smoke", "--duration", "4s", "--json", "--junit", junit, "--keep", wav], timeout: 90)
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "stdout: \(r.stdout)")
        #expect(o["passed"] as? Bool == true)
        #expect(o["exitCode"] as? Int == 0)
        let media = try #require(o["media"] as? [String: Any])
        #expect(media["burstsSent"] as? Int == 3)
        #expect(media["burstsDetected"] as? Int == 3, "\(media)")
        let latency = try #require(media["latencyMaxMs"] as? Double)
        // 0 is a real measurement on loopback (a burst detected within its own frame).
        #expect(latency >= 0 && latency < 500, "\(media)")
        #expect((media["lossPercent"] as? Double ?? 100) < 5, "\(media)")
        #expect((media["jitterMs"] as? Double ?? 100) < 30, "\(media)")
        #expect((o["icePair"] as? String ?? "").contains("host/udp"), "\(o)")
        let stages = try #require(o["stages"] as? [[String: Any]])
        #expect(stages.count == 11)
        try await Self.checkJUnit(junit)
        // The listener's recording: 3 bursts + lead-in ≈ 4 s of 16-bit mono 48 kHz.
        let size = (try FileManager.default.attributesOfItem(atPath: wav)[.size] as? Int) ?? 0
        #expect(size > 44 + 2 * 48_000 * 3, "WAV of \(size) bytes")
    }
}

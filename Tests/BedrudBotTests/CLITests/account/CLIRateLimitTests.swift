import Foundation
import Testing
import TestSupport

/// Bedrud v0.12.0's rate limits (10 auth calls a minute per address) met by a fleet of bots
/// behind one address: every call waits out the 429 instead of failing.
@Suite(.serialized) struct CLIRateLimitTests {
    static let password = "rate-limit-password-1"

    @Test func fourteenLoginsAtOnceAllEndLoggedIn() async throws {
        let server = try await DevServer.start(["--seed-user", "rec@example.com:\(Self.password):Recorder", "--rate-limits", "v0.12"])
        defer { server.stop() }
        var users: [CLIUser] = []
        for _ in 0..<14 {
            let u = try CLIUser()
            let pw = try u.writeFile("password", Self.password)
            try await u.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com", "--password-file", pw])
            users.append(u)
        }
        let started = Date()
        let results = try await withThrowingTaskGroup(of: (ProcessResult, Double).self) { group in
            for u in users {
                group.addTask {
                    let r = try await u.run(["login"], timeout: 150)
                    return (r, Date().timeIntervalSince(started))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (r, _) in results {
            #expect(r.exitCode == 0, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        }
        let waited = results.filter { $0.0.stderr.contains("the server's rate limit refused it (HTTP 429); waiting") }
        #expect(waited.count >= 4, "ten a minute pass at once; the others wait: \(results.map(\.0.stderr))")
        // Said once per process, not once per retry.
        for (r, _) in waited { #expect(r.stderr.components(separatedBy: "rate limit refused it").count == 2, "\(r.stderr)") }
        let slowest = results.map(\.1).max() ?? 0
        print("rate limit: \(waited.count) of 14 logins waited; the slowest ended after \(Int(slowest)) s")
        #expect(slowest < 125)
    }

    @Test func pastTheLimitItEndsWithTwelveNamingTheRateLimit() async throws {
        let server = try await DevServer.start(["--seed-user", "rec@example.com:\(Self.password):Recorder", "--auth-rate-limit", "1", "--rate-window", "60"])
        defer { server.stop() }
        let user = try CLIUser()
        let pw = try user.writeFile("password", Self.password)
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com", "--password-file", pw])
        try await user.expect(0, ["login"])
        user.extraEnvironment["BEDRUD_BOT_NETWORK_RATE_LIMIT_WAIT"] = "3s"
        let r = try await user.expect(12, ["login"])
        #expect(r.stderr.contains("was refused by the server's rate limit (HTTP 429 Too Many Requests)"), "\(r.stderr)")
    }
}

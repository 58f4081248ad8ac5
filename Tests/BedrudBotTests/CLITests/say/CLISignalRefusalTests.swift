import Foundation
import Testing
import TestSupport

/// `say` against a media server that refuses the `/rtc` WebSocket upgrade (the
/// devserver's `refuseUpgrades` with a status, answered with LiveKit's own text): each
/// status exits in its class of docs/CLI.md with a line that says what it means, a 5xx
/// only after one retry, and the token a 401 quotes is never printed, even with `-v`.
@Suite struct CLISignalRefusalTests {
    static func rejectedConnections(_ server: DevServer) throws -> Int {
        let state = try #require(try server.dev("GET", "/_dev/state") as? [String: Any])
        let counters = try #require(state["counters"] as? [String: Any])
        return try #require(counters["rejected_connections"] as? Int)
    }

    @Test func eachRefusedUpgradeExitsInItsClassWithItsLine() async throws {
        let server = try await DevServer.start(["--seed-room", "talk"])
        let user = try CLIUser()
        let link = server.baseURL + "/m/talk"
        let livekit = "LiveKit at " + server.baseURL.replacingOccurrences(of: "http://", with: "ws://")
        let cases: [(status: Int, code: Int32, line: String, attempts: Int)] = [
            (400, 12, "the media server refused the join request as given (HTTP 400): \(livekit) refused the connection with HTTP 400: Bad Request.", 1),
            (401, 4, "the join token was refused: \(livekit) refused the join token (HTTP 401: invalid authorization token: could not verify [token]).", 1),
            (403, 6, "the server does not allow this join (HTTP 403): \(livekit) answered HTTP 403: no permissions to access the room.", 1),
            (404, 5, "the room does not exist on the media server", 1),
            (500, 9, "the media server failed (HTTP 500): \(livekit) refused the connection with HTTP 500: could not start the session.", 2),
            (503, 9, "the media server failed (HTTP 503): \(livekit) refused the connection with HTTP 503: node has exceeded its configured limit.", 2),
        ]
        for c in cases {
            _ = try server.dev("POST", "/_dev/config", json: ["refuseUpgrades": c.status])
            let before = try Self.rejectedConnections(server)
            let r = try await user.expect(c.code, ["-v", "say", link, "hello", "--guest-name", "Speaker", "--timeout", "30s"], timeout: 90)
            let last = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
            #expect(last == "bedrud-bot: error: " + c.line, "HTTP \(c.status): \(r.stderr.suffix(2000))")
            #expect(!(r.stdout + r.stderr).contains("room full"), "HTTP \(c.status)")
            #expect(!(r.stdout + r.stderr).contains("eyJ"), "HTTP \(c.status): the join token was printed")
            #expect(try Self.rejectedConnections(server) - before == c.attempts, "HTTP \(c.status): upgrade attempts")
        }
        _ = try server.dev("POST", "/_dev/config", json: ["refuseUpgrades": false])
        try await user.expect(0, ["say", link, "hello", "--guest-name", "Speaker", "--timeout", "30s"], timeout: 90)
    }
}

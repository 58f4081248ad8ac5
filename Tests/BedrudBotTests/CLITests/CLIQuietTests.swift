import Foundation
import Testing
import TestSupport

/// `-q` is quiet, internals stay at debug level, and error messages point
/// the right way.
@Suite struct CLIQuietTests {
    @Test func quietRunPrintsNothingAndTheDefaultShowsNoInternals() async throws {
        let server = try await DevServer.start(scenarioText: """
            room quietroom public
            start first-join
            at 0s join alice name="Alice Martin"
            at 0s tone alice 440Hz 2s amplitude=0.3
            at 3s leave alice
            """)
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let quiet = try await user.expect(0, ["-q", "join", server.baseURL + "/m/quietroom", "--record", "--output", out, "--alone-timeout", "1s"], timeout: 90)
        #expect(quiet.stdout.isEmpty, "\(quiet.stdout)")
        #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
        let recorded = try FileManager.default.contentsOfDirectory(atPath: out + "/quietroom")
        #expect(recorded.count == 1, "the quiet run still recorded")

        let loud = try await user.expect(0, ["join", server.baseURL + "/m/quietroom", "--no-media", "--duration", "2s"], timeout: 60)
        #expect(loud.stdout.contains("joined room 'quietroom'"))
        let internals = loud.stderr.split(separator: "\n").filter { $0.contains(" rtc.") || $0.contains(" signal:") || $0.contains(" room:") }
        #expect(internals.isEmpty, "\(internals)")
    }

    @Test func errorsPointTheRightWay() async throws {
        let server = try await DevServer.start(["--seed-user", "owner@example.com:a long enough password", "--seed-room", "theirs"])
        let user = try CLIUser()
        let missing = try await user.expect(5, ["verify", user.home.path + "/nosuch.opus"])
        #expect(missing.stderr.contains("No such file or directory") && !missing.stderr.contains("directory exists and is writable"), "\(missing.stderr)")
        let json = try user.writeFile("summary.json", "{\"room\":\"x\"}\n")
        let notOgg = try await user.expect(13, ["verify", json])
        #expect(notOgg.stdout.contains("not an Ogg file") && !notOgg.stdout.contains("try repair"), "\(notOgg.stdout)")

        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com"])
        let noPassword = try await user.expect(4, ["login"])
        #expect(noPassword.stderr.contains("no password available for rec@example.com"), "\(noPassword.stderr)")
        user.extraEnvironment["BEDRUD_BOT_PASSWORD"] = "a long enough password"
        try await user.expect(0, ["register", "--name", "Recorder"])
        let view = try await user.expect(5, ["rooms", "settings", "theirs"])
        #expect(view.stderr.contains("only a room's creator see its settings"), "\(view.stderr)")
        let change = try await user.expect(5, ["rooms", "settings", "theirs", "--max", "0"])
        #expect(change.stderr.contains("only a room's creator change its settings"), "\(change.stderr)")
    }
}

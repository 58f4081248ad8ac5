import Foundation
import Testing
import TestSupport

/// The README's 30-second tour, run as written against the development
/// server: each line in bash, with only the server's address, the durations and the
/// password source changed (see the README's note under the tour).
@Suite struct ReadmeTourTests {
    static func tourLines() throws -> [String] {
        let readme = try String(contentsOf: Repo.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## A 30-second tour")).upperBound
        let rest = readme[section...]
        let open = try #require(rest.range(of: "```sh\n")).upperBound
        let close = try #require(rest[open...].range(of: "```")).lowerBound
        return rest[open..<close].split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    @Test func theTourRunsAsWritten() async throws {
        let server = try await DevServer.start(scenario: "two-person-standup")
        let user = try CLIUser()
        user.extraEnvironment["BEDRUD_BOT_PASSWORD"] = "a long enough password"
        let bin = Repo.binary.deletingLastPathComponent().path
        user.extraEnvironment["PATH"] = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let lines = try Self.tourLines()
        #expect(lines.count >= 6)
        for line in lines {
            let command = line.replacingOccurrences(of: "https://meet.example.com", with: server.baseURL)
                .replacingOccurrences(of: "--duration 90m", with: "--duration 4s")
            #expect(command.hasPrefix("bedrud-bot "), "\(line)")
            let env = user.environment
            let r = try await offPool {
                try Subprocess.run(URL(fileURLWithPath: "/bin/bash"), ["-c", command], environment: env, timeout: 60, inheritEnvironment: false)
            }
            #expect(r.exitCode == 0, "\(line)\nexited \(r.exitCode)\nstdout: \(r.stdout)\nstderr: \(r.stderr)")
            if r.exitCode != 0 { break }
        }
        let sessions = try FileManager.default.contentsOfDirectory(atPath: user.home.path + "/.local/share/bedrud-bot/recordings/standup")
        #expect(sessions.count == 2, "\(sessions)")
    }
}

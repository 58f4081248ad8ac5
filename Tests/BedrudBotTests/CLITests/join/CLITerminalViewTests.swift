import Foundation
import Testing
import TestSupport

/// The live block of `join` on a real terminal: tmux runs the bot in a pane and
/// `capture-pane` shows what a person would see. Rows per participant at the bottom,
/// event lines above, and no event text inside or mixed into the block.
@Suite struct CLITerminalViewTests {
    static let scenario = """
        room trio public
        start first-join
        at 0s    join alice name="Alice Martin"
        at 0s    join bob name="Bob Chen"
        at 0s    join carol name="Carol Díaz"
        at 0.5s  say alice "Good morning everyone. This is the first update of the day, and it is a long one."
        at 0.5s  tone bob 660Hz 3s amplitude=0.2
        at 1s    mute carol
        at 2s    chat bob "notes are in the wiki"
        at 4s    mute bob
        at 5s    unmute carol
        at 6s    chat alice "thanks"
        at 6s    say alice "Let me go on with the second part of my update, which is about the recorder."

        """

    /// A tmux server of the test's own (`-L`), killed when the test ends.
    final class Tmux: @unchecked Sendable {
        // @unchecked: immutable after init.
        let socket = "bedrud-test-\(UUID().uuidString.prefix(8))"
        let tool = URL(fileURLWithPath: "/usr/bin/tmux")

        @discardableResult
        func run(_ args: [String]) throws -> ProcessResult {
            try Subprocess.run(tool, ["-L", socket, "-f", "/dev/null"] + args, timeout: 20)
        }

        func capture() throws -> [String] {
            let r = try run(["capture-pane", "-p", "-t", "view"])
            var lines = r.stdout.components(separatedBy: "\n")
            while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
            return lines
        }

        deinit { _ = try? run(["kill-server"]) }
    }

    @Test func rowsPerParticipantAndEventsAboveTheBlock() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            Issue.record("tmux is not installed (scripts/bootstrap installs it)")
            return
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("trio-\(UUID().uuidString).scenario")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try await DevServer.start(scenario: file)
        let user = try CLIUser()
        let done = user.home.appendingPathComponent("exit-code").path
        let env = user.environment.merging(["TERM": "screen", "NO_COLOR": "1"]) { $1 }
        let bot = ([Repo.binary.path, "join", server.baseURL + "/m/trio", "--record", "--stats", "--duration", "12s"]).map(Self.shellQuoted).joined(separator: " ")
        let command = "env -i " + env.map { Self.shellQuoted("\($0.key)=\($0.value)") }.sorted().joined(separator: " ")
            + " " + bot + "; echo $? > " + Self.shellQuoted(done) + "; sleep 120"
        let tmux = Tmux()
        try tmux.run(["new-session", "-d", "-s", "view", "-x", "110", "-y", "30", command])

        // While the meeting runs: the block is at the bottom with one row per person.
        let names = ["Alice Martin", "Bob Chen", "Carol Díaz"]
        var seen: [String] = []
        try await waitUntil("a block with a row for each of the three, with Bob muted", timeout: 40, every: 0.2) {
            seen = try tmux.capture()
            guard let h = seen.lastIndex(where: { $0.hasPrefix("── ") }) else { return false }
            let rows = Array(seen[(h + 1)...])
            return rows.count == 3 && names.allSatisfy { n in rows.contains { $0.contains(n) } }
                && rows.contains { $0.contains("Bob Chen") && $0.contains("muted") }
                && seen.contains { $0.hasSuffix("chat Alice Martin: thanks") }
                && rows.contains { $0.hasPrefix(" ● Alice Martin") }
                && seen.contains { $0.hasPrefix("  Bob Chen ") && $0.contains(" pkts ") }  // --stats, by person
        }
        let h = try #require(seen.lastIndex(where: { $0.hasPrefix("── ") }))
        #expect(seen[h].contains(" here ── ") && seen[h].contains("written") && seen[h].contains("free"), "\(seen[h])")
        for row in seen[(h + 1)...] {
            // Every row is a row: marker, name, meter, mic, spoken, loss; nothing else in it.
            #expect(row.range(of: #"^ [● ] \S.{0,19} +\[[#-]{10}\]  (mic on|muted|no audio) +\d+s spoken  loss (\d+\.\d%|-)$"#,
                              options: .regularExpression) != nil, "not a row: '\(row)'\nscreen:\n\(seen.joined(separator: "\n"))")
        }
        // Above the block only event lines and notes, none with a piece of a block in it.
        for line in seen[..<h] {
            #expect(!line.contains("──") && !line.contains("spoken") && !line.contains("[#") && !line.contains("[--"),
                    "block text above the block: '\(line)'\nscreen:\n\(seen.joined(separator: "\n"))")
        }
        // --stats names every track by its sender, never by SSRC alone.
        let stats = seen[..<h].filter { $0.contains(" pkts ") }
        #expect(!stats.isEmpty && stats.allSatisfy { l in names.contains { l.hasPrefix("  " + $0 + " ") } }, "\(stats)")
        let events = seen[..<h].filter { $0.range(of: #"^\d\d:\d\d:\d\d\.\d\d\d "#, options: .regularExpression) != nil }
        for e in ["chat Bob Chen: notes are in the wiki", "Bob Chen muted microphone", "Carol Díaz unmuted microphone", "chat Alice Martin: thanks"] {
            #expect(events.contains { $0.hasSuffix(e) }, "no event line '\(e)':\n\(seen.joined(separator: "\n"))")
        }

        // After the run: exit 0, the block is gone, and the last lines are the bot's notes.
        let code = try await waitFor("the bot to exit", timeout: 40, every: 0.2) {
            (try? String(contentsOfFile: done, encoding: .utf8)).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        #expect(code == "0")
        let end = try tmux.capture()
        #expect(!end.contains { $0.hasPrefix("── ") || $0.contains(" spoken  loss") }, "\(end.joined(separator: "\n"))")
        #expect(end.last?.hasPrefix("Left the room") == true, "\(end.joined(separator: "\n"))")
        try tmux.run(["kill-server"])
        let gone = try tmux.run(["has-session", "-t", "view"])
        #expect(gone.exitCode != 0)
    }

    static func shellQuoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}

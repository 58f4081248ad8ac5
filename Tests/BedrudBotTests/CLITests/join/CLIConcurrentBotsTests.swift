import Foundation
import Testing
import TestSupport

/// Session folders end to end: several bots start at once in one room with one --output.
/// Each gets a valid folder of its own, and they do not keep each other in the room.
@Suite struct CLIConcurrentBotsTests {
    @Test func threeBotsAtOnceOneFolderEachAndTheyLeaveTogether() async throws {
        let server = try await DevServer.start(scenarioText: """
            room crowded public
            start first-join
            at 0s join alice name="Alice Martin"
            at 1s tone alice 440Hz 2s amplitude=0.3
            at 4s leave alice
            """)
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        // Distinct guest names that no bot_names pattern matches: the bots know each other
        // by the attribute each sets on itself.
        func bot(_ name: String) async throws -> ProcessResult {
            try await user.run(["join", server.baseURL + "/m/crowded", "--record", "--output", out, "--guest-name", name,
                                "--alone-timeout", "2s", "--duration", "45s"], timeout: 90)
        }
        let start = Date()
        async let a = bot("rec-a")
        async let b = bot("rec-b")
        async let c = bot("rec-c")
        let results = try await [a, b, c]
        let elapsed = Date().timeIntervalSince(start)
        for r in results {
            #expect(r.exitCode == 0, "\(r.stdout)\n\(r.stderr)")
            #expect(r.stderr.contains("everyone else left"), "a bot stayed for the other bots: \(r.stderr)")
        }
        // Alice leaves 4 s in; alone for 2 s; the 45 s duration never came.
        #expect(elapsed < 35, "\(elapsed)")

        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/crowded").sorted()
        #expect(sessions.count == 3, "\(sessions)")
        for s in sessions {
            let dir = out + "/crowded/" + s
            let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
            #expect(files.contains("Alice Martin.opus") && files.contains("room.opus") && files.contains("summary.json")
                    && files.contains("transcript.vtt") && files.contains("events.jsonl"), "\(s): \(files)")
            #expect(!files.contains { $0.hasSuffix(".part") }, "\(s): \(files)")
            let opus = files.filter { $0.hasSuffix(".opus") }.map { dir + "/" + $0 }
            try await user.expect(0, ["verify"] + opus)
            try await expectValidEvents(dir)
            let lines = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
            let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(objects.count == lines.count, "\(s): every line is one JSON object")
            #expect(objects.filter { $0["type"] as? String == "session_started" }.count == 1, "\(s): one writer")
            #expect(objects.filter { $0["type"] as? String == "session_ended" }.count == 1, "\(s): one writer")
            var st = stat()
            stat(dir + "/room.opus", &st)
            #expect(st.st_mode & 0o777 == 0o640)
            stat(dir, &st)
            #expect(st.st_mode & 0o777 == 0o750)
        }
    }
}

import Foundation
import Testing
import TestSupport

/// `join --record --split` and SIGHUP against the devserver: numbered
/// segments, each a valid file, that add up to the recording.
@Suite(.serialized) struct CLIRotationTests {
    static let scenario = """
        # One speaker with a long tone: every segment has audio.
        room rotating public
        at 0s    join host name="Host"
        at 0s    tone host 440Hz 60s amplitude=0.3
        """

    static func events(_ dir: String) throws -> [[String: Any]] {
        try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func durations(_ events: [[String: Any]], output: String) -> [Int] {
        events.filter { $0["type"] as? String == "file_finished" && $0["output"] as? String == output }.compactMap { $0["duration_ms"] as? Int }
    }

    static func spans(_ events: [[String: Any]], output: String) -> [(start: Int, duration: Int)] {
        events.filter { $0["type"] as? String == "file_finished" && $0["output"] as? String == output }
            .compactMap { e in (e["start_offset_ms"] as? Int).flatMap { s in (e["duration_ms"] as? Int).map { (s, $0) } } }
    }

    @Test func splitAndSighupRotate() async throws {
        let user = try CLIUser()
        let server = try await DevServer.start(scenarioText: Self.scenario)
        let link = server.baseURL + "/m/rotating"
        let bad = try await user.expect(2, ["join", link, "--split", "3s"])
        #expect(bad.stderr.contains("--split rotates recorded files: add --record"), "\(bad.stderr)")

        // --split 3s over 7 s: three segments of every file.
        let out = user.home.appendingPathComponent("rec").path
        try await user.expect(0, ["join", link, "--record", "--output", out, "--split", "3s", "--duration", "7s"], timeout: 90)
        let dir = try CLILifecycleTests.session(out, "rotating")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".opus") }.sorted()
        #expect(files == ["Host.002.opus", "Host.003.opus", "Host.opus", "room.002.opus", "room.003.opus", "room.opus"], "\(files)")
        try await user.expect(0, ["verify"] + files.map { dir + "/" + $0 })
        try await expectValidEvents(dir)
        let events = try Self.events(dir)
        let rotated = events.filter { $0["type"] as? String == "file_rotated" }
        #expect(rotated.map { "\($0["output"] as? String ?? "?"):\($0["segment"] as? Int ?? 0):\($0["reason"] as? String ?? "?")" }.sorted()
                == ["Host:2:duration", "Host:3:duration", "room:2:duration", "room:3:duration"], "\(rotated)")
        // The segments add up: the mix covers the whole session but for one warm-up per
        // rotation (its encoder's lookahead: 2.5 ms for CELT); the host's segments add up
        // to the summary's duration.
        let summary = try CLILifecycleTests.summary(dir)
        let session = try #require(summary["duration_ms"] as? Int)
        let room = Self.durations(events, output: "room"), host = Self.durations(events, output: "Host")
        #expect(room.count == 3 && host.count == 3, "room \(room), host \(host)")
        // Contiguous: each segment starts where the previous one's audio ended plus the
        // warm-up (±1 ms of rounding): the sender's 6.5 ms for the host, the mix encoder's
        // 2.5 ms for the room; the mix runs from 0 to the end of the media.
        for (output, warmUp) in [("room", 1...4), ("Host", 5...8)] {
            let spans = Self.spans(events, output: output)
            for (a, b) in zip(spans, spans.dropFirst()) {
                #expect(warmUp.contains(b.start - (a.start + a.duration)), "\(output): \(spans)")
            }
        }
        let roomSpans = Self.spans(events, output: "room")
        #expect(roomSpans.first?.start == 0)
        let roomEnd = (roomSpans.last.map { $0.start + $0.duration }) ?? 0
        #expect(roomEnd <= session && roomEnd >= session - 300, "room ends at \(roomEnd), session \(session) ms")
        #expect(abs(room.reduce(0, +) + 5 - roomEnd) <= 3, "room segments \(room) add up to \(roomEnd) ms less two warm-ups")
        #expect(room.allSatisfy { $0 >= 900 }, "\(room)")
        let people = try #require(summary["participants"] as? [[String: Any]])
        #expect(people.first?["duration_ms"] as? Int == host.reduce(0, +) || abs((people.first?["duration_ms"] as? Int ?? 0) - host.reduce(0, +)) <= 3,
                "summary \(people) vs segments \(host)")
        #expect(people.first?["file"] as? String == "Host.opus")

        // --split-size: every file rotates once the largest reaches the size.
        let badSize = try await user.expect(2, ["join", link, "--record", "--split-size", "lots"])
        #expect(badSize.stderr.contains("--split-size expects a size"), "\(badSize.stderr)")
        let out3 = user.home.appendingPathComponent("rec3").path
        try await user.expect(0, ["join", link, "--record", "--output", out3, "--split-size", "12KiB", "--duration", "6s"], timeout: 90)
        let dir3 = try CLILifecycleTests.session(out3, "rotating")
        let files3 = try FileManager.default.contentsOfDirectory(atPath: dir3).filter { $0.hasSuffix(".opus") }.sorted()
        try await user.expect(0, ["verify"] + files3.map { dir3 + "/" + $0 })
        try await expectValidEvents(dir3)
        let rotated3 = try Self.events(dir3).filter { $0["type"] as? String == "file_rotated" }
        print("split-size: \(files3), \(rotated3.count) rotations")
        #expect(!rotated3.isEmpty && rotated3.allSatisfy { $0["reason"] as? String == "size" }, "\(rotated3)")
        #expect(files3.contains("room.002.opus") && files3.contains("Host.002.opus"), "\(files3)")
        // The segments that were rotated away reached the size first (the largest of them did).
        let firstSegments = try ["Host.opus", "room.opus"].map { try FileManager.default.attributesOfItem(atPath: dir3 + "/" + $0)[.size] as? Int ?? 0 }
        #expect((firstSegments.max() ?? 0) >= 12 * 1024, "\(firstSegments)")

        // SIGHUP: one rotation, then SIGTERM ends the session with every file finished.
        let out2 = user.home.appendingPathComponent("rec2").path
        let p = try user.start(["join", link, "--record", "--output", out2, "--json"])
        defer { _ = p.stop(grace: 0) }
        try await p.line(timeout: 60, "the host's file") { $0.contains("\"file_started\"") && $0.contains("\"Host\"") }
        try await p.line(timeout: 30, "a speaking turn") { $0.contains("\"speakers_changed\"") || $0.contains("\"speaking_turn\"") }
        p.signal(SIGHUP)
        try await p.line(timeout: 30, "the rotation") { $0.contains("\"file_rotated\"") && $0.contains("\"Host\"") }
        p.signal(SIGTERM)
        let end = await p.exit(timeout: 60)
        #expect(end?.code == 0, "\(String(describing: end)) \(p.stderr.suffix(2000))")
        let dir2 = try CLILifecycleTests.session(out2, "rotating")
        let files2 = try FileManager.default.contentsOfDirectory(atPath: dir2).filter { $0.hasSuffix(".opus") }.sorted()
        #expect(files2 == ["Host.002.opus", "Host.opus", "room.002.opus", "room.opus"], "\(files2)")
        try await user.expect(0, ["verify"] + files2.map { dir2 + "/" + $0 })
        try await expectValidEvents(dir2)
        let rotated2 = try Self.events(dir2).filter { $0["type"] as? String == "file_rotated" }
        #expect(rotated2.map { "\($0["output"] as? String ?? "?"):\($0["segment"] as? Int ?? 0):\($0["reason"] as? String ?? "?")" }.sorted()
                == ["Host:2:signal", "room:2:signal"], "\(rotated2)")
    }
}

import Foundation
import Testing
import TestSupport

/// `join` end to end in a room where people have cameras on. The devserver's subscriber
/// offers then carry video sections, and it refuses (as LiveKit's pion would, with a full
/// reconnect) any answer that breaks pion's rule. The bot must join, connect media on the
/// first offer, record everyone's audio, and never rejoin, also when a camera is turned
/// on mid-recording (samples/scenarios/cameras.scenario: Alice's camera from the start,
/// Bob's at 4 s, tones from 0.5 s to 9.5 s, both leave at 10 s).
@Suite(.serialized) struct CLICameraTests {
    @Test func recordsARoomWithCamerasWithoutRejoiningOrGaps() async throws {
        let server = try await DevServer.start(scenario: "cameras")
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let r = try await user.expect(0, ["join", server.baseURL + "/m/cameras", "--record", "--output", out, "--alone-timeout", "2s"], timeout: 90)
        #expect(!r.stdout.contains("reconnecting") && !r.stderr.contains("reconnecting"), "\(r.stdout)\n\(r.stderr)")
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/cameras")
        #expect(sessions.count == 1)
        let dir = out + "/cameras/" + sessions[0]

        try await expectValidEvents(dir)
        let lines = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
        let events = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let types = events.map { $0["type"] as? String ?? "" }
        // One join, one media connection, no reconnect of any kind.
        #expect(types.filter { $0 == "joined" }.count == 1)
        #expect(types.filter { $0 == "connected" }.count == 1)
        #expect(!types.contains("reconnecting") && !types.contains("reconnected"), "\(types)")
        // Both cameras were announced (so the offers carried video), Bob's mid-recording.
        let cameras = events.filter { ($0["type"] as? String) == "track_published" && (($0["track"] as? [String: Any])?["source"] as? String) == "camera" }
        let bobCamera = cameras.first { ($0["participant"] as? [String: Any])?["identity"] as? String == "bob" }
        #expect(bobCamera != nil, "no camera track_published for bob: \(types)")
        if let at = bobCamera?["offset_ms"] as? Int { #expect(at > 2_000, "bob's camera came at \(at) ms") }
        // Alice's camera was there before media connected: the offers that brought media up
        // carried her video section (the devserver merges what arrives within its debounce).
        let aliceCamera = cameras.first { ($0["participant"] as? [String: Any])?["identity"] as? String == "alice" }
        let connectedAt = events.first { ($0["type"] as? String) == "connected" }?["offset_ms"] as? Int
        #expect(aliceCamera != nil && connectedAt != nil)
        if let cam = aliceCamera?["offset_ms"] as? Int, let connectedAt { #expect(cam <= connectedAt, "alice's camera at \(cam) ms, media connected at \(connectedAt) ms") }
        // No gap in anyone's audio while the tones play (0.5 s to 9.5 s).
        let gaps = events.filter { ($0["type"] as? String) == "gap" }
        let inTones = gaps.filter { g in
            let start = g["offset_ms"] as? Int ?? 0, end = start + (g["duration_ms"] as? Int ?? 0)
            return end > 1_500 && start < 9_000
        }
        #expect(inTones.isEmpty, "gaps while the tones played: \(inTones)")

        // Both people recorded, about 10 s each.
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files.contains("Alice Martin.opus") && files.contains("Bob Chen.opus"), "\(files)")
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))) as? [String: Any]
        #expect(summary?["exit_code"] as? Int == 0)
        #expect(summary?["reconnects"] as? Int == 0)
        let people = (summary?["participants"] as? [[String: Any]]) ?? []
        #expect(people.count == 2, "\(people)")
        for p in people {
            #expect(((p["gaps_ms"] as? [String: Any])?["reconnect"] as? Int ?? 0) == 0, "\(p)")
            #expect((p["duration_ms"] as? Int ?? 0) > 8_000, "\(p)")
        }
        print("cameras: events \(types.count), gaps \(gaps), participants \(people.map { ($0["name"] ?? "?", $0["duration_ms"] ?? "?") })")
        let verify = try await user.expect(0, ["verify", dir + "/Alice Martin.opus", dir + "/Bob Chen.opus", dir + "/room.opus"])
        #expect(verify.stdout.contains("valid"))
    }
}

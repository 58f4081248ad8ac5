import Foundation
import Testing
import TestSupport

/// `join --record` in a room whose participants' device clocks disagree
/// (samples/scenarios/clock-skew.scenario): LiveKit passes each publisher's sender reports
/// through with its own NTP clock, and carol's runs 2 s ahead. With one NTP offset for the
/// session, carol's first report pulled alice 2 s early, onto audio already written: her
/// second tone was dropped packet by packet and never reached her file or a speaking turn.
@Suite(.serialized) struct CLIClockSkewTests {
    @Test func eachParticipantIsPlacedByItsOwnClock() async throws {
        let server = try await DevServer.start(scenario: "clock-skew")
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        _ = try await user.expect(10, ["join", server.baseURL + "/m/skew", "--record", "--output", out], timeout: 90)
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/skew")
        let dir = out + "/skew/" + sessions[0]
        let objects = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        func turns(_ identity: String) -> [Int] {
            objects.filter { $0["type"] as? String == "speaking_turn" && ($0["participant"] as? [String: Any])?["identity"] as? String == identity }
                .compactMap { $0["start_ms"] as? Int }
        }
        let alice = turns("alice")
        let carol = turns("carol")
        try #require(alice.count == 2 && carol.count == 1, "alice \(alice), carol \(carol)")
        // The scenario's times (1 s, 4 s, 6 s), each relative to alice's first tone.
        #expect(abs(alice[1] - alice[0] - 5000) <= 300, "alice \(alice)")
        #expect(abs(carol[0] - alice[0] - 3000) <= 300, "alice \(alice), carol \(carol)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))) as? [String: Any])
        let participants = try #require(summary["participants"] as? [[String: Any]])
        #expect(participants.compactMap { $0["dropped"] as? Int } == [0, 0], "\(participants)")
    }
}

import Foundation
import Testing
import TestSupport

/// `join --record` in a room whose scripted participants speak Bedrud web v0.12's meeting
/// wire (samples/scenarios/meeting-wire.scenario): what lands in events.jsonl, the saved
/// attachment, transcript.vtt and the summary.
@Suite(.serialized) struct CLIMeetingWireTests {
    /// Whether `file` holds the scenario's `chat-image alice 300kB` byte for byte: a PNG of
    /// noise that bedrud_devserver/chatwire.py `pattern_png` makes, asked of the devserver's code.
    static func isPatternPNG(_ file: String, size: Int) async throws -> Bool {
        let args = ["-c", """
            import sys
            sys.path.insert(0, sys.argv[1])
            from bedrud_devserver.chatwire import pattern_png
            sys.exit(0 if open(sys.argv[2], "rb").read() == pattern_png(int(sys.argv[3])) else 1)
            """, Repo.root.appendingPathComponent("scripts").path, file, String(size)]
        return try await offPool { try Subprocess.run(Repo.python, args, timeout: 30).exitCode == 0 }
    }

    /// Writes the devserver's `pattern_png(size)`, a real PNG of exactly `size` bytes, to
    /// `path` and returns its bytes.
    static func patternPNG(_ size: Int, at path: String) async throws -> [UInt8] {
        let args = ["-c", """
            import sys
            sys.path.insert(0, sys.argv[1])
            from bedrud_devserver.chatwire import pattern_png
            open(sys.argv[3], "wb").write(pattern_png(int(sys.argv[2])))
            """, Repo.root.appendingPathComponent("scripts").path, String(size), path]
        let r = try await offPool { try Subprocess.run(Repo.python, args, timeout: 30) }
        #expect(r.exitCode == 0, "\(r.stderr)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func recordsTheMeetingWireAndEndsWhenTheServerEndsTheMeeting() async throws {
        let server = try await DevServer.start(scenario: "meeting-wire")
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let r = try await user.expect(10, ["join", server.baseURL + "/m/wire", "--record", "--output", out], timeout: 90)
        #expect(r.stderr.contains("the server ended the meeting (room_ended): The host ended the meeting for everyone"), "\(r.stderr)")
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/wire")
        let dir = out + "/wire/" + sessions[0]
        try await expectValidEvents(dir)
        let objects = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        func of(_ type: String) -> [[String: Any]] { objects.filter { $0["type"] as? String == type } }
        func name(_ o: [String: Any]) -> String? { (o["participant"] as? [String: Any])?["name"] as? String }

        // The chunked chat: whole text, the image saved byte for byte, no base64 in the line.
        let image = try #require(of("chat").first { ($0["attachments"] as? [Any])?.isEmpty == false })
        #expect(image["message"] as? String == "Grüße — the slide 👩‍👩‍👧")
        let attachment = try #require((image["attachments"] as? [[String: Any]])?.first)
        let path = try #require(attachment["path"] as? String)
        #expect(path.hasPrefix("attachments/") && path.hasSuffix("-0.png") && attachment["bytes"] as? Int == 300_000)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/" + path)).starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        #expect(try await Self.isPatternPNG(dir + "/" + path, size: 300_000))
        #expect(try !String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).contains("base64"))

        let reaction = try #require(of("reaction").first)
        #expect(reaction["emoji"] as? String == "👍" && reaction["message_id"] as? String == image["id"] as? String && name(reaction) == "Bob Chen")
        let poll = try #require(of("poll").first)
        #expect(poll["question"] as? String == "Lunch at noon?")
        #expect((poll["options"] as? [[String: Any]])?.compactMap { $0["text"] as? String } == ["Pizza", "Soup", "Ramen 🍜"])
        let vote = try #require(of("poll_vote").first)
        #expect(vote["option"] as? String == "Ramen 🍜" && vote["option_id"] as? String == "o3" && name(vote) == "Alice Doe")

        // Bob renames himself: later lines use the new name; his file keeps the old one.
        let renamed = try #require(of("profile_changed").first)
        #expect(name(renamed) == "Robert Chen" && renamed["applied"] as? Bool == true)
        let bobTurn = try #require(of("speaking_turn").first { ($0["participant"] as? [String: Any])?["identity"] as? String == "bob" })
        #expect(name(bobTurn) == "Robert Chen")
        #expect(FileManager.default.fileExists(atPath: dir + "/Bob Chen.opus"))
        let deafen = try #require(of("deafen_state").first)
        #expect(deafen["deafened"] as? Bool == true && name(deafen) == "Alice Doe")

        let end = try #require(of("moderation").first { $0["event"] as? String == "room_ended" })
        #expect(end["message"] as? String == "The host ended the meeting for everyone")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))) as? [String: Any])
        #expect(summary["end_reason"] as? String == "room_ended" && summary["exit_code"] as? Int == 10)

        let vtt = try String(contentsOfFile: dir + "/transcript.vtt", encoding: .utf8)
        #expect(vtt.contains("NOTE ") && vtt.contains("reacted 👍") && vtt.contains("asks: Lunch at noon?"), "\(vtt)")
    }
}

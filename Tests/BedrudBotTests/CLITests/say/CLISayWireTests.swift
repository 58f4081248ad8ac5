import Foundation
import Testing
import TestSupport

/// `say` speaks Bedrud web v0.12's wire: a long message with `--image` goes in chunks as the
/// web client sends it, and a recording bot puts it back together (text whole, image byte
/// for byte); `--react` sends a reaction.
@Suite(.serialized) struct CLISayWireTests {
    @Test func aLongMessageWithAnImageIsChunkedAndReassembledByARecordingBot() async throws {
        let server = try await DevServer.start(["--seed-room", "wired"])
        let listener = try CLIUser()
        let speaker = try CLIUser()
        let link = server.baseURL + "/m/wired"
        let out = listener.home.appendingPathComponent("rec").path
        async let heard = listener.run(["join", link, "--record", "--output", out, "--duration", "20s", "--guest-name", "Listener"], timeout: 90)
        try await server.waitForParticipants(in: "wired")
        let imagePath = speaker.home.appendingPathComponent("chart.png").path
        let image = try await CLIMeetingWireTests.patternPNG(200_000, at: imagePath)
        let text = String(repeating: "Grüße 😀 «سلام» ", count: 5000)
        let said = try await speaker.expect(0, ["say", link, text, "--image", imagePath, "--guest-name", "Speaker"], timeout: 60)
        #expect(said.stderr.contains("with an image in 'wired'") && said.stderr.contains(" packets."), "\(said.stderr)")
        let log = try CLISayTests.dataLog(server, room: "wired")
        let types = log.compactMap { ($0["json"] as? [String: Any])?["type"] as? String }
        #expect(types.first == "chat_chunk_meta" && types.dropFirst().allSatisfy { $0 == "chat_chunk" } && types.count > 3, "\(types)")

        let r = try await heard
        #expect(r.exitCode == 0, "\(r.stderr)")
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/wired")
        let dir = out + "/wired/" + sessions[0]
        let chats = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "chat" }
        #expect(chats.count == 1)
        let chat = try #require(chats.first)
        #expect(chat["message"] as? String == text)
        let attachment = try #require((chat["attachments"] as? [[String: Any]])?.first)
        #expect(attachment["mime"] as? String == "image/png" && attachment["bytes"] as? Int == image.count)
        let path = try #require(attachment["path"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/" + path)) == Data(image))
    }

    @Test func reactSendsTheWebClientsReactionPacket() async throws {
        let server = try await DevServer.start(["--seed-room", "reacts"])
        let user = try CLIUser()
        let r = try await user.expect(0, ["say", server.baseURL + "/m/reacts", "--react", "🎉", "--to", "msg-42"])
        #expect(r.stderr.contains("Reacted 🎉 in 'reacts'"), "\(r.stderr)")
        let entry = try #require(try CLISayTests.dataLog(server, room: "reacts").first)
        #expect(entry["topic"] as? String == "chat" && entry["reliable"] as? Bool == true)
        let json = try #require(entry["json"] as? [String: Any])
        #expect(json["type"] as? String == "reaction" && json["messageId"] as? String == "msg-42" && json["emoji"] as? String == "🎉")
        #expect(json["voterIdentity"] as? String == entry["from"] as? String)
    }

    @Test(arguments: [
        (["--react", "👍"], "--react needs --to ID, the id of the message to react to"),
        (["hi", "--react", "👍", "--to", "m"], "--react sends only a reaction: give no TEXT, --attach or --image with it"),
        (["hi", "--to", "m"], "--to goes with --react"),
        ([], "nothing to say: TEXT is empty and there is no --attach, --image or --react"),
    ])
    func badCombinationsAreUsageErrors(args: [String], message: String) async throws {
        let user = try CLIUser()
        let r = try await user.expect(2, ["say", "http://127.0.0.1:9/m/x"] + args)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test func filesThatAreNotImagesAreRefused() async throws {
        // Images of any size are uploaded now: CLISayUploadTests.
        let user = try CLIUser()
        let text = user.home.appendingPathComponent("notes.txt").path
        try Data("hello".utf8).write(to: URL(fileURLWithPath: text))
        let t = try await user.expect(2, ["say", "http://127.0.0.1:9/m/x", "--image", text])
        #expect(t.stderr.contains("is not a PNG, JPEG, GIF or WebP image"), "\(t.stderr)")
    }
}

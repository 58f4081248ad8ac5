import Foundation
import Testing
import TestSupport

/// `say` against the devserver: the chat packet the server forwards satisfies the web
/// client's receiver rules (bedrud-api.md §3.1), and a listening bot shows it.
@Suite struct CLISayTests {
    /// The room's data log (what the server received and forwarded), from /_dev/state.
    /// The data packets the server forwarded in `room`, less the recording notice a
    /// recording bot in the room posts (record.announce): these tests look at what `say` sent.
    static func dataLog(_ server: DevServer, room: String) throws -> [[String: Any]] {
        let state = try #require(try server.dev("GET", "/_dev/state") as? [String: Any])
        let rooms = try #require(state["rooms"] as? [[String: Any]])
        let r = try #require(rooms.first { $0["name"] as? String == room })
        let notice = "This meeting is being recorded."
        return (r["data"] as? [[String: Any]] ?? []).filter { ($0["json"] as? [String: Any])?["message"] as? String != notice }
    }

    /// The web client's receiver rules for one forwarded packet.
    static func checkWebRules(_ entry: [String: Any], text: String, attachmentURL: String?) throws {
        #expect(entry["topic"] as? String == "chat")
        #expect(entry["reliable"] as? Bool == true)
        let json = try #require(entry["json"] as? [String: Any], "payload is not a JSON object: \(entry)")
        #expect(json["type"] as? String == "chat")
        let id = try #require(json["id"] as? String)
        #expect(UUID(uuidString: id) != nil, "id \(id) is not a UUID")
        let ts = try #require(json["timestamp"] as? NSNumber)
        #expect(abs(ts.doubleValue / 1000 - Date().timeIntervalSince1970) < 120, "timestamp \(ts) is not Unix milliseconds of now")
        #expect(json["message"] as? String == text)
        let identity = try #require(json["senderIdentity"] as? String)
        #expect(identity == entry["from"] as? String, "senderIdentity must be the packet's participant")
        #expect((json["senderName"] as? String)?.isEmpty == false)
        let attachments = try #require(json["attachments"] as? [[String: Any]], "the web client always sends attachments")
        if let attachmentURL {
            #expect(attachments.count == 1)
            #expect(attachments.first?["kind"] as? String == "image")
            #expect(attachments.first?["url"] as? String == attachmentURL)
            #expect(attachments.first?["mime"] as? String == "image/png")
        } else {
            #expect(attachments.isEmpty)
        }
    }

    @Test func chatReachesTheServerAndAListener() async throws {
        let server = try await DevServer.start(["--seed-room", "talk"])
        let listener = try CLIUser()
        let speaker = try CLIUser()
        let link = server.baseURL + "/m/talk"
        async let heard = listener.run(["join", link, "--duration", "12s", "--guest-name", "Listener"], timeout: 60)
        // Wait (with a deadline) until the listener is in the room before speaking.
        try await server.waitForParticipants(in: "talk")
        let said = try await speaker.expect(0, ["say", link, "hello from say", "--attach", "https://example.com/pic.png", "--guest-name", "Speaker"])
        #expect(said.stderr.contains("Said 14 characters with an image in 'talk'"), "\(said.stderr)")
        let log = try Self.dataLog(server, room: "talk")
        let entry = try #require(log.first { $0["topic"] as? String == "chat" }, "no chat packet reached the server: \(log)")
        try Self.checkWebRules(entry, text: "hello from say", attachmentURL: "https://example.com/pic.png")
        #expect(entry["delivered_to"] as? Int == 1)
        let r = try await heard
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(r.stdout.contains("chat Speaker: hello from say [1 attachment]"), "\(r.stdout)")
    }

    @Test func plainTextHasAnEmptyAttachmentList() async throws {
        let server = try await DevServer.start(["--seed-room", "quiet"])
        let user = try CLIUser()
        try await user.expect(0, ["say", server.baseURL + "/m/quiet", "just text"])
        let entry = try #require(try Self.dataLog(server, room: "quiet").first)
        try Self.checkWebRules(entry, text: "just text", attachmentURL: nil)
    }

    @Test(arguments: ["data:image/png;base64,AAAA", "/uploads/chat/x.png", "ftp://example.com/x.png"])
    func attachmentsThatTheWebClientWouldNotShowAreRefused(url: String) async throws {
        let user = try CLIUser()
        let r = try await user.expect(2, ["say", "http://127.0.0.1:9/m/x", "hi", "--attach", url])
        #expect(r.stderr.contains("--attach expects an http or https image URL"), "\(r.stderr)")
    }

    @Test func noSuchRoomExitsNotFound() async throws {
        let server = try await DevServer.start()
        let user = try CLIUser()
        let r = try await user.expect(5, ["say", server.baseURL + "/m/nowhere", "hi"])
        #expect(!r.stderr.isEmpty)
    }
}

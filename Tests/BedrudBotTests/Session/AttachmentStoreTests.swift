@testable import BedrudBot
import BedrudCore
import BedrudMedia
import BedrudProtocol
import Foundation
import Testing

/// Inline chat attachments saved in the session folder: names from remote senders can
/// never reach outside `attachments/`.
@Suite struct AttachmentStoreTests {
    static func folder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("att-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func dataURLsAreDecoded() throws {
        guard case .success(let d) = try #require(AttachmentStore.parseDataURL("data:image/png;base64,AAEC/w==")) else { Issue.record("not decoded"); return }
        #expect(d == .init(mime: "image/png", bytes: [0, 1, 2, 255]))
        #expect(AttachmentStore.parseDataURL("https://x/y.png") == nil)
        #expect(AttachmentStore.parseDataURL("data:text/plain,hello") == .failure(.notBase64))
        #expect(AttachmentStore.parseDataURL("data:image/png;base64,@@@") == .failure(.badBase64))
        let huge = "data:image/png;base64," + String(repeating: "A", count: (AttachmentStore.maxBytes / 3 + 2) * 4)
        #expect(AttachmentStore.parseDataURL(huge) == .failure(.tooLarge))
    }

    @Test(arguments: [
        ("../../etc/passwd", 0, "image/png", "image", "", "attachments/_.._etc_passwd-0.png"),
        ("/abs", 1, "image/jpeg", "image", "", "attachments/_abs-1.jpg"),
        ("a\u{0}b", 2, "image/x-unknown", "image", "", "attachments/a_b-2.bin"),
        ("", 0, "application/pdf", "file", "../../../secret.pdf", "attachments/chat-0-_.._.._secret.pdf"),
        ("id", 0, "text/plain", "file", ".hidden", "attachments/id-0-hidden"),
        ("id", 0, "text/plain", "file", "/", "attachments/id-0-_"),
    ])
    func hostileIdsAndNamesStayInTheFolder(id: String, index: Int, mime: String, kind: String, name: String, expected: String) {
        #expect(AttachmentStore.relativePath(chatID: id, index: index, mime: mime, kind: kind, name: name) == expected)
    }

    @Test func aVeryLongIdIsCut() {
        let path = AttachmentStore.relativePath(chatID: String(repeating: "é", count: 10_000), index: 0, mime: "image/png", kind: "file", name: String(repeating: "n", count: 10_000))
        #expect(path == "attachments/" + String(repeating: "_", count: 64) + "-0-" + String(repeating: "n", count: 100))
    }

    @Test func savedBytesAreExactAndNeverOverwritten() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = AttachmentStore(directory: dir)
        let a = BedrudChatPayload.Attachment(kind: "image", url: "data:image/png;base64,AAEC/w==", mime: "image/png")
        let first = AttachmentStore.eventFields(a, chatID: "../x", index: 0, store: store)
        let second = AttachmentStore.eventFields(a, chatID: "../x", index: 0, store: store)
        #expect(first.path == "attachments/_x-0.png" && first.bytes == 4 && first.saved == true)
        #expect(second.path == "attachments/_x-0-2.png")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/attachments/_x-0.png")) == Data([0, 1, 2, 255]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["attachments"])
        // Without a store (no --record): the size, nothing saved, no base64 in the event.
        let unsaved = AttachmentStore.eventFields(a, chatID: "x", index: 0, store: nil)
        #expect(unsaved.saved == false && unsaved.bytes == 4 && unsaved.url == nil)
        let link = AttachmentStore.eventFields(.init(kind: "image", url: "https://h/p.png", mime: "image/png", size: 9), chatID: "x", index: 0, store: store)
        #expect(link.url == "https://h/p.png" && link.size == 9 && link.path == nil)
    }

    @Test func aSessionSavesAtMostItsLimit() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = AttachmentStore(directory: dir, sessionLimit: 6)
        let a = BedrudChatPayload.Attachment(kind: "image", url: "data:image/png;base64,AAEC/w==", mime: "image/png")
        #expect(AttachmentStore.eventFields(a, chatID: "a", index: 0, store: store).saved == true)
        let refused = AttachmentStore.eventFields(a, chatID: "b", index: 0, store: store)
        #expect(refused.saved == false && refused.path == nil && refused.bytes == 4)
        #expect(refused.error?.text.contains("reached 6 bytes") == true, "\(refused)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/attachments") == ["a-0.png"])
    }
}

/// A chunked chat with an inline image, from the wire to events.jsonl and the saved file.
@Suite struct ChatAttachmentEventTests {
    @Test func aChunkedInlineImageIsSavedByteForByteAndTheEventCarriesItsPath() throws {
        let dir = try AttachmentStoreTests.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var rng = SystemRandomNumberGenerator()
        let picture = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let url = "data:image/png;base64," + Data(picture).base64EncodedString()
        let text = String(repeating: "Grüße 😀 👩‍👩‍👧 ", count: 6000)
        let chat = BedrudChatPayload(id: "img-1", timestampMs: 1, senderName: "Ada", senderIdentity: "ada", message: text,
                                     attachments: [.init(kind: "image", url: url, mime: "image/png", width: 1, height: 1, size: picture.count)])
        var assembler = ChatAssembler()
        var whole: [BedrudChatPayload] = []
        for p in try ChatChunker.packets(for: chat) {
            for case .chat(let c, _) in assembler.handle(try #require(BedrudChatWire(topic: "chat", payload: p)), from: "ada", at: 0) { whole.append(c) }
        }
        #expect(whole.count == 1)
        let w = try TranscriptWriter(path: dir + "/events.jsonl", startUnixNanos: 0, startMonotonicNanos: MonotonicClock.nanos(),
                                     attachments: AttachmentStore(directory: dir))
        var formatter = RoomEventFormatter()
        let event = RoomEvent.chatReceived(MeetingChatMessage(id: "img-1", senderIdentity: "ada", senderName: "Ada", text: whole[0].message,
                                                              timestampMs: 1, attachments: whole[0].attachments))
        let started = ContinuousClock.now
        _ = formatter.text(event)
        TranscriptEvents.write(event, to: w, formatter: formatter)
        #expect(ContinuousClock.now - started < .seconds(20))
        let line = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["message"] as? String == text)
        let attachment = try #require((object["attachments"] as? [[String: Any]])?.first)
        #expect(attachment["path"] as? String == "attachments/img-1-0.png" && attachment["bytes"] as? Int == picture.count)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/attachments/img-1-0.png")) == Data(picture))
        #expect(!line.contains("base64"))
    }
}

@testable import BedrudBot
import Foundation
import Testing

/// `SessionFolder.Contents`: a session folder read back in one place.
@Suite struct SessionFolderReadingTests {
    @Test func eventsSummaryFilesAttachmentsAndAudio() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("contents-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir + "/attachments", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            {"type":"session_started","offset_ms":0,"room":"standup"}
            {"type":"chat","offset_ms":1
            """.write(toFile: dir + "/events.jsonl", atomically: true, encoding: .utf8)
        try #"{"room":"standup","duration_ms":754000,"end_reason":"signal","participants":[]}"#.write(toFile: dir + "/summary.json", atomically: true, encoding: .utf8)
        try Data(repeating: 1, count: 7).write(to: URL(fileURLWithPath: dir + "/attachments/cat.png"))
        try Data("OggS not really".utf8).write(to: URL(fileURLWithPath: dir + "/room.opus"))

        let c = SessionFolder.Contents(reading: dir)
        #expect(c.hasEvents && c.lines.map(\.type) == ["session_started"] && c.unreadableLines == 1)
        #expect(c.summary?.room.value == "standup" && c.summary?.durationMs == 754_000 && c.summary?.endReason == "signal")
        #expect(c.files.map(\.name) == ["attachments", "events.jsonl", "room.opus", "summary.json"])
        #expect(c.files.first { $0.name == "room.opus" }?.bytes == 15)
        #expect(c.attachments == [.init(name: "attachments/cat.png", bytes: 7)])
        #expect(c.audio.map(\.name) == ["room.opus"] && c.audio.first?.verified?.isValid == false)

        try "not json".write(toFile: dir + "/summary.json", atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: dir + "/events.jsonl")
        let bare = SessionFolder.Contents(reading: dir)
        #expect(!bare.hasEvents && bare.lines.isEmpty && bare.summary == nil)
    }
}

@testable import BedrudBot
import BedrudCore
import BedrudMedia
import BedrudProtocol
import Foundation
import Testing
import TestSupport

/// docs/events.schema.json against what the writer produces, and the validator against
/// lines it must refuse.
@Suite struct EventSchemaTests {
    static func temporaryFolder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func schemaTypes() throws -> Set<String> {
        let data = try Data(contentsOf: Repo.root.appendingPathComponent("docs/events.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let type = (schema["properties"] as? [String: Any])?["type"] as? [String: Any]
        return Set(type?["enum"] as? [String] ?? [])
    }

    /// The types that have their own list of keys in the schema (an `allOf` branch `if type is …`).
    static func schemaBranchTypes() throws -> Set<String> {
        let data = try Data(contentsOf: Repo.root.appendingPathComponent("docs/events.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let branches = schema["allOf"] as? [[String: Any]] ?? []
        return Set(branches.compactMap { (($0["if"] as? [String: Any])?["properties"] as? [String: Any]).flatMap { ($0["type"] as? [String: Any])?["const"] as? String } })
    }

    /// One of every event the writer produces, through the code `join` uses.
    @Test func everyEventTheWriterWritesMatchesTheSchema() async throws {
        let dir = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        EveryEvent.write(to: try EveryEvent.writer(dir + "/events.jsonl"))
        // Several rooms in one process (join A B --json): a room that never started, and the run's last line.
        var rooms = RoomsOutcome(labels: ["standup", "nosuch"])
        _ = rooms.handle(.finished("standup", .init(code: .success, endReason: .duration, detail: "duration of 5s reached", folder: dir)))
        _ = rooms.handle(.finished("nosuch", .init(code: .notFound, endReason: nil, detail: "Room not found", folder: nil)))
        let extra = [MultiRoomRun.notStartedLine(label: "nosuch", code: .notFound, detail: "Room not found", unixNanos: 1_764_583_200_000_000_000),
                     MultiRoomRun.runEndedLine(rooms, startUnixNanos: 1_764_583_200_000_000_000, offsetMs: 5000)]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: dir + "/events.jsonl"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(extra.map { $0 + "\n" }.joined().utf8))
        try handle.close()

        let r = try await EventSchema.run([dir])
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        // Every type the schema names was written here, so this test covers the whole schema.
        let lines = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let written = Set(objects.compactMap { $0["type"] as? String })
        // Every line, also those MultiRoomRun writes, reads back as a TranscriptEvent of its type.
        for l in lines {
            let decoded = try JSONDecoder().decode(TranscriptLine.self, from: Data(l.utf8))
            #expect(decoded.event?.type.rawValue == decoded.type, "not read as its type: \(l)")
        }
        let schemaTypes = try Self.schemaTypes()
        #expect(written == schemaTypes, "schema types not written: \(schemaTypes.subtracting(written)); written but not in the schema: \(written.subtracting(schemaTypes))")
        // The schema's list of types is the program's one list, both ways.
        let typed = Set(TranscriptEventType.allCases.map(\.rawValue))
        #expect(try Self.schemaBranchTypes() == typed, "every type has its own keys in the schema, and only those")
        #expect(typed == schemaTypes, "in the schema only: \(schemaTypes.subtracting(typed)); in TranscriptEventType only: \(typed.subtracting(schemaTypes))")
        // One participant shape everywhere: the name is the one the room announced.
        let turn = try #require(objects.first { $0["type"] as? String == "speaking_turn" })
        #expect((turn["participant"] as? [String: Any])?["name"] as? String == "Alice")
        #expect(turn["written_ms"] is Int)
        let chat = try #require(objects.first { $0["type"] as? String == "chat" })
        #expect((chat["participant"] as? [String: Any])?["name"] as? String == "Alice", "an empty senderName falls back to the announced name")
        #expect(chat["written_ms"] == nil, "an event written when it happens has no written_ms")
        let roomFile = try #require(objects.first { $0["type"] as? String == "file_started" && $0["output"] as? String == "room" })
        #expect(roomFile["participant"] is NSNull)
    }

    static let good = #"{"type":"speaking_turn","participant":{"identity":"u-1","name":"Alice"},"start_ms":1000,"end_ms":2500,"time":"2026-12-01T10:00:01.000Z","offset_ms":1000,"written_ms":3100}"#

    /// The check can fail: lines the schema must refuse, each with the reason the validator gives.
    @Test(arguments: [
        // The older shape: participant as a bare identity, name beside it.
        (#"{"type":"speaking_turn","participant":"u-1","name":"Alice","start_ms":1000,"end_ms":2500,"time":"2026-12-01T10:00:01.000Z","offset_ms":1000,"written_ms":3100}"#,
         "participant: 'u-1' is not of type 'object'"),
        // A turn that does not say it was written later.
        (#"{"type":"speaking_turn","participant":{"identity":"u-1","name":"Alice"},"start_ms":1000,"end_ms":2500,"time":"2026-12-01T10:00:01.000Z","offset_ms":1000}"#,
         "'written_ms' is a required property"),
        (#"{"type":"no_such_event","time":"2026-12-01T10:00:01.000Z","offset_ms":1}"#, "is not one of"),
        (#"{"type":"connected","time":"2026-12-01 10:00:01","offset_ms":1}"#, "does not match"),
        (#"{"type":"connected","time":"2026-12-01T10:00:01.000Z","offset_ms":1,"extra":true}"#, "'extra' was unexpected"),
        (#"{"type":"gap","participant":{"identity":"u-1","name":""},"track_sid":"TR_1","duration_ms":400,"cause":"solar flare","time":"2026-12-01T10:00:01.000Z","offset_ms":1,"written_ms":2}"#,
         "'solar flare' is not one of"),
        (#"{"type":"connected","time":"2026-12-01T10:00:01.000Z"}"#, "'offset_ms' is a required property"),
        (#"{"type":"connected","#, "not JSON"),
    ])
    func aBadLineIsRejected(line: String, reason: String) async throws {
        let dir = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data((Self.good + "\n" + line + "\n").utf8).write(to: URL(fileURLWithPath: dir + "/events.jsonl"))
        let r = try await EventSchema.run([dir])
        #expect(r.exitCode == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("events.jsonl:2: ") && r.stdout.contains(reason), "\(r.stdout)")
        #expect(!r.stdout.contains("events.jsonl:1: "), "the good line is accepted: \(r.stdout)")
    }
}

import BedrudProtocol
import Testing
@testable import BedrudBot

/// events.jsonl read back as the type that writes it: old lines, unknown types and the
/// half line a crash leaves.
@Suite struct TranscriptEventReadingTests {
    @Test func linesOfEveryAgeAndACutOffOne() throws {
        let (lines, unreadable) = TranscriptLine.read("""
            {"type":"participant_joined","offset_ms":5,"participant":{"identity":"p1","name":"P One","sid":"PA_1"},"tracks":[]}
            {"type":"speaking_turn","offset_ms":200,"participant":"p1","name":"Old Name","start_ms":200,"end_ms":900}

            {"type":"hologram_beamed","offset_ms":300,"participant":{"identity":"p1","name":"P One"},"colour":"teal"}
            {"type":"chat","offset_ms":400,"message":"no participant"}
            ["not", "an", "object"]
            {"type":"chat","offset_ms":1200,"partic
            """)
        #expect(unreadable == 2)
        #expect(lines.map(\.type) == ["participant_joined", "speaking_turn", "hologram_beamed", "chat"])
        #expect(lines[0].identity == "p1" && lines[0].displayName == "P One" && lines[0].unreadFields == nil)
        #expect(lines[1].identity == "p1" && lines[1].displayName == "Old Name", "a bare identity, the name beside it")
        #expect(lines[2].event == nil && lines[2].unreadFields?["colour"] == .string("teal"), "an unknown type keeps its keys")
        #expect(lines[3].event == nil && lines[3].unreadFields?["message"] == .string("no participant"), "a chat needs its sender")
        #expect(lines.map(\.offsetMs) == [5, 200, 300, 400])
    }

    @Test func theParticipantOfEachKindOfLine() {
        let (lines, _) = TranscriptLine.read("""
            {"type":"reaction","participant":{"identity":"bob","name":""},"message_id":"m","emoji":"👍"}
            {"type":"file_started","participant":null,"output":"room"}
            {"type":"gap","participant":{"identity":"alice","name":"Alice"},"duration_ms":5,"cause":"loss"}
            {"type":"moderation","event":"kick","target":"bob"}
            """)
        #expect(lines.map(\.identity) == ["bob", nil, "alice", nil])
        #expect(lines.map(\.displayName) == [nil, nil, "Alice", nil], "an empty name is no name")
    }
}

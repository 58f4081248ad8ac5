import BedrudProtocol
@testable import BedrudBot
import Foundation
import Testing

/// summary.json read back as the type that writes it, tolerant of files from elsewhere.
@Suite struct SessionSummaryDecodingTests {
    static func decode(_ text: String) throws -> SessionSummary { try JSONDecoder().decode(SessionSummary.self, from: Data(text.utf8)) }

    @Test func aWrittenSummaryReadsBackAsItself() throws {
        let p = SessionSummary.Participant(
            identity: "alice", name: "Alice", file: Nullable("Alice.opus"), startOffsetMs: Nullable(120), durationMs: Nullable(5000), speakingMs: 3100,
            packets: Nullable(250), lost: Nullable(2), late: Nullable(nil), duplicates: Nullable(0), fecRecovered: Nullable(1), concealedMs: Nullable(40),
            gapsMs: ["loss": 40, "noPackets": 0], mixLate: Nullable(3), mixConcealedMs: Nullable(nil), dropped: Nullable(1))
        var s = SessionSummary(
            room: Nullable("standup"), server: Nullable("http://127.0.0.1:1"), started: Nullable("2026-12-01T13:00:00.000Z"),
            ended: Nullable(nil), durationMs: 5000, endReason: "signal", exitCode: Nullable(0), message: "stopped by SIGINT", participants: [p],
            files: ["Alice.opus", "events.jsonl"], roomFile: Nullable("room.opus"), reconnects: 1, reconnectAttempts: 2, chatMessages: 4,
            chat: Nullable(.init(ChatAssembler.Stats())), network: Nullable(nil),
            onFinish: Nullable(.init(command: "upload", exitCode: Nullable(nil), signal: Nullable(9), timedOut: true, durationMs: 12)),
            storage: Nullable(.init(diskFull: true, error: Nullable("ENOSPC"), pagesDropped: 3, unfinishedFiles: 1, eventsLost: 2)),
            repaired: .init(eventLines: 10, eventLinesUnreadable: 1, filesRepaired: ["room.opus"]))
        #expect(try Self.decode(s.json()) == s)
        s.repaired = nil
        #expect(try Self.decode(s.json()) == s)
    }

    @Test func missingNullAndMistypedKeysReadAsAbsent() throws {
        let s = try Self.decode("""
            {"room":null,"started":"2026-12-01T13:00:00.000Z","duration_ms":"long","end_reason":7,"future_key":{"x":1},
             "participants":[{"identity":"a","name":"A","packets":"many","gaps_ms":{"loss":40,"odd":"x"}},{"name":"no identity"}],
             "network":{"tracks":[{"ssrc":5,"participant":"a","jitter_ms":1.5},"not a track"]}}
            """)
        #expect(s.room == Nullable(nil) && s.started == Nullable("2026-12-01T13:00:00.000Z"))
        #expect(s.durationMs == 0 && s.endReason.isEmpty && s.message.isEmpty && s.exitCode == Nullable(nil))
        #expect(s.participants.map(\.identity) == ["a"], "a participant without an identity is left out")
        #expect(s.participants.first?.packets == Nullable(nil) && s.participants.first?.gapsMs == ["loss": 40])
        #expect(s.network.value?.tracks.map(\.ssrc) == [5] && s.network.value?.tracks.first?.jitterMs == 1.5)
        #expect(s.network.value?.srtpProfile == Nullable(nil))
        #expect(throws: DecodingError.self) { try Self.decode("[1, 2]") }
        #expect(throws: DecodingError.self) { try Self.decode(#"{"room":"cut off"#) }
    }
}

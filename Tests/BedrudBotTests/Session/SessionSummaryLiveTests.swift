@testable import BedrudBot
@testable import BedrudMedia
import BedrudProtocol
import Foundation
import Testing

/// The summary of a live session, from the run's facts: one entry per recording, each
/// describing its own file; chat chunk counters; bytes of an ordinary session unchanged.
@Suite struct SessionSummaryLiveTests {
    static let alice = RecordingOutput.participant(identity: "u-1", name: "Alice")

    static func stats(_ identity: String, packets: Int, durationMs: Int64, gaps: [GapCause: Int64] = [:]) -> ParticipantMediaStats {
        var s = ParticipantMediaStats(identity: identity)
        s.packets = packets
        s.lost = packets / 100
        s.fileDurationMillis = durationMs
        s.gapMillis = gaps
        return s
    }

    static func facts(log: SessionSummary.MediaLog, media: [ParticipantMediaStats], made: [RecordingOutput: [String]],
                      chat: ChatAssembler.Stats = .init()) -> SessionSummary.Facts {
        var m = MediaStats()
        m.participants = media
        return SessionSummary.Facts(
            room: "standup", server: "http://127.0.0.1:1", startUnixNanos: 1_764_583_200_000_000_000, durationMs: 160_000,
            endReason: .signal, exitCode: 0, message: "stopped by signal", names: ["u-1": "Alice"], media: m, log: log,
            madePaths: made, folderFiles: ["Alice.opus", "Alice-2.opus", "room.opus", "events.jsonl", "transcript.vtt.part", "summary.json.part"],
            reconnects: 1, chatMessages: 2, chat: chat, network: nil)
    }

    /// A rejoin as a new session, live side: Alice came back after a 150 s drop.
    /// Both entries named `Alice-2.opus` and start 130, with the identity's whole speaking
    /// time in each; now each names its own file, start and speaking.
    @Test func eachRecordingOfARejoinedParticipantIsItsOwnEntry() throws {
        var log = SessionSummary.MediaLog()
        let events: [MediaEvent] = [
            .fileStarted(identity: "", output: .room, startOffsetMillis: 0),
            .fileStarted(identity: "u-1", output: Self.alice, startOffsetMillis: 130),
            .speakingTurn(identity: "u-1", startMillis: 1000, endMillis: 3000),
            .speakingTurn(identity: "u-1", startMillis: 9000, endMillis: 10_000),
            // The outage: Alice's first file ends where it began (no filler), at 10 s.
            .fileFinished(identity: "u-1", output: Self.alice, startOffsetMillis: 130, durationMillis: 9870),
            .fileStarted(identity: "u-1", output: Self.alice, startOffsetMillis: 141_032),
            .speakingTurn(identity: "u-1", startMillis: 150_000, endMillis: 150_500),
            .gap(identity: "u-1", trackSid: "TR_2", startMillis: 152_000, durationMillis: 200, cause: .dtx),
            .fileFinished(identity: "u-1", output: Self.alice, startOffsetMillis: 141_032, durationMillis: 18_968),
        ]
        for e in events { log.handle(e) }
        var second = Self.stats("u-1", packets: 940, durationMs: 18_968, gaps: [.dtx: 200])
        (second.overlapDropped, second.corrupt, second.ringDropped) = (4, 2, 1)
        let media = [Self.stats("u-1", packets: 490, durationMs: 9870), second]
        let made: [RecordingOutput: [String]] = [.room: ["/s/room.opus"], Self.alice: ["/s/Alice.opus", "/s/Alice-2.opus"]]
        var chat = ChatAssembler.Stats()
        chat.chats = 2
        chat.reassembled = 1
        chat.orphanChunks = 3
        let s = SessionSummary(Self.facts(log: log, media: media, made: made, chat: chat))
        #expect(s.participants.map(\.file.value) == ["Alice.opus", "Alice-2.opus"])
        #expect(s.participants.map(\.startOffsetMs.value) == [130, 141_032])
        #expect(s.participants.map(\.durationMs.value) == [9870, 18_968])
        #expect(s.participants.map(\.speakingMs) == [3000, 500])
        #expect(s.participants.map(\.packets.value) == [490, 940])
        #expect(s.participants.map(\.dropped.value) == [0, 7], "received and not used: overlap, corrupt, no room in the ring")
        #expect(s.participants.map(\.gapsMs) == [[:], ["dtx": 200]])
        // The first file ends at the outage's start: no reconnect filler in it.
        let first = try #require(s.participants.first)
        #expect((first.startOffsetMs.value ?? 0) + (first.durationMs.value ?? 0) == 10_000)
        #expect(first.gapsMs["reconnect"] == nil)
        #expect(s.roomFile.value == "room.opus")
        #expect(s.files == ["Alice-2.opus", "Alice.opus", "events.jsonl", "room.opus", "summary.json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(s.json().utf8)) as? [String: Any])
        #expect(json["chat"] as? [String: Int] == ["chats": 2, "reassembled": 1, "duplicate_chats": 0, "orphan_chunks": 3,
                                                   "ignored_chunks": 0, "dropped": 0])
        #expect(json["repaired"] == nil)
    }

    /// A rotated file is one recording: its first file, the whole duration, every turn.
    @Test func aRotatedFileStaysOneEntry() {
        var log = SessionSummary.MediaLog()
        for e: MediaEvent in [
            .fileStarted(identity: "u-1", output: Self.alice, startOffsetMillis: 0),
            .speakingTurn(identity: "u-1", startMillis: 500, endMillis: 1500),
            .fileRotated(identity: "u-1", output: Self.alice, segment: 2, atMillis: 1000, cause: .duration),
            .fileStarted(identity: "u-1", output: Self.alice, startOffsetMillis: 1006),
            .speakingTurn(identity: "u-1", startMillis: 1800, endMillis: 1900),
        ] { log.handle(e) }
        let made: [RecordingOutput: [String]] = [Self.alice: ["/s/Alice.opus", "/s/Alice.002.opus"]]
        let s = SessionSummary(Self.facts(log: log, media: [Self.stats("u-1", packets: 100, durationMs: 1994)], made: made))
        #expect(s.participants.map(\.file.value) == ["Alice.opus"])
        #expect(s.participants.map(\.startOffsetMs.value) == [0])
        #expect(s.participants.map(\.speakingMs) == [1100])
    }

    /// A participant whose audio never arrived has no file, and the keys are still all there.
    @Test func aParticipantWithoutAudioHasNoFile() throws {
        let s = SessionSummary(Self.facts(log: SessionSummary.MediaLog(), media: [Self.stats("u-1", packets: 0, durationMs: 0)], made: [:]))
        let p = try #require(s.participants.first)
        #expect(p.file.value == nil && p.startOffsetMs.value == nil && p.speakingMs == 0 && p.packets.value == 0)
        #expect(s.roomFile.value == nil)
        #expect(s.endReason == "signal" && s.exitCode.value == 0)
        #expect(s.started.value == "2025-12-01T10:00:00.000Z" && s.ended.value == "2025-12-01T10:02:40.000Z")
    }
}

@testable import BedrudBot
import BedrudCore
import BedrudMedia
import BedrudProtocol
import Foundation
import Synchronization
import Testing
import TestSupport

/// One event of every type, written the way `join` writes them: shared by the schema test
/// and the golden bytes below.
enum EveryEvent {
    /// A monotonic clock that moves 7 ms each time it is read, so every line is reproducible.
    final class SteppingClock: Sendable {
        let reads = Atomic<UInt64>(0)
        static let start: UInt64 = 1_000_000_000
        func now() -> UInt64 { Self.start + reads.add(1, ordering: .relaxed).newValue * 7_000_000 }
    }

    static func writer(_ path: String?, clock: SteppingClock? = nil) throws -> TranscriptWriter {
        guard let clock else { return try TranscriptWriter(path: path, startUnixNanos: 1_764_583_200_000_000_000, startMonotonicNanos: MonotonicClock.nanos()) }
        return try TranscriptWriter(path: path, startUnixNanos: 1_764_583_200_000_000_000, startMonotonicNanos: SteppingClock.start, clock: { clock.now() })
    }

    static func write(to w: TranscriptWriter) {
        w.write(.sessionStarted(.init(room: "standup", server: "http://127.0.0.1:1", livekitHost: "http://127.0.0.1:1/livekit",
                                      botIdentity: "u-bot", botName: "Recorder", version: "0", note: "n")))
        let bot = MeetingParticipant(identity: "u-bot", sid: "PA_bot", name: "Recorder")
        let mic = MeetingTrack(sid: "TR_1", kind: .audio, source: .microphone, muted: false, mimeType: "audio/opus")
        let alice = MeetingParticipant(identity: "u-1", sid: "PA_1", name: "Alice", metadata: #"{"accesses":["user"]}"#, tracks: [mic])
        var system = LiveKit.Transcription()
        system.transcribedParticipantIdentity = "u-1"
        var rpc = LiveKit.RpcRequest()
        rpc.method = "ping"
        let events: [RoomEvent] = [
            .roomJoined(MeetingRoom(sid: "RM_1", name: "standup"), local: bot), .connected,
            .participantJoined(alice), .trackPublished(mic, participant: "u-1"), .trackMuted(mic, participant: "u-1"),
            .trackUnmuted(mic, participant: "u-1"), .trackUnpublished(mic, participant: "u-1"),
            .trackSubscriptionFailed(trackSid: "TR_2", error: .codecUnsupported),
            .speakersChanged(active: [MeetingSpeaker(identity: "u-1", sid: "PA_1", level: 0.5)], started: ["u-1"], stopped: []),
            .connectionQualityChanged(participant: "u-1", quality: .excellent, score: 4.5),
            .dataReceived(MeetingDataMessage(topic: "x", senderIdentity: "u-1", senderSid: "PA_1", payload: [1, 2], reliable: true)),
            .chatReceived(MeetingChatMessage(id: "c1", senderIdentity: "u-1", senderName: "", text: "hi", timestampMs: 1,
                                             attachments: [BedrudChatPayload.Attachment(kind: "image", url: "https://x/y.png", mime: "image/png")])),
            .systemMessage(BedrudSystemMessage(event: .kick, actor: "u-1", target: "u-2"), sender: "u-1"),
            .chatReceived(MeetingChatMessage(id: "c2", senderIdentity: "u-1", senderName: "Alice", text: "", timestampMs: 2, attachments: [
                BedrudChatPayload.Attachment(kind: "image", url: "data:image/png;base64,iVBORw0KGgo=", mime: "image/png"),
                BedrudChatPayload.Attachment(kind: "file", url: "data:text/plain,not-base64", mime: "text/plain", name: "a.txt"),
            ], poll: BedrudChatPoll(id: "p1", question: "Lunch?", options: [.init(id: "a", text: "Pizza"), .init(id: "b", text: "Soup")]))),
            .pollVoteReceived(BedrudPollVote(messageId: "c2", optionId: "b", voterIdentity: "u-1"), sender: "u-1"),
            .reactionReceived(BedrudReaction(messageId: "c2", emoji: "👍", voterIdentity: "u-1"), sender: "u-1"),
            .chatDropped(ChatAssembler.Drop(id: "c3", sender: "u-1", reason: .timedOut, receivedChunks: 1, expectedChunks: 3)),
            .presenceReceived(.deafenState(identity: "u-1", deafened: true), sender: "u-1"),
            .systemMessage(BedrudSystemMessage(event: .roomEnded, actor: "", target: "", message: "The meeting has ended"), sender: ""),
            .presenceReceived(.profileChanged(identity: "u-1", name: "Alice B", avatarURL: ""), sender: "u-1"),
            .transcriptionReceived(system, sender: "agent"), .dtmfReceived(code: 1, digit: "1", sender: "u-1"),
            .rpcRequestReceived(rpc, sender: "u-1"),
            .participantUpdated(alice, changes: []), .participantRejoined(alice, previousSid: "PA_0"),
            .reconnecting(.resume), .reconnected(.resumed), .roomMoved(MeetingRoom(sid: "RM_2", name: "other")),
            .participantLeft(alice, reason: .disconnected(.clientInitiated)), .disconnected(.left),
        ]
        var formatter = RoomEventFormatter()
        for e in events {
            _ = formatter.text(e)
            TranscriptEvents.write(e, to: w, formatter: formatter)
        }
        let names = ["u-1": "Alice"]
        let media: [MediaEvent] = [
            .fileStarted(identity: "", output: .room, startOffsetMillis: 0),
            .fileStarted(identity: "u-1", output: .participant(identity: "u-1", name: "Alice"), startOffsetMillis: 0),
            .gap(identity: "u-1", trackSid: "TR_1", startMillis: 0, durationMillis: 400, cause: .dtx),
            .speakingTurn(identity: "u-1", startMillis: 0, endMillis: 1),
            .fileFinished(identity: "u-1", output: .participant(identity: "u-1", name: "Alice"), startOffsetMillis: 0, durationMillis: 1),
            .fileFinished(identity: "", output: .room, startOffsetMillis: 0, durationMillis: 2),
            .fileRotated(identity: "u-1", output: .participant(identity: "u-1", name: "Alice"), segment: 2, atMillis: 1, cause: .signal),
            .fileRotated(identity: "", output: .room, segment: 3, atMillis: 2, cause: .duration),
            .warning("dropped"),
        ]
        for e in media { TranscriptEvents.write(e, to: w, name: { names[$0] ?? "" }) }
        var refusal = LiveKit.RequestResponse()
        refusal.requestID = 7
        refusal.reason = .notAllowed
        TranscriptEvents.write(.requestRefused(RefusedRequest(refusal)), to: w, formatter: formatter)
        w.write(.sessionEnded(.init(reason: "left", endReason: "left", exitCode: 0, detail: "left the room", durationMs: 1)))
    }

    /// Text that tests the bytes: a slash, U+2028, C0 and C1 controls, a bidi override,
    /// emoji, a name past 16 KiB (cut), a chat past 16 KiB (whole), levels and scores that
    /// are not whole, whole and tiny, and counts and times past 2^32.
    static let hostile = "a/b\u{2028}c\u{0}d\u{1B}[31me\u{85}f\u{202E}g\"h\\i\tj\nk👍\u{7F}"

    static func writeHostile(to w: TranscriptWriter) {
        let longName = String(repeating: "é", count: 9000) + "tail"  // 18,004 bytes
        let longChat = String(repeating: "x/", count: 10_000)
        let mic = MeetingTrack(sid: "TR_/1", kind: .audio, source: .microphone, muted: true, mimeType: "audio/opus")
        let odd = MeetingParticipant(identity: "u-\(hostile)", sid: "PA_2", name: longName, metadata: #"{"accesses":["user","admin/\u2028"]}"#, tracks: [mic])
        var system = LiveKit.Transcription()
        system.transcribedParticipantIdentity = "u-\(hostile)"
        var segment = LiveKit.TranscriptionSegment()
        segment.text = longChat
        segment.isFinal = true
        segment.language = hostile
        system.segments = [segment]
        let events: [RoomEvent] = [
            .participantJoined(odd),
            .speakersChanged(active: [MeetingSpeaker(identity: "u-\(hostile)", sid: "PA_2", level: 0.3),
                                      MeetingSpeaker(identity: "u-1", sid: "PA_1", level: 1),
                                      MeetingSpeaker(identity: "u-3", sid: "PA_3", level: 1e-7)], started: [hostile], stopped: ["u-1"]),
            .connectionQualityChanged(participant: "u-\(hostile)", quality: .poor, score: 2.7),
            .connectionQualityChanged(participant: "u-1", quality: .good, score: 4),
            .dataReceived(MeetingDataMessage(topic: nil, senderIdentity: "u-\(hostile)", senderSid: "PA_2", payload: [UInt8](repeating: 0, count: 70_000), reliable: false)),
            .chatReceived(MeetingChatMessage(id: "c/\(hostile)", senderIdentity: "u-\(hostile)", senderName: hostile, text: longChat + hostile,
                                             timestampMs: 1_764_583_200_123, attachments: [])),
            .chatReceived(MeetingChatMessage(id: "c9", senderIdentity: "u-9", senderName: "", text: hostile, timestampMs: -5, attachments: [
                BedrudChatPayload.Attachment(kind: "file", url: "https://x/\(longName)", mime: "", size: 5_000_000_000, name: hostile),
            ], poll: BedrudChatPoll(id: "p/2", question: longName, options: [.init(id: "a", text: hostile)]))),
            .systemMessage(BedrudSystemMessage(event: .kick, actor: hostile, target: longName, message: longChat), sender: hostile),
            .transcriptionReceived(system, sender: hostile),
            .presenceReceived(.profileChanged(identity: "u-\(hostile)", name: longName, avatarURL: "https://x/a.png"), sender: "u-1"),
            .participantLeft(odd, reason: .absentAfterRejoin),
        ]
        var formatter = RoomEventFormatter()
        for e in events {
            _ = formatter.text(e)
            TranscriptEvents.write(e, to: w, formatter: formatter)
        }
        TranscriptEvents.write(.speakingTurn(identity: "u-\(hostile)", startMillis: 5_000_000_000, endMillis: 5_000_000_001), to: w, name: { _ in longName })
        TranscriptEvents.write(.gap(identity: "u-\(hostile)", trackSid: "TR_/1", startMillis: -3, durationMillis: 0, cause: .reconnect), to: w, name: { _ in hostile })
        TranscriptEvents.write(.warning(longChat + hostile), to: w, name: { _ in "" })
    }
}

/// The exact bytes of `events.jsonl` for one event of every type and for hostile text,
/// against a fixture written by the `[String: Any]` writer before events became typed:
/// the typed events must not change a byte.
@Suite struct TranscriptWriterGoldenTests {
    static let fixture = Repo.root.appendingPathComponent("Tests/BedrudBotTests/Session/Fixtures/every-event.jsonl")

    @Test func everyEventIsWrittenByteForByteAsBefore() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let w = try EveryEvent.writer(dir + "/events.jsonl", clock: EveryEvent.SteppingClock())
        EveryEvent.write(to: w)
        EveryEvent.writeHostile(to: w)
        let written = try Data(contentsOf: URL(fileURLWithPath: dir + "/events.jsonl"))
        if ProcessInfo.processInfo.environment["BEDRUD_WRITE_GOLDEN"] == "1" { try written.write(to: Self.fixture) }
        let expected = try Data(contentsOf: Self.fixture)
        let a = String(decoding: written, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let b = String(decoding: expected, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(a.count == b.count)
        for (n, (x, y)) in zip(a, b).enumerated() where x != y {
            Issue.record("line \(n + 1) differs:\n  now:    \(x.prefix(400))\n  before: \(y.prefix(400))")
        }
        #expect(written == expected)
    }

    /// `repair` reads every line back as the value it was written from: decoding and
    /// encoding again gives the same bytes, so no key is lost or added on the way.
    @Test func everyLineDecodesToTheEventItWasWrittenFrom() throws {
        let text = try String(contentsOf: Self.fixture, encoding: .utf8)
        for original in text.split(separator: "\n") {
            let line = try JSONDecoder().decode(TranscriptLine.self, from: Data(original.utf8))
            let event = try #require(line.event, "not read as its type: \(original.prefix(300))")
            #expect(event.type.rawValue == line.type)
            #expect(TranscriptWriter.line(line) == String(original), "\(original.prefix(300))")
        }
    }

    /// The lines `join A B --json` writes itself, as printed: a room that never started and the run's end.
    @Test func theRunsOwnLinesAreWrittenByteForByteAsBefore() throws {
        var rooms = RoomsOutcome(labels: ["standup", "no/such", "third"])
        _ = rooms.handle(.finished("standup", .init(code: .success, endReason: .duration, detail: "duration of 5s reached", folder: "/rec/standup/2025-12-01")))
        _ = rooms.handle(.finished("no/such", .init(code: .notFound, endReason: nil, detail: "Room not found: \(EveryEvent.hostile)", folder: nil)))
        let lines = [MultiRoomRun.notStartedLine(label: "no/such", code: .notFound, detail: "Room not found: \(EveryEvent.hostile)", unixNanos: 1_764_583_200_123_000_000),
                     MultiRoomRun.runEndedLine(rooms, startUnixNanos: 1_764_583_200_000_000_000, offsetMs: 5000)]
        let fixture = Repo.root.appendingPathComponent("Tests/BedrudBotTests/Session/Fixtures/run-lines.jsonl")
        // As printed: Console.json escapes C1 controls and bidi overrides.
        let text = lines.map { TerminalText.escapingJSON($0) + "\n" }.joined()
        if ProcessInfo.processInfo.environment["BEDRUD_WRITE_GOLDEN"] == "1" { try Data(text.utf8).write(to: fixture) }
        #expect(text == (try String(contentsOf: fixture, encoding: .utf8)))
    }
}

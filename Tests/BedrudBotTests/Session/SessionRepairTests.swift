@testable import BedrudBot
import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRuntime
import Foundation
import Testing
import TestSupport

/// `SessionRepair`: `repair` of a finished file changes nothing; repair never removes an
/// original before its replacement is complete and verified; `repair SESSION_DIR`
/// rebuilds a crashed session.
@Suite struct SessionRepairTests {
    @Test func rebuildsTranscriptAndSummaryFromEvents() throws {
        let events = """
            {"type":"session_started","room":"standup","server":"http://127.0.0.1:1","time":"2026-12-01T10:00:00.000Z","offset_ms":0}
            {"type":"participant_joined","participant":{"identity":"u-1","name":"علی رضایی","sid":"PA_1","accesses":[]},"time":"2026-12-01T10:00:00.100Z","offset_ms":100}
            {"type":"speaking_turn","participant":"u-1","name":"علی رضایی","start_ms":1000,"end_ms":2500,"time":"2026-12-01T10:00:01.000Z","offset_ms":1000}
            {"type":"chat","participant":{"identity":"u-1","name":"علی رضایی"},"message":"سلام <all>","time":"2026-12-01T10:00:03.000Z","offset_ms":3000}
            {"type":"reconnecting","mode":"resume","time":"2026-12-01T10:00:04.000Z","offset_ms":4000}
            {"type":"file_started","participant":"u-1","output":"x","time":"2026-12-01T10:00:05.000Z","offset_ms":5000}
            {"type":"speaking_tu
            """
        let files = [SessionRepair.RecordedFile(name: "علی رضایی.opus", identity: "u-1", durationMillis: 4900),
                     SessionRepair.RecordedFile(name: "room.opus", identity: nil, durationMillis: 5000)]
        let (vtt, s) = SessionRepair.rebuild(events: events, files: files, repairedFiles: ["room.opus"])
        #expect(vtt == "WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.500\n<v علی رضایی>(speaking)\n\n2\n00:00:03.000 --> 00:00:06.000\n<v علی رضایی>[chat] سلام &lt;all&gt;\n\n")
        #expect(s.endReason == "crashed")
        #expect(s.exitCode.value == nil)
        #expect(s.room.value == "standup" && s.started.value == "2026-12-01T10:00:00.000Z" && s.ended.value == "2026-12-01T10:00:05.000Z")
        #expect(s.durationMs == 5000)
        #expect(s.reconnects == 1 && s.chatMessages == 1)
        #expect(s.repaired?.eventLines == 6 && s.repaired?.eventLinesUnreadable == 1)
        #expect(s.participants.count == 1)
        #expect(s.participants.first?.file.value == "علی رضایی.opus" && s.participants.first?.durationMs.value == 4900)
        #expect(s.roomFile.value == "room.opus")
        let json = try JSONSerialization.jsonObject(with: Data(s.json().utf8)) as? [String: Any]
        #expect(json?["end_reason"] as? String == "crashed")
    }

    /// After a kill -9 at 20 s whose last event was at 5 s, the rebuilt summary said 5040 ms
    /// and an `ended` 15 s early, left out exit_code, network, storage and each
    /// participant's start_offset_ms, packets and lost, listed the bot, and the transcript
    /// stopped at the last speaking event.
    @Test func theSummaryComesFromTheFilesEndAndSaysWhatIsUnknown() throws {
        let events = """
            {"type":"session_started","room":"standup","server":"http://127.0.0.1:1","bot_identity":"u-bot","time":"2026-12-01T10:00:00.000Z","offset_ms":0}
            {"type":"joined","room":"standup","participant":{"identity":"u-bot","name":"bedrud-bot","sid":"PA_b","accesses":[]},"time":"2026-12-01T10:00:00.050Z","offset_ms":50}
            {"type":"participant_joined","participant":{"identity":"u-bot","name":"bedrud-bot","sid":"PA_b","accesses":[]},"time":"2026-12-01T10:00:00.060Z","offset_ms":60}
            {"type":"participant_joined","participant":{"identity":"u-1","name":"Alice","sid":"PA_1","accesses":[]},"time":"2026-12-01T10:00:00.100Z","offset_ms":100}
            {"type":"speaking_turn","participant":{"identity":"u-1","name":"Alice"},"start_ms":1000,"end_ms":2000,"time":"2026-12-01T10:00:01.000Z","offset_ms":1000,"written_ms":2400}
            {"type":"gap","participant":{"identity":"u-1","name":"Alice"},"track_sid":"TR_1","duration_ms":400,"cause":"dtx","time":"2026-12-01T10:00:02.500Z","offset_ms":2500,"written_ms":2900}
            {"type":"speakers_changed","active":[],"started":["u-1"],"stopped":[],"time":"2026-12-01T10:00:04.000Z","offset_ms":4000}
            {"type":"connection_quality","participant":{"identity":"u-1","name":"Alice"},"quality":"excellent","score":4.5,"time":"2026-12-01T10:00:05.040Z","offset_ms":5040}
            """
        let files = [SessionRepair.RecordedFile(name: "Alice.opus", identity: "u-1", durationMillis: 19870, startOffsetMillis: 130),
                     SessionRepair.RecordedFile(name: "room.opus", identity: nil, durationMillis: 20000, startOffsetMillis: 0)]
        let (vtt, s) = SessionRepair.rebuild(events: events, files: files, repairedFiles: ["Alice.opus", "room.opus"])
        #expect(s.durationMs == 20000)
        #expect(s.ended.value == "2026-12-01T10:00:20.000Z")
        #expect(s.participants.map(\.identity) == ["u-1"])
        let alice = try #require(s.participants.first)
        #expect(alice.startOffsetMs.value == 130 && alice.durationMs.value == 19870)
        #expect(alice.speakingMs == 1000 + 16000)  // the closed turn, and the one open at the kill to the file's end
        #expect(alice.gapsMs == ["dtx": 400])
        #expect(vtt.contains("00:00:04.000 --> 00:00:20.000\n<v Alice>(speaking)"), "\(vtt)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(s.json().utf8)) as? [String: Any])
        for key in ["exit_code", "network", "storage", "on_finish", "room_file", "ended", "started"] {
            #expect(json.keys.contains(key), "summary.json misses \(key)")
        }
        #expect(json["exit_code"] is NSNull && json["network"] is NSNull && json["storage"] is NSNull)
        let p = try #require((json["participants"] as? [[String: Any]])?.first)
        for key in ["identity", "name", "file", "start_offset_ms", "duration_ms", "speaking_ms", "packets", "lost", "late", "duplicates",
                    "fec_recovered", "concealed_ms", "gaps_ms", "mix_late", "mix_concealed_ms", "dropped"] {
            #expect(p.keys.contains(key), "a participant misses \(key)")
        }
        #expect(p["packets"] is NSNull && p["lost"] is NSNull && p["dropped"] is NSNull && p["start_offset_ms"] as? Int == 130)
    }

    /// After a rejoin with new sessions, each entry describes its own file.
    @Test func eachFileOfOneIdentityIsItsOwnEntry() throws {
        let events = """
            {"type":"session_started","room":"r","server":"s","time":"2026-12-01T10:00:00.000Z","offset_ms":0}
            {"type":"participant_joined","participant":{"identity":"u-1","name":"Alice","sid":"PA_1","accesses":[]},"time":"2026-12-01T10:00:00.100Z","offset_ms":100}
            {"type":"speaking_turn","participant":{"identity":"u-1","name":"Alice"},"start_ms":1000,"end_ms":3000,"time":"2026-12-01T10:00:01.000Z","offset_ms":1000}
            {"type":"speaking_turn","participant":{"identity":"u-1","name":"Alice"},"start_ms":150000,"end_ms":150500,"time":"2026-12-01T10:02:30.000Z","offset_ms":150000}
            """
        let files = [SessionRepair.RecordedFile(name: "Alice.opus", identity: "u-1", durationMillis: 9870, startOffsetMillis: 130),
                     SessionRepair.RecordedFile(name: "Alice-2.opus", identity: "u-1", durationMillis: 18968, startOffsetMillis: 141032)]
        let (_, s) = SessionRepair.rebuild(events: events, files: files, repairedFiles: [])
        #expect(s.participants.map(\.file.value) == ["Alice.opus", "Alice-2.opus"])
        #expect(s.participants.map(\.startOffsetMs.value) == [130, 141032])
        #expect(s.participants.map(\.speakingMs) == [2000, 500])
    }

    /// Repair once rebuilt transcript.vtt without the reaction and poll NOTE blocks the
    /// live writer makes. Recorded through the live writer, then rebuilt from its lines:
    /// the same text.
    @Test func theRebuiltTranscriptIsTheLiveOne() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("vtt-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let w = try TranscriptWriter(path: dir + "/events.jsonl", startUnixNanos: 1_764_583_200_000_000_000, startMonotonicNanos: MonotonicClock.nanos())
        let bot = MeetingParticipant(identity: "u-bot", sid: "PA_b", name: "Recorder")
        let alice = MeetingParticipant(identity: "u-1", sid: "PA_1", name: "Alice <3")
        let room: [RoomEvent] = [
            .roomJoined(MeetingRoom(sid: "RM_1", name: "standup"), local: bot), .participantJoined(alice),
            .chatReceived(MeetingChatMessage(id: "c1", senderIdentity: "u-1", senderName: "", text: "hi --> there", timestampMs: 1)),
            .chatReceived(MeetingChatMessage(id: "c2", senderIdentity: "u-1", senderName: "Alice", text: "", timestampMs: 2, attachments: [],
                                             poll: BedrudChatPoll(id: "p1", question: "Lunch?", options: [.init(id: "a", text: "Pizza"), .init(id: "b", text: "Soup")]))),
            .reactionReceived(BedrudReaction(messageId: "c2", emoji: "👍", voterIdentity: "u-1"), sender: "u-1"),
            .reactionReceived(BedrudReaction(messageId: "c2", emoji: "🎉", voterIdentity: "u-bot"), sender: "u-bot"),
            .reactionReceived(BedrudReaction(messageId: "c2", emoji: "👀", voterIdentity: "u-9"), sender: "u-9"),
        ]
        var formatter = RoomEventFormatter()
        for e in room {
            _ = formatter.text(e)
            TranscriptEvents.write(e, to: w, formatter: formatter)
        }
        TranscriptEvents.write(MediaEvent.speakingTurn(identity: "u-1", startMillis: 0, endMillis: 1200), to: w, name: { $0 == "u-1" ? "Alice <3" : "" })
        let live = w.vtt()
        #expect(live.contains("NOTE ") && live.contains("reacted 👍") && live.contains("(bot) reacted 🎉") && live.contains("u-9 reacted 👀")
                && live.contains("asks: Lunch? (Pizza / Soup)"), "\(live)")
        let lines = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8)
        let (rebuilt, _) = SessionRepair.rebuild(events: lines, files: [], repairedFiles: [])
        #expect(rebuilt == live)
    }

    @Test func aChatCueIsOneLineWhateverItHolds() {
        let vtt = TranscriptWriter.vtt(turns: [], chats: [(offsetMs: 0, name: "Mal\u{1B}[2J", text: "first\n00:00:09.000 --> 00:00:10.000\nforged")])
        #expect(vtt == "WEBVTT\n\n1\n00:00:00.000 --> 00:00:03.000\n<v Mal\\x1b[2J>[chat] first\\n00:00:09.000 --&gt; 00:00:10.000\\nforged\n\n")
    }

    @Test func outputDirectoryDefaults() {
        #expect(Configuration.defaultOutputDir(["HOME": "/home/a"]) == "/home/a/.local/share/bedrud-bot/recordings")
        #expect(Configuration.defaultOutputDir(["HOME": "/home/a", "XDG_DATA_HOME": "/data"]) == "/data/bedrud-bot/recordings")
        // systemd's StateDirectory= (several folders are colon-separated; the first is ours).
        #expect(Configuration.defaultOutputDir(["HOME": "/", "XDG_DATA_HOME": "/data", "STATE_DIRECTORY": "/var/lib/bedrud-bot:/var/lib/x"])
                == "/var/lib/bedrud-bot/recordings")
    }

    /// A short real recording from the developer recorder: finished, valid files.
    func record() async throws -> (CLIUser, String) {
        let user = try CLIUser()
        let dir = user.home.appendingPathComponent("dev").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try await user.expect(0, ["dev-record", "--dir", dir, "--seconds", "2", "--tracks", "1"])
        return (user, dir)
    }

    func snapshot(_ dir: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for f in try FileManager.default.contentsOfDirectory(atPath: dir) { out[f] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + f)) }
        return out
    }

    @Test func repairOfAFinishedFileChangesNothing() async throws {
        let (user, dir) = try await record()
        let file = dir + "/speaker 0.opus"
        let before = try snapshot(dir)
        for _ in 0..<2 {
            let r = try await user.expect(0, ["repair", file])
            #expect(r.stdout.contains("already a finished, valid recording"), "\(r.stdout)")
            #expect(r.stdout.contains("nothing changed"))
            #expect(try snapshot(dir) == before)
        }
    }

    @Test func aDamagedFinishedFileIsKeptBesideItsRepair() async throws {
        let (user, dir) = try await record()
        let file = dir + "/speaker 0.opus"
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        let cut = whole.prefix(whole.count - 100)
        try cut.write(to: URL(fileURLWithPath: file))
        let r = try await user.expect(0, ["repair", file])
        #expect(r.stdout.contains("-> \(dir)/speaker 0.repaired.opus"), "\(r.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == cut, "the original is never removed or changed")
        try await user.expect(0, ["verify", dir + "/speaker 0.repaired.opus"])
        // Again: the repaired file is there, so nothing is replaced.
        let again = try await user.run(["repair", file])
        #expect(again.exitCode == 13)
        #expect(again.stderr.contains("exists already; repair never replaces a file"), "\(again.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/speaker 0.repaired.opus.repairing"))
    }
}

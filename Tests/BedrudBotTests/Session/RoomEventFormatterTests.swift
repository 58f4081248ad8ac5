@testable import BedrudBot
import BedrudCore
import BedrudMedia
import BedrudProtocol
import Foundation
import Testing

/// Remote text of any length: a participant named with 1 MiB was printed
/// whole on every event, 6.3 MB of stdout in 8 s. Lines and cues cut names and chat;
/// events.jsonl keeps them whole up to ``BoundedText/limitBytes``.
@Suite struct RoomEventFormatterTests {
    static let hugeName = String(repeating: "N", count: 1 << 20)
    static let hugeChat = "start " + String(repeating: "c", count: 1 << 20)
    /// One Character of a million combining marks: a cut by Characters would keep it all.
    static let oneCharacter = "e" + String(repeating: "\u{301}", count: 1 << 20)

    @Test func terminalLinesCutNamesAndChat() {
        var f = RoomEventFormatter()
        let bot = MeetingParticipant(identity: "u-bot", sid: "PA_bot", name: "Recorder")
        let mic = MeetingTrack(sid: "TR_1", kind: .audio, source: .microphone, muted: false, mimeType: "audio/opus")
        let big = MeetingParticipant(identity: "u-1", sid: "PA_1", name: Self.hugeName, tracks: [mic])
        let marks = MeetingParticipant(identity: "u-2", sid: "PA_2", name: Self.oneCharacter)
        _ = f.text(.roomJoined(MeetingRoom(sid: "RM_1", name: Self.hugeName), local: bot))
        let cutName = String(repeating: "N", count: RoomEventFormatter.nameLimit) + "…"
        #expect(f.text(.participantJoined(big)) == "+ \(cutName) joined with microphone")
        #expect(f.text(.trackMuted(mic, participant: "u-1")) == "\(cutName) muted microphone")
        #expect(f.text(.speakersChanged(active: [], started: ["u-1"], stopped: [])) == "speaking: \(cutName)")
        #expect((f.text(.participantJoined(marks))?.unicodeScalars.count ?? .max) <= RoomEventFormatter.nameLimit + 20)
        let chat = f.text(.chatReceived(MeetingChatMessage(id: "c", senderIdentity: "u-1", senderName: "", text: Self.hugeChat, timestampMs: 1, attachments: [])))
        #expect(chat?.hasPrefix("chat \(cutName): start ccc") == true)
        #expect(chat?.unicodeScalars.count == RoomEventFormatter.lineLimit + 1, "\(chat?.unicodeScalars.count ?? 0)")
        #expect(chat?.hasSuffix("c…") == true)
        let named = f.text(.chatReceived(MeetingChatMessage(id: "d", senderIdentity: "u-1", senderName: Self.hugeName, text: "hi", timestampMs: 1, attachments: [])))
        #expect(named == "chat \(cutName): hi")
        // Cutting happens before sanitising, so escapes stay whole and nothing raw gets through.
        let hostile = MeetingParticipant(identity: "u-3", sid: "PA_3", name: String(repeating: "\u{1B}", count: 100))
        let line = f.text(.participantJoined(hostile)) ?? ""
        #expect(line == "+ " + String(repeating: "\\x1b", count: RoomEventFormatter.nameLimit) + "… joined")
    }

    @Test func eventsKeepTextWholeUpTo16KiBAndTheVTTCutsIt() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let w = try TranscriptWriter(path: dir + "/events.jsonl", startUnixNanos: 1_764_583_200_000_000_000, startMonotonicNanos: MonotonicClock.nanos())
        var f = RoomEventFormatter()
        let big = MeetingParticipant(identity: "u-1", sid: "PA_1", name: Self.hugeName)
        let fine = String(repeating: "é", count: 4000)  // 8000 bytes: kept whole
        for e: RoomEvent in [.participantJoined(big),
                             .chatReceived(MeetingChatMessage(id: "c", senderIdentity: "u-1", senderName: "", text: Self.hugeChat, timestampMs: 1, attachments: [])),
                             .chatReceived(MeetingChatMessage(id: "d", senderIdentity: "u-1", senderName: "", text: fine, timestampMs: 1, attachments: []))] {
            _ = f.text(e)
            TranscriptEvents.write(e, to: w, formatter: f)
        }
        TranscriptEvents.write(.speakingTurn(identity: "u-1", startMillis: 0, endMillis: 500), to: w, name: { _ in Self.hugeName })
        let lines = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4)
        // Every line but the long chat's stays small: a name is cut wherever it is repeated.
        for (i, l) in lines.enumerated() where i != 1 { #expect(l.utf8.count < 2 * BoundedText.limitBytes + 1000, "\(l.utf8.count)-byte line") }
        let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let name = (objects[0]["participant"] as? [String: Any])?["name"] as? String ?? ""
        #expect(name.utf8.count <= BoundedText.limitBytes && name.hasSuffix("N…") && name.hasPrefix("NNNN"))
        // A chat's message is kept whole (the web client chunks long ones; the assembler
        // bounds them), only past BoundedMessage.limitBytes is it cut (BoundedTextTests).
        #expect(objects[1]["message"] as? String == Self.hugeChat)
        #expect(objects[2]["message"] as? String == fine)

        let vtt = w.vtt()
        let cutName = String(repeating: "N", count: RoomEventFormatter.nameLimit) + "…"
        #expect(vtt.contains("<v \(cutName)>(speaking)"), "\(vtt.prefix(500))")
        #expect(vtt.contains("<v \(cutName)>[chat] start ccc"))
        #expect(vtt.utf8.count < 4000, "\(vtt.utf8.count)-byte transcript.vtt")
    }
}

import BedrudMedia
import Testing
@testable import BedrudBot

/// Event lines as the bot writes them, for the report's tests.
enum ReportFixture {
    static func who(_ id: String, _ name: String) -> String { #"{"identity":"\#(id)","name":"\#(name)"}"# }

    /// A meeting: Alice and Bob from the start, Carol late; Bob mutes; a 3 s outage with
    /// Alice's reconnect gap; chat with an image; a DTX gap (not drawn); a reaction.
    static let meeting = [
        #"{"type":"session_started","time":"2026-11-29T14:00:00.000Z","offset_ms":0,"room":"standup","server":"http://127.0.0.1:1","bot_identity":"bot-1"}"#,
        #"{"type":"joined","time":"2026-11-29T14:00:00.050Z","offset_ms":50,"room":"standup","participant":{"identity":"bot-1","name":"recorder","sid":"PA_1","accesses":[]}}"#,
        #"{"type":"participant_updated","time":"2026-11-29T14:00:00.060Z","offset_ms":60,"participant":{"identity":"bot-1","name":"recorder","sid":"PA_1","accesses":[]}}"#,
        #"{"type":"participant_joined","time":"2026-11-29T14:00:00.100Z","offset_ms":100,"participant":\#(who("u-alice", "Alice")),"tracks":[]}"#,
        #"{"type":"participant_joined","time":"2026-11-29T14:00:00.100Z","offset_ms":100,"participant":\#(who("u-bob", "Bob")),"tracks":[]}"#,
        #"{"type":"speaking_turn","time":"2026-11-29T14:00:01.000Z","offset_ms":1000,"participant":\#(who("u-alice", "Alice")),"start_ms":1000,"end_ms":4000,"written_ms":4400}"#,
        #"{"type":"track_muted","time":"2026-11-29T14:00:05.000Z","offset_ms":5000,"participant":\#(who("u-bob", "Bob")),"track":{"sid":"TR_b","kind":"audio","source":"microphone","muted":true,"mime":"audio/opus"}}"#,
        #"{"type":"participant_joined","time":"2026-11-29T14:00:06.000Z","offset_ms":6000,"participant":\#(who("u-carol", "Carol")),"tracks":[]}"#,
        #"{"type":"chat","time":"2026-11-29T14:00:07.000Z","offset_ms":7000,"participant":\#(who("u-carol", "Carol")),"message":"hello <b>all</b>","id":"m1","sent_ms":0,"attachments":[{"kind":"image","url":"attachments/cat.png","mime":"image/png"},{"kind":"file","url":"https://example.com/x.pdf","mime":"application/pdf"}]}"#,
        #"{"type":"reconnecting","time":"2026-11-29T14:00:08.000Z","offset_ms":8000,"mode":"resume"}"#,
        #"{"type":"reconnected","time":"2026-11-29T14:00:11.000Z","offset_ms":11000,"outcome":"resumed"}"#,
        #"{"type":"gap","time":"2026-11-29T14:00:08.000Z","offset_ms":8000,"participant":\#(who("u-alice", "Alice")),"track_sid":"TR_a","duration_ms":3000,"cause":"reconnect","written_ms":11050}"#,
        #"{"type":"gap","time":"2026-11-29T14:00:12.000Z","offset_ms":12000,"participant":\#(who("u-carol", "Carol")),"track_sid":"TR_c","duration_ms":900,"cause":"dtx","written_ms":12900}"#,
        #"{"type":"track_unmuted","time":"2026-11-29T14:00:13.000Z","offset_ms":13000,"participant":\#(who("u-bob", "Bob")),"track":{"sid":"TR_b","kind":"audio","source":"microphone","muted":false,"mime":"audio/opus"}}"#,
        #"{"type":"speaking_turn","time":"2026-11-29T14:00:13.500Z","offset_ms":13500,"participant":\#(who("u-bob", "Bob")),"start_ms":13500,"end_ms":15000,"written_ms":15400}"#,
        #"{"type":"reaction","time":"2026-11-29T14:00:14.000Z","offset_ms":14000,"participant":\#(who("u-alice", "Alice")),"emoji":"👍"}"#,
        #"{"type":"participant_left","time":"2026-11-29T14:00:16.000Z","offset_ms":16000,"participant":\#(who("u-bob", "Bob")),"reason":"clientInitiated"}"#,
        #"{"type":"hologram_beamed","time":"2026-11-29T14:00:17.000Z","offset_ms":17000,"participant":\#(who("u-alice", "Alice")),"colour":"teal"}"#,
        #"{"type":"session_ended","time":"2026-11-29T14:00:20.000Z","offset_ms":20000,"reason":"left","end_reason":"signal","exit_code":0,"detail":"stopped by SIGINT","duration_ms":20000}"#,
    ].joined(separator: "\n") + "\n"

    static var events: [TranscriptLine] { TranscriptLine.read(meeting).lines }

    /// The meeting wire (samples/scenarios/meeting-wire.scenario) as the bot writes it: a chat
    /// with an image, Bob's 👍 on it, Bob's poll (its chat line, then its own line), Alice's
    /// vote, a rename, a deafen, and the server ending the meeting.
    static let wire = [
        #"{"type":"session_started","time":"2026-12-06T22:57:56.579Z","offset_ms":1,"room":"wire","server":"http://127.0.0.1:1","bot_identity":"bot-1"}"#,
        #"{"type":"participant_joined","offset_ms":69,"participant":\#(who("alice", "Alice Doe")),"tracks":[]}"#,
        #"{"type":"participant_joined","offset_ms":70,"participant":\#(who("bob", "Bob Chen")),"tracks":[]}"#,
        #"{"type":"chat","offset_ms":4026,"participant":\#(who("alice", "Alice Doe")),"message":"Grüße — the slide 👩‍👩‍👧","id":"m-slide","sent_ms":1,"attachments":[{"bytes":300000,"kind":"image","mime":"image/png","path":"attachments/m-slide-0.png","saved":true}]}"#,
        #"{"type":"reaction","offset_ms":4026,"participant":\#(who("bob", "Bob Chen")),"message_id":"m-slide","emoji":"👍","voter_identity":"bob"}"#,
        #"{"type":"chat","offset_ms":4027,"participant":\#(who("bob", "Bob Chen")),"message":"","id":"m-poll","sent_ms":2,"attachments":[],"poll":{"poll_id":"p1","question":"Lunch at noon?","options":[{"id":"o1","text":"Pizza"},{"id":"o2","text":"Soup"},{"id":"o3","text":"Ramen 🍜"}]}}"#,
        #"{"type":"poll","offset_ms":4027,"participant":\#(who("bob", "Bob Chen")),"message_id":"m-poll","poll_id":"p1","question":"Lunch at noon?","options":[{"id":"o1","text":"Pizza"},{"id":"o2","text":"Soup"},{"id":"o3","text":"Ramen 🍜"}]}"#,
        #"{"type":"poll_vote","offset_ms":4063,"participant":\#(who("alice", "Alice Doe")),"message_id":"m-poll","option_id":"o3","option":"Ramen 🍜","voter_identity":"alice"}"#,
        #"{"type":"profile_changed","offset_ms":4563,"participant":\#(who("bob", "Robert Chen")),"sender":"bob","avatar_url":"","applied":true}"#,
        #"{"type":"chat","offset_ms":5063,"participant":\#(who("bob", "Bob Chen")),"message":"renamed","id":"m-renamed","sent_ms":3,"attachments":[]}"#,
        #"{"type":"deafen_state","offset_ms":5563,"participant":\#(who("alice", "Alice Doe")),"sender":"alice","deafened":true}"#,
        #"{"type":"moderation","offset_ms":8063,"event":"room_ended","actor":"","target":"","sender":"","message":"The host ended the meeting for everyone","deleted_identity":""}"#,
        #"{"type":"session_ended","offset_ms":8103,"reason":"left","end_reason":"room_ended","exit_code":10,"detail":"the server ended the meeting","duration_ms":8103}"#,
    ].joined(separator: "\n") + "\n"

    /// One line's event.
    static func event(_ line: String) -> TranscriptEvent? { TranscriptLine.read(line).lines.first?.event }

    static let summaryJSON = """
        {"room":"standup","server":"http://127.0.0.1:1","started":"2026-11-29T14:00:00.000Z","ended":"2026-11-29T14:00:20.000Z",
         "duration_ms":20000,"end_reason":"signal","exit_code":0,"message":"stopped by SIGINT","reconnects":1,"chat_messages":1,
         "participants":[{"identity":"u-alice","name":"Alice","file":"Alice.opus","start_offset_ms":0,"duration_ms":20000,"speaking_ms":3000,
           "packets":900,"lost":2,"late":0,"duplicates":0,"fec_recovered":1,"concealed_ms":40,"gaps_ms":{"reconnect":3000,"dtx":0}}],
         "network":{"srtp_profile":"AES_CM_128_HMAC_SHA1_80","selected_pair":"host 127.0.0.1:1 <-> host 127.0.0.1:2",
           "tracks":[{"ssrc":1234,"track_sid":"TR_a","participant":"u-alice","packets":900,"lost":2,"jitter_ms":3.5,"nacked":2,"recovered":1}]}}
        """

    static func files() -> [ReportFile] {
        [ReportFile(name: "room.opus", bytes: 120_000, valid: true, durationMs: 20_000, identity: nil, startOffsetMs: 0,
                    levels: AudioLevels(stepMs: 200, values: (0..<100).map { UInt8($0 % 64) })),
         ReportFile(name: "Alice.opus", bytes: 60_000, valid: true, durationMs: 19_900, identity: "u-alice", startOffsetMs: 100, levels: nil),
         ReportFile(name: "Bob.opus", bytes: 50_000, valid: false, problems: ["page 7: bad CRC"], durationMs: 15_000, identity: "u-bob", startOffsetMs: 100)]
    }
}

@Suite struct ReportTimelineTests {
    let t = ReportTimeline(events: ReportFixture.events, files: ReportFixture.files(), durationMs: 20_000)

    @Test func lanesAreTheMixThenPeopleInOrderOfArrivalWithoutTheBot() {
        #expect(t.lanes.map(\.identity) == ["", "u-alice", "u-bob", "u-carol"])
        #expect(t.lanes.map(\.name) == ["room mix", "Alice", "Bob", "Carol"])
        #expect(t.lanes.map(\.file) == ["room.opus", "Alice.opus", "Bob.opus", nil])
    }

    @Test func presenceRunsFromJoinToLeaveOrTheEnd() {
        #expect(t.spans(.presence, of: "u-alice") == [.init(kind: .presence, startMs: 100, endMs: 20_000)])
        #expect(t.spans(.presence, of: "u-bob") == [.init(kind: .presence, startMs: 100, endMs: 16_000)])
        #expect(t.spans(.presence, of: "u-carol") == [.init(kind: .presence, startMs: 6000, endMs: 20_000)])
    }

    @Test func turnsAndMutesComeFromTheirEvents() {
        #expect(t.spans(.turn, of: "u-alice") == [.init(kind: .turn, startMs: 1000, endMs: 4000)])
        #expect(t.spans(.turn, of: "u-bob") == [.init(kind: .turn, startMs: 13_500, endMs: 15_000)])
        #expect(t.spans(.mute, of: "u-bob") == [.init(kind: .mute, startMs: 5000, endMs: 13_000)])
    }

    @Test func gapsByCauseAndDTXIsNotAGap() {
        #expect(t.spans(.gapReconnect, of: "u-alice") == [.init(kind: .gapReconnect, startMs: 8000, endMs: 11_000)])
        #expect(t.lanes[3].spans.allSatisfy { $0.kind == .presence }, "Carol's DTX is silence, not a gap")
        #expect(t.spans(.outage, of: "") == [.init(kind: .outage, startMs: 8000, endMs: 11_000)])
    }

    @Test func markersSitOnTheSendersLaneWithTheirText() {
        #expect(t.lanes[3].markers == [.init(kind: .chat, offsetMs: 7000, text: "hello <b>all</b> [2 attachments]")])
        #expect(t.lanes[1].markers == [.init(kind: .reaction, offsetMs: 14_000, text: "👍")])
    }

    @Test func aWriteErrorGapOfTheMixGoesOnTheRoomLane() {
        let lines = #"{"type":"gap","offset_ms":500,"participant":null,"track_sid":"","duration_ms":4000,"cause":"write_error","written_ms":4600}"#
        let t = ReportTimeline(events: TranscriptLine.read(lines).lines, files: [], durationMs: 10_000)
        #expect(t.lanes.count == 1)
        #expect(t.spans(.gapWriteError, of: "") == [.init(kind: .gapWriteError, startMs: 500, endMs: 4500)])
    }

    @Test func oldTranscriptsWithBareIdentitiesAndACutOffLine() {
        let text = """
            {"type":"participant_joined","offset_ms":0,"participant":{"identity":"p1","name":"P One"}}
            {"type":"speaking_turn","offset_ms":200,"participant":"p1","name":"P One","start_ms":200,"end_ms":900}
            {"type":"gap","offset_ms":1000,"participant":"p1","track_sid":"T","duration_ms":500,"cause":"loss"}
            {"type":"chat","offset_ms":1200,"partic
            """
        let (events, bad) = TranscriptLine.read(text)
        #expect(bad == 1)
        let t = ReportTimeline(events: events, files: [], durationMs: nil)
        #expect(t.durationMs == 1500)
        #expect(t.spans(.turn, of: "p1") == [.init(kind: .turn, startMs: 200, endMs: 900)])
        #expect(t.spans(.gapLoss, of: "p1") == [.init(kind: .gapLoss, startMs: 1000, endMs: 1500)])
    }

    @Test func pollsVotesAndReactionsSayWhatTheyAreAbout() {
        let t = ReportTimeline(events: TranscriptLine.read(ReportFixture.wire).lines, files: [], durationMs: 8103)
        #expect(t.lanes.map(\.identity) == ["", "alice", "bob"])
        #expect(t.lanes[1].markers == [
            .init(kind: .chat, offsetMs: 4026, text: "Grüße — the slide 👩‍👩‍👧 [1 attachment]"),
            .init(kind: .poll, offsetMs: 4063, text: "vote: Ramen 🍜 (poll Lunch at noon?)"),
            .init(kind: .moderation, offsetMs: 5563, text: "deafened"),
        ])
        #expect(t.lanes[2].markers == [
            .init(kind: .reaction, offsetMs: 4026, text: "👍 to Alice Doe: “Grüße — the slide 👩‍👩‍👧”"),
            .init(kind: .chat, offsetMs: 4027, text: ""),
            .init(kind: .poll, offsetMs: 4027, text: "poll: Lunch at noon? (Pizza / Soup / Ramen 🍜)"),
            .init(kind: .event, offsetMs: 4563, text: "profile changed"),
            .init(kind: .chat, offsetMs: 5063, text: "renamed"),
        ])
        #expect(t.lanes[0].markers == [.init(kind: .moderation, offsetMs: 8063, text: "room_ended by  → ")])
    }

    @Test func eachKindOfEventIsAMarkerASpanOrNothing() {
        let chat = ReportChat(events: TranscriptLine.read(ReportFixture.wire).lines)
        func marker(_ line: String) -> ReportTimeline.Marker? {
            guard let e = ReportFixture.event(line), let m = ReportTimeline.marker(for: e, chat: chat) else { return nil }
            return .init(kind: m.kind, offsetMs: 0, text: m.text)
        }
        let p = #""participant":{"identity":"carol","name":"Carol"}"#
        // A reaction or vote whose message the recording does not have says what it can.
        #expect(marker(#"{"type":"reaction",\#(p),"message_id":"elsewhere","emoji":"🎉"}"#) == .init(kind: .reaction, offsetMs: 0, text: "🎉"))
        #expect(marker(#"{"type":"reaction",\#(p),"message_id":"m-poll","emoji":"🎉"}"#) == .init(kind: .reaction, offsetMs: 0, text: "🎉 to Bob Chen: poll Lunch at noon?"))
        #expect(marker(#"{"type":"poll_vote",\#(p),"message_id":"elsewhere","option_id":"o9","option":""}"#) == .init(kind: .poll, offsetMs: 0, text: "vote: o9"))
        #expect(marker(#"{"type":"poll_vote",\#(p),"message_id":"m-poll","option_id":"o2","option":""}"#) == .init(kind: .poll, offsetMs: 0, text: "vote: Soup (poll Lunch at noon?)"))
        #expect(marker(#"{"type":"transcription",\#(p),"sender":"x","segments":[{"text":"hello","final":true},{"text":"there"}]}"#) == .init(kind: .event, offsetMs: 0, text: "hello there"))
        #expect(marker(#"{"type":"participant_updated",\#(p)}"#) == .init(kind: .event, offsetMs: 0, text: "details changed"))
        #expect(marker(#"{"type":"deafen_state",\#(p),"deafened":false}"#) == .init(kind: .moderation, offsetMs: 0, text: "undeafened"))
        #expect(marker(#"{"type":"dtmf",\#(p),"code":5,"digit":"5"}"#) == .init(kind: .event, offsetMs: 0, text: "DTMF 5"))
        // Spans, and what the timeline does not draw.
        for line in [
            #"{"type":"speaking_turn",\#(p),"start_ms":1,"end_ms":2}"#, #"{"type":"gap",\#(p),"duration_ms":5,"cause":"loss"}"#,
            #"{"type":"participant_joined",\#(p)}"#, #"{"type":"track_muted",\#(p),"track":{"kind":"audio"}}"#,
            #"{"type":"data",\#(p),"topic":"chat","bytes":3}"#, #"{"type":"connection_quality",\#(p),"quality":"good"}"#,
            #"{"type":"chat_dropped",\#(p),"id":"x"}"#, #"{"type":"rpc_request",\#(p),"method":"m"}"#,
            #"{"type":"file_finished","participant":null,"output":"room"}"#, #"{"type":"warning","message":"w"}"#,
            #"{"type":"reconnecting","mode":"resume"}"#, #"{"type":"session_ended","reason":"left"}"#,
        ] {
            #expect(ReportFixture.event(line) != nil, "\(line)")
            #expect(marker(line) == nil, "\(line)")
        }
    }
}

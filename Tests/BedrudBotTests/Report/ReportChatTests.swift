import Testing
@testable import BedrudBot

/// The report's chat: messages with their polls (who voted for what) and reactions.
@Suite struct ReportChatTests {
    static func chat(_ extra: [String] = []) -> ReportChat {
        ReportChat(events: TranscriptLine.read(ReportFixture.wire + extra.joined(separator: "\n")).lines)
    }

    static let alice = ReportChat.Person(identity: "alice", name: "Alice Doe")
    static let bob = ReportChat.Person(identity: "bob", name: "Bob Chen")
    static let carol = ReportChat.Person(identity: "carol", name: "Carol")
    static func by(_ id: String, _ name: String) -> String { ReportFixture.who(id, name) }

    @Test func theMeetingWiresPollVoteAndReaction() throws {
        let c = Self.chat()
        #expect(c.entries.count == 3, "the poll's own line adds nothing to its chat message")
        let slide = try #require(c.message(id: "m-slide"))
        #expect(slide.from == Self.alice && slide.text == "Grüße — the slide 👩‍👩‍👧" && slide.attachments.count == 1)
        #expect(slide.reactions == [.init(emoji: "👍", by: Self.bob)])
        let poll = try #require(c.message(id: "m-poll")?.poll)
        #expect(poll.question == "Lunch at noon?")
        #expect(poll.options == [.init(id: "o1", text: "Pizza"), .init(id: "o2", text: "Soup"), .init(id: "o3", text: "Ramen 🍜", voters: [Self.alice])])
        #expect(c.entries.map(\.offsetMs) == [4026, 4027, 5063])
    }

    @Test func aVotersLastVoteCountsAndReactionsToggle() throws {
        let c = Self.chat([
            #"{"type":"poll_vote","offset_ms":6000,"participant":\#(Self.by("carol", "Carol")),"message_id":"m-poll","option_id":"o1","option":"Pizza"}"#,
            #"{"type":"poll_vote","offset_ms":6100,"participant":\#(Self.by("alice", "Alice Doe")),"message_id":"m-poll","option_id":"o1","option":"Pizza"}"#,
            #"{"type":"reaction","offset_ms":6200,"participant":\#(Self.by("carol", "Carol")),"message_id":"m-slide","emoji":"🎉"}"#,
            #"{"type":"reaction","offset_ms":6300,"participant":\#(Self.by("bob", "Bob Chen")),"message_id":"m-slide","emoji":"👍"}"#,
        ])
        let poll = try #require(c.message(id: "m-poll")?.poll)
        #expect(poll.options.map(\.voters) == [[Self.carol, Self.alice], [], []], "Alice changed her vote from Ramen to Pizza")
        #expect(c.message(id: "m-slide")?.reactions == [.init(emoji: "🎉", by: Self.carol)], "Bob's second 👍 took the first back")
    }

    @Test func votesAndReactionsForMessagesBeforeTheRecordingStandAlone() {
        let c = ReportChat(events: TranscriptLine.read([
            #"{"type":"reaction","offset_ms":10,"participant":\#(Self.by("carol", "Carol")),"message_id":"old","emoji":"🎉"}"#,
            #"{"type":"poll_vote","offset_ms":20,"participant":\#(Self.by("bob", "Bob Chen")),"message_id":"old-poll","option_id":"o2","option":""}"#,
            #"{"type":"poll_vote","offset_ms":30,"participant":\#(Self.by("bob", "Bob Chen")),"message_id":"old-poll","option_id":"o2","option":"Soup"}"#,
        ].joined(separator: "\n")).lines)
        #expect(c.entries == [.reaction(offsetMs: 10, .init(emoji: "🎉", by: Self.carol)), .vote(offsetMs: 20, by: Self.bob, option: "o2"),
                              .vote(offsetMs: 30, by: Self.bob, option: "Soup")])
    }

    @Test func aPollLineWithoutItsChatLineIsAMessageOfItsOwn() throws {
        let c = ReportChat(events: TranscriptLine.read(
            #"{"type":"poll","offset_ms":50,"participant":\#(Self.by("bob", "Bob Chen")),"message_id":"m9","poll_id":"p","question":"Tea?","options":[{"id":"a","text":"Yes"},{"id":"b","text":"No"}]}"#
        ).lines)
        let m = try #require(c.message(id: "m9"))
        #expect(m.from == Self.bob && m.text.isEmpty && m.offsetMs == 50)
        #expect(m.poll == .init(question: "Tea?", options: [.init(id: "a", text: "Yes"), .init(id: "b", text: "No")]))
    }
}

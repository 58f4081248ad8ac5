import Testing
@testable import BedrudProtocol

/// Fixtures follow the wire of Bedrud web v0.12 (chatDataChannel.ts and its tests): field
/// names, the 60,000-byte packet budget, sections message|attachments|poll.
@Suite struct ChatAssemblerTests {
    private func wire(_ s: String, topic: String? = "chat") -> BedrudChatWire? { BedrudChatWire(topic: topic, payload: Array(s.utf8)) }

    private func feed(_ a: inout ChatAssembler, _ payloads: [[UInt8]], from sender: String = "ada", at t: Int64 = 0) -> [ChatAssembler.Output] {
        payloads.flatMap { p -> [ChatAssembler.Output] in
            guard let w = BedrudChatWire(topic: "chat", payload: p) else { return [] }
            return a.handle(w, from: sender, at: t)
        }
    }

    private func chat(_ message: String, attachments: [BedrudChatPayload.Attachment] = [], poll: BedrudChatPoll? = nil, id: String = "msg-1") -> BedrudChatPayload {
        BedrudChatPayload(id: id, timestampMs: 1_700_000_000_000, senderName: "Ada", senderIdentity: "ada", message: message, attachments: attachments, poll: poll)
    }

    private func chats(_ out: [ChatAssembler.Output]) -> [BedrudChatPayload] {
        out.compactMap { if case .chat(let c, _) = $0 { c } else { nil } }
    }

    @Test func smallMessageIsOnePacketAndPassesStraightThrough() throws {
        let packets = try ChatChunker.packets(for: chat("hello"))
        #expect(packets.count == 1)
        var a = ChatAssembler()
        #expect(chats(feed(&a, packets)) == [chat("hello")])
    }

    @Test func longTextIsSplitIntoPacketsWithinTheBudgetAndComesBackWhole() throws {
        let text = String(repeating: "abcdefghijklmnopqrstuvwxyz", count: 4000)
        let packets = try ChatChunker.packets(for: chat(text))
        #expect(packets.count == 3)  // meta + 2 parts (104,000 letters)
        #expect(packets.allSatisfy { $0.count <= ChatChunker.safeBytes })
        guard case .chunkMeta(let meta) = try #require(BedrudChatWire(topic: "chat", payload: packets[0])) else { Issue.record("no meta"); return }
        #expect(meta == BedrudChatChunkMeta(id: "msg-1", timestampMs: 1_700_000_000_000, senderName: "Ada", senderIdentity: "ada",
                                            messageChunks: 2, attachmentChunks: 0, pollChunks: 0))
        var a = ChatAssembler()
        #expect(chats(feed(&a, packets)) == [chat(text)])
        #expect(a.pendingCount == 0 && a.heldUnits == 0 && a.stats.reassembled == 1)
    }

    /// Multibyte text (2-, 3- and 4-byte UTF-8, ZWJ sequences, combining marks) across
    /// every boundary, chunks delivered in reverse order.
    @Test func multibyteTextAcrossChunksComesOutWholeInAnyOrder() throws {
        let text = String(repeating: "Grüße € 😀 👩‍👩‍👧 é ", count: 9000)
        let packets = try ChatChunker.packets(for: chat(text))
        #expect(packets.count > 3)
        #expect(packets.allSatisfy { $0.count <= ChatChunker.safeBytes })
        var a = ChatAssembler()
        let out = feed(&a, [packets[0]] + packets.dropFirst().reversed())
        #expect(chats(out).map(\.message) == [text])
    }

    /// Emoji only: the packet size is not monotonic in the cut (a lone high surrogate costs 6
    /// bytes, the pair 4), so the web client's binary search stops short of the longest part
    /// that fits. 59,995 bytes is what its buildChatWirePackets gives here (chatDataChannel.ts
    /// v0.12 run with tsc + node on 2026-12-02; the longest fitting part would be 59,999).
    @Test func cutsWhereTheWebClientCuts() throws {
        let packets = try ChatChunker.packets(for: BedrudChatPayload(id: "msg-3", timestampMs: 1, senderName: "U", senderIdentity: "u",
                                                                     message: String(repeating: "😀", count: 40_000)))
        #expect(packets.count == 4 && packets[1].count == 59_995)
    }

    /// A sender that cuts inside a surrogate pair (JSON.stringify writes each half as an
    /// escape): the halves are joined before they become text.
    @Test func surrogatePairCutBetweenTwoChunksIsJoined() {
        let meta = #"{"type":"chat_chunk_meta","id":"s1","timestamp":5,"senderName":"Ada","senderIdentity":"ada","messageChunks":2,"attachmentChunks":0,"pollChunks":0}"#
        let c0 = #"{"type":"chat_chunk","id":"s1","kind":"message","index":0,"part":"smile \ud83d"}"#
        let c1 = #"{"type":"chat_chunk","id":"s1","kind":"message","index":1,"part":"\ude00 ok"}"#
        var a = ChatAssembler()
        let out = feed(&a, [meta, c1, c0].map { Array($0.utf8) })
        #expect(chats(out).map(\.message) == ["smile 😀 ok"])
    }

    @Test func inlineImageIsChunkedInTheAttachmentsSection() throws {
        let url = "data:image/png;base64," + String(repeating: "A", count: ChatChunker.safeBytes)
        let image = BedrudChatPayload.Attachment(kind: "image", url: url, mime: "image/png", width: 100, height: 100, size: 50_000)
        let packets = try ChatChunker.packets(for: chat("", attachments: [image]))
        guard case .chunkMeta(let meta) = try #require(BedrudChatWire(topic: "chat", payload: packets[0])) else { Issue.record("no meta"); return }
        #expect(meta.messageChunks == 0 && meta.attachmentChunks == 2 && meta.pollChunks == 0)
        var a = ChatAssembler()
        #expect(chats(feed(&a, packets)) == [chat("", attachments: [image])])
    }

    @Test func textAttachmentsAndPollTogether() throws {
        let poll = BedrudChatPoll(id: "p1", question: "Lunch?", options: [.init(id: "a", text: "Pizza 🍕"), .init(id: "b", text: "Soup")])
        let file = BedrudChatPayload.Attachment(kind: "file", url: "https://x.example/f", mime: "application/pdf", size: 9, name: "notes.pdf")
        let image = BedrudChatPayload.Attachment(kind: "image", url: "data:image/jpeg;base64," + String(repeating: "B", count: 80_000),
                                                 mime: "image/jpeg", width: 200, height: 150, size: 60_000)
        let original = chat(String(repeating: "y", count: ChatChunker.safeBytes), attachments: [image, file], poll: poll)
        let packets = try ChatChunker.packets(for: original)
        var a = ChatAssembler()
        #expect(chats(feed(&a, packets)) == [original])
    }

    @Test func repeatsAreDroppedById() throws {
        let single = chat("hi", id: "r1").payload(listingEmptyAttachments: true)
        let long = try ChatChunker.packets(for: chat(String(repeating: "z", count: 70_000), id: "r2"))
        var a = ChatAssembler()
        let out = feed(&a, [single, single] + long + long)
        #expect(chats(out).map(\.id) == ["r1", "r2"])
        #expect(a.stats.duplicateChats == 2 && a.pendingCount == 0)
    }

    @Test func chunksWithoutMetaFromAnotherSenderOrOutOfRangeAreCountedAndIgnored() throws {
        let packets = try ChatChunker.packets(for: chat(String(repeating: "q", count: 70_000), id: "o1"))
        var a = ChatAssembler()
        _ = feed(&a, Array(packets.dropFirst()))  // no meta yet
        #expect(a.stats.orphanChunks == 2)
        _ = feed(&a, [packets[0]])
        _ = feed(&a, [packets[1]], from: "mallory")  // not the meta's sender
        #expect(a.stats.orphanChunks == 3)
        let bad = #"{"type":"chat_chunk","id":"o1","kind":"message","index":7,"part":"x"}"#
        _ = feed(&a, [Array(bad.utf8), packets[1], packets[1]])
        #expect(a.stats.ignoredChunks == 2)
        #expect(chats(feed(&a, [packets[2]])).map(\.message.count) == [70_000])
    }

    @Test func aMetaWhoseChunksNeverComeTimesOutAndIsReported() throws {
        let meta = #"{"type":"chat_chunk_meta","id":"t1","timestamp":1,"senderName":"A","senderIdentity":"ada","messageChunks":1000,"attachmentChunks":0,"pollChunks":0}"#
        let small = #"{"type":"chat_chunk_meta","id":"t2","timestamp":1,"senderName":"A","senderIdentity":"ada","messageChunks":3,"attachmentChunks":0,"pollChunks":0}"#
        var a = ChatAssembler()
        let first = feed(&a, [Array(meta.utf8)], at: 0)
        #expect(first == [.dropped(.init(id: "t1", sender: "ada", reason: .tooManyChunks, receivedChunks: 0, expectedChunks: 1000))])
        _ = feed(&a, [Array(small.utf8)], at: 1000)
        #expect(a.expire(at: 120_999).isEmpty)
        #expect(a.expire(at: 121_000) == [.dropped(.init(id: "t2", sender: "ada", reason: .timedOut, receivedChunks: 0, expectedChunks: 3))])
        #expect(a.pendingCount == 0 && a.stats.dropped == 2)
    }

    @Test func sizeLimitsDropTheMessageAndFreeItsMemory() {
        var limits = ChatAssembler.Limits()
        limits.maxMessageUnits = 100
        limits.maxInFlightUnits = 150
        var a = ChatAssembler(limits: limits)
        func meta(_ id: String) -> [UInt8] {
            Array(#"{"type":"chat_chunk_meta","id":"\#(id)","timestamp":1,"senderName":"A","senderIdentity":"ada","messageChunks":3,"attachmentChunks":0,"pollChunks":0}"#.utf8)
        }
        func chunk(_ id: String, _ i: Int, _ n: Int) -> [UInt8] {
            Array(#"{"type":"chat_chunk","id":"\#(id)","kind":"message","index":\#(i),"part":"\#(String(repeating: "x", count: n))"}"#.utf8)
        }
        #expect(feed(&a, [meta("big"), chunk("big", 0, 60), chunk("big", 1, 60)])
                == [.dropped(.init(id: "big", sender: "ada", reason: .tooLarge, receivedChunks: 1, expectedChunks: 3))])
        #expect(a.heldUnits == 0)
        _ = feed(&a, [meta("m1"), chunk("m1", 0, 80), meta("m2"), chunk("m2", 0, 60)])
        #expect(a.heldUnits == 140)
        #expect(feed(&a, [chunk("m2", 1, 20)]) == [.dropped(.init(id: "m2", sender: "ada", reason: .inFlightFull, receivedChunks: 1, expectedChunks: 3))])
        #expect(a.heldUnits == 80 && a.pendingCount == 1)
    }

    @Test func aFloodOfMetasEvictsTheStalest() {
        var limits = ChatAssembler.Limits()
        limits.maxPendingMessages = 2
        var a = ChatAssembler(limits: limits)
        func meta(_ id: String) -> [UInt8] {
            Array(#"{"type":"chat_chunk_meta","id":"\#(id)","timestamp":1,"senderName":"A","senderIdentity":"ada","messageChunks":2,"attachmentChunks":0,"pollChunks":0}"#.utf8)
        }
        _ = feed(&a, [meta("a")], at: 1)
        _ = feed(&a, [meta("b")], at: 2)
        #expect(feed(&a, [meta("c")], at: 3) == [.dropped(.init(id: "a", sender: "ada", reason: .evicted, receivedChunks: 0, expectedChunks: 2))])
        #expect(a.pendingCount == 2)
    }

    @Test func finishReportsWhatIsStillInFlight() {
        var a = ChatAssembler()
        let meta = #"{"type":"chat_chunk_meta","id":"f1","timestamp":1,"senderName":"A","senderIdentity":"ada","messageChunks":2,"attachmentChunks":0,"pollChunks":0}"#
        let c0 = #"{"type":"chat_chunk","id":"f1","kind":"message","index":0,"part":"half"}"#
        _ = feed(&a, [Array(meta.utf8), Array(c0.utf8)])
        #expect(a.finish() == [.dropped(.init(id: "f1", sender: "ada", reason: .incomplete, receivedChunks: 1, expectedChunks: 2))])
    }

    @Test func badAttachmentsJSONLosesTheMessageAsTheWebClientDoes() {
        var a = ChatAssembler()
        let meta = #"{"type":"chat_chunk_meta","id":"j1","timestamp":1,"senderName":"A","senderIdentity":"ada","messageChunks":0,"attachmentChunks":1,"pollChunks":0}"#
        let c0 = #"{"type":"chat_chunk","id":"j1","kind":"attachments","index":0,"part":"[{\"url\":"}"#
        #expect(feed(&a, [Array(meta.utf8), Array(c0.utf8)]) == [.dropped(.init(id: "j1", sender: "ada", reason: .undecodable, receivedChunks: 1, expectedChunks: 1))])
    }

    /// Fed byte by byte: every prefix of a packet is rejected whole (never a crash, never a
    /// half-read packet), and only the whole packet counts.
    @Test func truncatedPacketsAreNeverDecoded() throws {
        let packets = try ChatChunker.packets(for: chat(String(repeating: "é😀", count: 12_000)))
        for p in packets.prefix(2) {
            for cut in stride(from: 0, to: p.count, by: max(1, p.count / 200)) {
                #expect(BedrudChatWire(topic: "chat", payload: Array(p[..<cut])) == nil)
            }
        }
    }
}

@Suite struct BedrudChatWireTests {
    private func wire(_ s: String, topic: String? = "chat") -> BedrudChatWire? { BedrudChatWire(topic: topic, payload: Array(s.utf8)) }

    @Test func reactionsAndVotes() {
        #expect(wire(#"{"type":"reaction","messageId":"m","emoji":"👍","voterIdentity":"bob"}"#)
                == .reaction(BedrudReaction(messageId: "m", emoji: "👍", voterIdentity: "bob")))
        #expect(wire(#"{"type":"poll_vote","messageId":"m","optionId":"o2","voterIdentity":"bob"}"#)
                == .pollVote(BedrudPollVote(messageId: "m", optionId: "o2", voterIdentity: "bob")))
        // The web client requires every field, and a chat topic for these types.
        #expect(wire(#"{"type":"reaction","messageId":"m","emoji":"","voterIdentity":"bob"}"#) == nil)
        #expect(wire(#"{"type":"reaction","messageId":"m","emoji":"👍","voterIdentity":"bob"}"#, topic: "other") == nil)
        #expect(wire(#"{"type":"reaction","messageId":"m","emoji":"👍","voterIdentity":"bob"}"#, topic: "lk.chat") != nil)
    }

    @Test func chatTopicsFollowChatTopicTs() {
        #expect(BedrudChatWire.isChatTopic("lk-chat-topic", type: nil))
        #expect(BedrudChatWire.isChatTopic(nil, type: "chat_chunk"))
        #expect(!BedrudChatWire.isChatTopic("presence", type: "reaction"))
    }

    @Test func pollOnAChatFollowsNormalizeChatPoll() throws {
        let ok = #"{"type":"chat","id":"c","message":"","poll":{"id":"p","question":"Q?","options":[{"id":"a","text":"A"},{"id":"b","text":"B"},{"id":3}],"votes":{}}}"#
        guard case .chat(let c) = try #require(wire(ok)) else { Issue.record("not chat"); return }
        #expect(c.poll == BedrudChatPoll(id: "p", question: "Q?", options: [.init(id: "a", text: "A"), .init(id: "b", text: "B")]))
        let one = #"{"type":"chat","id":"c","message":"","poll":{"id":"p","question":"Q?","options":[{"id":"a","text":"A"}]}}"#
        guard case .chat(let c1) = try #require(wire(one)) else { Issue.record("not chat"); return }
        #expect(c1.poll == nil)
    }

    @Test func fileAttachmentsKeepTheirName() throws {
        let s = #"{"type":"chat","id":"c","message":"","attachments":[{"kind":"file","url":"https://h/x","mime":"text/plain","name":"  a.txt ","size":3}]}"#
        guard case .chat(let c) = try #require(wire(s)) else { Issue.record("not chat"); return }
        #expect(c.attachments == [.init(kind: "file", url: "https://h/x", mime: "text/plain", size: 3, name: "a.txt")])
    }

    @Test func metaRulesFollowTheWebClient() {
        #expect(wire(#"{"type":"chat_chunk_meta","id":"x","messageChunks":0,"attachmentChunks":0,"pollChunks":0}"#) == nil)
        #expect(wire(#"{"type":"chat_chunk_meta","id":"x","messageChunks":-1,"attachmentChunks":2,"pollChunks":0}"#) == nil)
        #expect(wire(#"{"type":"chat_chunk_meta","id":"x","messageChunks":1.5,"attachmentChunks":0,"pollChunks":0}"#) == nil)
        #expect(wire(#"{"type":"chat_chunk","id":"x","kind":"video","index":0,"part":"p"}"#) == nil)
    }

    @Test func presence() {
        func p(_ s: String) -> BedrudPresence? { BedrudPresence(topic: "presence", payload: Array(s.utf8)) }
        #expect(p(#"{"type":"profile_changed","identity":"bob","name":"  Robert ","avatarUrl":""}"#)
                == .profileChanged(identity: "bob", name: "Robert", avatarURL: ""))
        #expect(p(#"{"type":"profile_changed","identity":"bob","name":"   "}"#) == nil)
        #expect(p(#"{"type":"deafen_state","identity":"bob","deafened":true}"#) == .deafenState(identity: "bob", deafened: true))
        #expect(p(#"{"type":"deafen_state","identity":"bob","deafened":"yes"}"#) == .deafenState(identity: "bob", deafened: false))
        #expect(BedrudPresence(topic: "chat", payload: Array(#"{"type":"deafen_state","identity":"bob"}"#.utf8)) == nil)
    }

    @Test func roomEndNoticesKeepTheServersText() throws {
        let s = #"{"type":"system","event":"room_deleted","message":"The room was deleted by its owner","deletedIdentity":"ann"}"#
        let m = try #require(BedrudSystemMessage(topic: "system", payload: Array(s.utf8)))
        #expect(m.event == .roomDeleted && m.event.endsRoom)
        #expect(m.message == "The room was deleted by its owner" && m.deletedIdentity == "ann")
        let stage = try #require(BedrudSystemMessage(topic: "system", payload: Array(#"{"type":"system","event":"stage","actor":"ann","message":"Ann shares a whiteboard"}"#.utf8)))
        #expect(stage.event == .stage && !stage.event.endsRoom && stage.message == "Ann shares a whiteboard")
    }
}

@Suite struct JSONValue16Tests {
    @Test func keepsLoneSurrogatesAndRejectsBadJSON() {
        #expect(JSONValue16(parsing: Array(#"{"a":"x\ud83d","b":[1,-2.5e3,true,null]}"#.utf8))?["a"]?.utf16 == [0x78, 0xD83D])
        for bad in ["", "{", #"{"a":}"#, #"{"a":"\x"}"#, "[1,]", "01", "{\"a\":\"\u{1}\"}", "[] []"] {
            #expect(JSONValue16(parsing: Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(JSONValue16(parsing: [0x22, 0xFF, 0x22]) == nil)  // not UTF-8
        #expect(JSONValue16(parsing: Array((String(repeating: "[", count: 100) + String(repeating: "]", count: 100)).utf8)) == nil)
    }
}

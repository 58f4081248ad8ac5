import Testing
@testable import BedrudProtocol

@Suite struct ICECandidateInitTests {
    @Test func parsesServerCandidatesWithNulls() throws {
        let text = #"{"candidate":"candidate:1 1 udp 2130706431 203.0.113.7 50123 typ host","sdpMid":"0","sdpMLineIndex":0,"usernameFragment":null}"#
        let c = try #require(ICECandidateInit(json: text))
        #expect(c.candidate.hasSuffix("typ host"))
        #expect(c.sdpMid == "0" && c.sdpMLineIndex == 0 && c.usernameFragment == nil)
    }

    @Test func toleratesMissingAndOddlyTypedOptionals() throws {
        let c = try #require(ICECandidateInit(json: #"{"candidate":"candidate:x","sdpMid":1,"sdpMLineIndex":"zero"}"#))
        #expect(c.sdpMid == "1" && c.sdpMLineIndex == nil)
        #expect(ICECandidateInit(json: #"{"candidate":""}"#)?.isEndOfCandidates == true)
    }

    @Test(arguments: ["", "null", "[]", "{}", #"{"candidate":5}"#, "{\"candidate\":", "\u{0}\u{1}"])
    func rejectsNonCandidates(text: String) {
        #expect(ICECandidateInit(json: text) == nil)
    }

    @Test func writesBrowserShapedJSON() throws {
        let c = ICECandidateInit(candidate: "candidate:1 \"q\"\n", sdpMid: "0", sdpMLineIndex: 0, usernameFragment: nil)
        #expect(c.json == #"{"candidate":"candidate:1 \"q\"\n","sdpMid":"0","sdpMLineIndex":0,"usernameFragment":null}"#)
        #expect(ICECandidateInit(json: c.json) == c)
    }
}

@Suite struct BedrudChatPayloadTests {
    private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test func webChatWithAttachments() throws {
        let json = #"{"type":"chat","id":"u1","timestamp":1767225700123,"senderName":"Ann","senderIdentity":"ann","message":"hi","attachments":[]}"#
        let chat = try #require(BedrudChatPayload(topic: "chat", payload: bytes(json)))
        #expect(chat == BedrudChatPayload(id: "u1", timestampMs: 1767225700123, senderName: "Ann", senderIdentity: "ann", message: "hi"))
    }

    @Test func chatRulesFollowTheMostLenientClient() {
        // type chat on another topic: chat (iOS ignores the topic).
        #expect(BedrudChatPayload(topic: "other", payload: bytes(#"{"type":"chat","message":"x"}"#))?.message == "x")
        // topic chat without type: chat (Android).
        #expect(BedrudChatPayload(topic: "chat", payload: bytes(#"{"message":"y"}"#))?.message == "y")
        // a different type is never chat, whatever the topic.
        #expect(BedrudChatPayload(topic: "chat", payload: bytes(#"{"type":"reaction","message":"z"}"#)) == nil)
        // no type, other topic: not chat.
        #expect(BedrudChatPayload(topic: nil, payload: bytes(#"{"message":"z"}"#)) == nil)
        // not JSON / not an object.
        #expect(BedrudChatPayload(topic: "chat", payload: bytes("hello")) == nil)
        #expect(BedrudChatPayload(topic: "chat", payload: bytes("[1,2]")) == nil)
        #expect(BedrudChatPayload(topic: "chat", payload: []) == nil)
    }

    @Test func chatFieldsTolerateWrongTypes() throws {
        let json = #"{"type":"chat","id":7,"timestamp":1767225700123.9,"senderName":null,"message":5,"attachments":[{"url":"https://x/a.png","w":"64","h":48.0},{"kind":"image"},"junk"]}"#
        let chat = try #require(BedrudChatPayload(topic: "chat", payload: bytes(json)))
        #expect(chat.id == "7" && chat.timestampMs == 1767225700123)
        #expect(chat.senderName == "" && chat.message == "")
        #expect(chat.attachments == [.init(kind: "image", url: "https://x/a.png", width: 64, height: 48)])
    }

    @Test func chatPayloadRoundTrips() throws {
        let chat = BedrudChatPayload(id: "id\"1", timestampMs: 5, senderName: "Bot ✓", senderIdentity: "bot",
                                     message: "line1\nline2", attachments: [.init(url: "https://x/y.png", mime: "image/png")])
        #expect(BedrudChatPayload(topic: "chat", payload: chat.payload) == chat)
    }

    @Test func systemMessages() {
        let kick = bytes(#"{"type":"system","event":"kick","actor":"owner","target":"guest-1"}"#)
        #expect(BedrudSystemMessage(topic: "system", payload: kick) == BedrudSystemMessage(event: .kick, actor: "owner", target: "guest-1"))
        #expect(BedrudSystemMessage(topic: "chat", payload: kick) == nil)
        let ask = BedrudSystemMessage(topic: "system", payload: bytes(#"{"event":"ask_unmute","target":"me","ts":12}"#))
        #expect(ask?.event == .askUnmute && ask?.timestampMs == 12 && ask?.actor == "")
        #expect(BedrudSystemMessage(topic: "system", payload: bytes(#"{"event":"wave"}"#))?.event == .other("wave"))
        #expect(BedrudSystemMessage(topic: "system", payload: bytes(#"{"type":"chat","event":"kick"}"#)) == nil)
        #expect(BedrudSystemMessage(topic: "system", payload: bytes(#"{"event":""}"#)) == nil)
        #expect(BedrudSystemMessage(topic: "system", payload: bytes("{")) == nil)
    }

    @Test func participantMetadata() {
        let m = BedrudParticipantMetadata(json: #"{"accesses":["user","moderator",3],"chatBlocked":true,"deafened":false}"#)
        #expect(m.accesses == ["user", "moderator"] && m.isModerator && m.chatBlocked && !m.deafened)
        #expect(BedrudParticipantMetadata(json: #"{"avatarUrl":"https://a/b.png"}"#).avatarURL == "https://a/b.png")
        #expect(BedrudParticipantMetadata(json: "not json") == BedrudParticipantMetadata())
        #expect(BedrudParticipantMetadata(json: "") == BedrudParticipantMetadata())
        #expect(BedrudParticipantMetadata(json: #"{"accesses":"user"}"#).accesses == [])
    }
}

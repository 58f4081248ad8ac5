import BedrudProtocol
import Testing
@testable import BedrudCore

/// Bedrud web v0.12's chat wire through RoomState: chunked chats, reactions, votes,
/// presence and room-end notices become events; the sender is always the server's.
@Suite struct RoomStateChatWireTests {
    private func connected() -> RoomTranscript {
        var t = RoomTranscript()
        t.joinRoom()
        return t
    }

    private func send(_ t: inout RoomTranscript, _ payload: [UInt8], from sid: String = "PA_alice", topic: String = "chat", seq: UInt32) -> [RoomEvent] {
        let bytes = LiveKit.DataPacket.with {
            $0.participantSid = sid
            $0.sequence = seq
            $0.value = .user(.with { $0.topic = topic; $0.payload = payload })
        }.protobufBytes()
        return t.feed(.dataReceived(bytes, reliable: true)).events.filter { if case .dataReceived = $0 { false } else { true } }
    }

    @Test func aChunkedChatBecomesOneChatEventFromTheServersSender() throws {
        var t = connected()
        let text = String(repeating: "Grüße 👋 ", count: 9000)
        let chat = BedrudChatPayload(id: "big-1", timestampMs: 7, senderName: "Alice A.", senderIdentity: "spoof", message: text)
        let packets = try ChatChunker.packets(for: chat)
        var events: [RoomEvent] = []
        for (i, p) in packets.enumerated() { events += send(&t, p, seq: UInt32(i + 1)) }
        #expect(events == [.chatReceived(MeetingChatMessage(id: "big-1", senderIdentity: "alice", senderName: "Alice A.", text: text, timestampMs: 7))])
        // The same message again (a web retry, new sequence numbers): nothing.
        var again: [RoomEvent] = []
        for (i, p) in packets.enumerated() { again += send(&t, p, seq: UInt32(100 + i)) }
        #expect(again.isEmpty)
        #expect(t.state.stats.chat.duplicateChats == 1 && t.state.stats.chat.reassembled == 1)
    }

    @Test func aStalledMetaIsReportedOnThePingTimer() {
        var t = connected()
        let meta = #"{"type":"chat_chunk_meta","id":"s","timestamp":1,"senderName":"A","senderIdentity":"alice","messageChunks":5,"attachmentChunks":0,"pollChunks":0}"#
        #expect(send(&t, Array(meta.utf8), seq: 1).isEmpty)
        t.advance(to: 1_000 + 125_000)
        let events = t.fireDueTimers().events
        #expect(events.contains(.chatDropped(ChatAssembler.Drop(id: "s", sender: "alice", reason: .timedOut, receivedChunks: 0, expectedChunks: 5))))
    }

    @Test func aChatStillInFlightWhenTheSessionEndsIsReportedBeforeTheEnd() throws {
        var t = connected()
        let chat = BedrudChatPayload(id: "cut", timestampMs: 7, senderName: "Alice", senderIdentity: "alice",
                                     message: String(repeating: "x", count: 130_000))
        let packets = try ChatChunker.packets(for: chat)
        #expect(packets.count >= 3)
        var events: [RoomEvent] = []
        for (i, p) in packets.dropLast().enumerated() { events += send(&t, p, seq: UInt32(i + 1)) }
        #expect(events.isEmpty)
        let ending = t.feed(.leave).events
        let drop = ChatAssembler.Drop(id: "cut", sender: "alice", reason: .incomplete,
                                      receivedChunks: packets.count - 2, expectedChunks: packets.count - 1)
        #expect(ending == [.chatDropped(drop), .disconnected(.left)])
    }

    @Test func reactionsVotesPresenceAndRoomEnd() {
        var t = connected()
        #expect(send(&t, Array(#"{"type":"reaction","messageId":"m","emoji":"🎉","voterIdentity":"alice"}"#.utf8), seq: 1)
                == [.reactionReceived(BedrudReaction(messageId: "m", emoji: "🎉", voterIdentity: "alice"), sender: "alice")])
        #expect(send(&t, Array(#"{"type":"poll_vote","messageId":"m","optionId":"b","voterIdentity":"alice"}"#.utf8), seq: 2)
                == [.pollVoteReceived(BedrudPollVote(messageId: "m", optionId: "b", voterIdentity: "alice"), sender: "alice")])
        #expect(send(&t, Array(#"{"type":"profile_changed","identity":"alice","name":"Alice B"}"#.utf8), topic: "presence", seq: 3)
                == [.presenceReceived(.profileChanged(identity: "alice", name: "Alice B", avatarURL: ""), sender: "alice")])
        #expect(send(&t, Array(#"{"type":"deafen_state","identity":"alice","deafened":true}"#.utf8), topic: "presence", seq: 4)
                == [.presenceReceived(.deafenState(identity: "alice", deafened: true), sender: "alice")])
        let end = #"{"type":"system","event":"room_ended","message":"The host ended the meeting"}"#
        #expect(send(&t, Array(end.utf8), from: "", topic: "system", seq: 0)
                == [.systemMessage(BedrudSystemMessage(event: .roomEnded, actor: "", target: "", message: "The host ended the meeting"), sender: "")])
    }

    @Test func anUnknownTypeOnTheChatTopicStaysADataEvent() {
        var t = connected()
        let bytes = LiveKit.DataPacket.with {
            $0.participantSid = "PA_alice"
            $0.value = .user(.with { $0.topic = "chat"; $0.payload = Array(#"{"type":"typing"}"#.utf8) })
        }.protobufBytes()
        let events = t.feed(.dataReceived(bytes, reliable: true)).events
        #expect(events.count == 1)
        guard case .dataReceived(let d) = events.first else { Issue.record("no data event"); return }
        #expect(d.topic == "chat" && d.senderIdentity == "alice")
    }
}

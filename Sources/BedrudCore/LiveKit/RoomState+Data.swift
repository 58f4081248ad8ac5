import BedrudProtocol

// Data-channel packets: decode, deduplicate reliable ones by (participant_sid,
// sequence), and turn them into events (user data, Bedrud chat and moderation,
// LiveKit chat, transcriptions, DTMF, RPC requests, legacy speaker lists).
// livekit-protocol.md §2.11 and bedrud-api.md §3.

extension RoomState {
    /// Data packets are small (SCTP messages); anything larger is not one.
    static let dataPacketLimits = ProtoLimits(maxMessageBytes: 1 << 20, maxFieldBytes: 1 << 20, maxDepth: 16)

    mutating func dataReceived(_ bytes: [UInt8], reliable: Bool) {
        switch phase {
        case .idle, .disconnected: return
        default: break
        }
        guard let packet = try? LiveKit.DataPacket(protobufBytes: bytes, limits: Self.dataPacketLimits) else {
            stats.undecodableDataPackets += 1
            return
        }
        // The server stamps the sender; 1.5-era servers only inside UserPacket.
        var senderSid = packet.participantSid
        var senderIdentity = packet.participantIdentity
        if case .user(let user) = packet.value {
            if senderSid.isEmpty { senderSid = user.participantSid }
            if senderIdentity.isEmpty { senderIdentity = user.participantIdentity }
        }
        if senderIdentity.isEmpty, let known = identity(forSid: senderSid) { senderIdentity = known }

        if reliable, packet.sequence > 0, !senderSid.isEmpty {
            if let last = lastDataSequence[senderSid], packet.sequence <= last {
                stats.duplicateDataPackets += 1
                return
            }
            if lastDataSequence[senderSid] == nil, lastDataSequence.count >= configuration.maxDedupSenders {
                lastDataSequence.removeAll()  // a pathological sender flood: start over
            }
            lastDataSequence[senderSid] = packet.sequence
        }

        switch packet.value {
        case .user(let user):
            emit(.dataReceived(MeetingDataMessage(
                topic: user.topic, senderIdentity: senderIdentity, senderSid: senderSid,
                payload: user.payload, reliable: reliable)))
            if let wire = BedrudChatWire(topic: user.topic, payload: user.payload) {
                chatWireReceived(wire, from: senderIdentity)
            } else if let notice = BedrudSystemMessage(topic: user.topic, payload: user.payload) {
                emit(.systemMessage(notice, sender: senderIdentity))
            } else if let presence = BedrudPresence(topic: user.topic, payload: user.payload) {
                emit(.presenceReceived(presence, sender: senderIdentity))
            }
        case .chatMessage(let chat):
            emit(.chatReceived(MeetingChatMessage(
                id: chat.id, senderIdentity: senderIdentity, senderName: participant(senderIdentity)?.name ?? "",
                text: chat.message, timestampMs: chat.timestamp, origin: .livekit)))
        case .transcription(let transcription):
            emit(.transcriptionReceived(transcription, sender: senderIdentity))
        case .sipDTMF(let dtmf):
            emit(.dtmfReceived(code: dtmf.code, digit: dtmf.digit, sender: senderIdentity))
        case .speaker(let update):
            applySpeakers(update.speakers, fullList: true)
        case .rpcRequest(let request):
            emit(.rpcRequestReceived(request, sender: senderIdentity))
        case .rpcAck, .rpcResponse, .streamHeader, .streamChunk, .streamTrailer, .encryptedPacket, .unknown, nil:
            stats.ignoredDataPackets += 1
        }
    }

    /// Bedrud web v0.12's chat wire: reactions and votes as they are, chats and chunks
    /// through the assembler (reassembly, limits, deduplication by id).
    mutating func chatWireReceived(_ wire: BedrudChatWire, from senderIdentity: String) {
        switch wire {
        case .reaction(let r):
            emit(.reactionReceived(r, sender: senderIdentity))
        case .pollVote(let v):
            emit(.pollVoteReceived(v, sender: senderIdentity))
        case .chat, .chunkMeta, .chunk:
            chatAssemblerOutput(chatAssembler.handle(wire, from: senderIdentity, at: now.milliseconds))
        }
    }

    /// Gives up chunked chats that stalled (on the ping timer, so a meta whose chunks
    /// never come is reported even when nothing else arrives).
    mutating func expireChatChunks() {
        chatAssemblerOutput(chatAssembler.expire(at: now.milliseconds))
    }

    /// Gives up every chunked chat still in flight (the session is ending): each becomes a
    /// `chatDropped` event with reason `incomplete`, so a message cut off by the end of the
    /// meeting is reported, not lost without a trace.
    mutating func finishChatChunks() {
        chatAssemblerOutput(chatAssembler.finish())
    }

    private mutating func chatAssemblerOutput(_ results: [ChatAssembler.Output]) {
        stats.chat = chatAssembler.stats
        for result in results {
            switch result {
            case .chat(let chat, let sender):
                let identity = sender.isEmpty ? chat.senderIdentity : sender
                let name = chat.senderName.isEmpty ? (participant(identity)?.name ?? "") : chat.senderName
                emit(.chatReceived(MeetingChatMessage(
                    id: chat.id, senderIdentity: identity, senderName: name, text: chat.message,
                    timestampMs: chat.timestampMs, attachments: chat.attachments, origin: .bedrud, poll: chat.poll)))
            case .dropped(let drop):
                emit(.chatDropped(drop))
            }
        }
    }
}

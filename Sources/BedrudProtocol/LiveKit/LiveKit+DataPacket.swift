// Data-channel messages: every message on `_reliable` / `_lossy` is one DataPacket.
// livekit-protocol.md §2.11. RPC and data-stream members are decoded (they are small)
// so callers can answer or ignore them deliberately; `metrics` (8) is not modelled
// and surfaces as `.unknown(8)`, its record kept in `unknownFields` for as long as it
// is the oneof's member (see ProtoUnknownFields.keepUnmodelledMember).

extension LiveKit {
    public struct DataPacket: ProtoMessage {
        public enum Value: Sendable, Equatable {
            case user(UserPacket)
            /// Legacy active-speaker path (a full list, not deltas).
            case speaker(ActiveSpeakerUpdate)
            case sipDTMF(SipDTMF)
            case transcription(Transcription)
            case chatMessage(ChatMessage)
            case rpcRequest(RpcRequest)
            case rpcAck(RpcAck)
            case rpcResponse(RpcResponse)
            case streamHeader(DataStream.Header)
            case streamChunk(DataStream.Chunk)
            case streamTrailer(DataStream.Trailer)
            case encryptedPacket(EncryptedPacket)
            /// A member this schema does not model (e.g. `metrics` = 8).
            case unknown(Int)
        }

        /// Deprecated; the server overwrites it with the channel it arrived on.
        public var kind: Kind = .reliable
        /// Sender identity asserted by the server ("" if the sender is hidden).
        public var participantIdentity = ""
        /// Empty = everyone.
        public var destinationIdentities: [String] = []
        public var value: Value?
        /// Per-sender reliable sequence (> 0 on `_reliable`).
        public var sequence: UInt32 = 0
        /// Sender SID, set by the server.
        public var participantSid = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            let before = value
            let consumed = try decodeOneField(tag, from: &r)
            // The oneof's last member wins: a replaced `metrics` must not come back.
            if consumed, case .unknown(8)? = before, value != before { unknownFields.dropUnmodelledMember(8) }
            return consumed
        }

        private mutating func decodeOneField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: return try r.decode(tag, into: &kind)
            case 2: return try r.decodeOneof(tag, into: &value, Value.user)
            case 3: return try r.decodeOneof(tag, into: &value, Value.speaker)
            case 4: return try r.decode(tag, into: &participantIdentity)
            case 5: return try r.decode(tag, into: &destinationIdentities)
            case 6: return try r.decodeOneof(tag, into: &value, Value.sipDTMF)
            case 7: return try r.decodeOneof(tag, into: &value, Value.transcription)
            case 8:
                guard try r.decodeUnmodelledMember(tag, into: &unknownFields) else { return false }
                value = .unknown(8)
                return true
            case 9: return try r.decodeOneof(tag, into: &value, Value.chatMessage)
            case 10: return try r.decodeOneof(tag, into: &value, Value.rpcRequest)
            case 11: return try r.decodeOneof(tag, into: &value, Value.rpcAck)
            case 12: return try r.decodeOneof(tag, into: &value, Value.rpcResponse)
            case 13: return try r.decodeOneof(tag, into: &value, Value.streamHeader)
            case 14: return try r.decodeOneof(tag, into: &value, Value.streamChunk)
            case 15: return try r.decodeOneof(tag, into: &value, Value.streamTrailer)
            case 16: return try r.decode(tag, into: &sequence)
            case 17: return try r.decode(tag, into: &participantSid)
            case 18: return try r.decodeOneof(tag, into: &value, Value.encryptedPacket)
            default: return false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            // Field-number order interleaves the oneof with plain fields.
            v.field(1, "kind", kind)
            switch value {
            case .user(let m): v.field(2, "user", m)
            case .speaker(let m): v.field(3, "speaker", m)
            default: break
            }
            v.field(4, "participant_identity", participantIdentity)
            v.field(5, "destination_identities", destinationIdentities)
            switch value {
            case .sipDTMF(let m): v.field(6, "sip_dtmf", m)
            case .transcription(let m): v.field(7, "transcription", m)
            case .chatMessage(let m): v.field(9, "chat_message", m)
            case .rpcRequest(let m): v.field(10, "rpc_request", m)
            case .rpcAck(let m): v.field(11, "rpc_ack", m)
            case .rpcResponse(let m): v.field(12, "rpc_response", m)
            case .streamHeader(let m): v.field(13, "stream_header", m)
            case .streamChunk(let m): v.field(14, "stream_chunk", m)
            case .streamTrailer(let m): v.field(15, "stream_trailer", m)
            default: break
            }
            v.field(16, "sequence", sequence)
            v.field(17, "participant_sid", participantSid)
            if case .encryptedPacket(let m) = value { v.field(18, "encrypted_packet", m) }
            v.unknown(unknownFields)
        }
    }

    /// Application bytes on a topic (Bedrud chat: topic "chat", JSON payload).
    public struct UserPacket: ProtoMessage {
        /// Deprecated; 1.5-era servers put the sender here.
        public var participantSid = ""
        /// Deprecated; copy into `DataPacket.participantIdentity` if that is empty.
        public var participantIdentity = ""
        public var payload: [UInt8] = []
        public var destinationSids: [String] = []
        public var destinationIdentities: [String] = []
        public var topic: String?
        public var id: String?
        public var startTime: UInt64?
        public var endTime: UInt64?
        public var nonce: [UInt8] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &participantSid)
            case 2: try r.decode(tag, into: &payload)
            case 3: try r.decode(tag, into: &destinationSids)
            case 4: try r.decode(tag, into: &topic)
            case 5: try r.decode(tag, into: &participantIdentity)
            case 6: try r.decode(tag, into: &destinationIdentities)
            case 8: try r.decode(tag, into: &id)
            case 9: try r.decode(tag, into: &startTime)
            case 10: try r.decode(tag, into: &endTime)
            case 11: try r.decode(tag, into: &nonce)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "participant_sid", participantSid)
            v.field(2, "payload", payload)
            v.field(3, "destination_sids", destinationSids)
            v.field(4, "topic", topic)
            v.field(5, "participant_identity", participantIdentity)
            v.field(6, "destination_identities", destinationIdentities)
            v.field(8, "id", id)
            v.field(9, "start_time", startTime)
            v.field(10, "end_time", endTime)
            v.field(11, "nonce", nonce)
            v.unknown(unknownFields)
        }
    }

    /// LiveKit's own chat message (JS SDK `sendChatMessage`); Bedrud uses UserPacket.
    public struct ChatMessage: ProtoMessage {
        public var id = ""
        /// Unix ms.
        public var timestamp: Int64 = 0
        public var editTimestamp: Int64?
        public var message = ""
        public var deleted = false
        public var generated = false
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &id)
            case 2: try r.decode(tag, into: &timestamp)
            case 3: try r.decode(tag, into: &editTimestamp)
            case 4: try r.decode(tag, into: &message)
            case 5: try r.decode(tag, into: &deleted)
            case 6: try r.decode(tag, into: &generated)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "id", id)
            v.field(2, "timestamp", timestamp)
            v.field(3, "edit_timestamp", editTimestamp)
            v.field(4, "message", message)
            v.field(5, "deleted", deleted)
            v.field(6, "generated", generated)
            v.unknown(unknownFields)
        }
    }

    public struct Transcription: ProtoMessage {
        /// Whose speech.
        public var transcribedParticipantIdentity = ""
        public var trackID = ""
        public var segments: [TranscriptionSegment] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 2: try r.decode(tag, into: &transcribedParticipantIdentity)
            case 3: try r.decode(tag, into: &trackID)
            case 4: try r.decode(tag, into: &segments)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(2, "transcribed_participant_identity", transcribedParticipantIdentity)
            v.field(3, "track_id", trackID)
            v.field(4, "segments", segments)
            v.unknown(unknownFields)
        }
    }

    public struct TranscriptionSegment: ProtoMessage {
        public var id = ""
        public var text = ""
        /// Unit not specified by the schema; passed through.
        public var startTime: UInt64 = 0
        public var endTime: UInt64 = 0
        public var isFinal = false
        public var language = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &id)
            case 2: try r.decode(tag, into: &text)
            case 3: try r.decode(tag, into: &startTime)
            case 4: try r.decode(tag, into: &endTime)
            case 5: try r.decode(tag, into: &isFinal)
            case 6: try r.decode(tag, into: &language)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "id", id)
            v.field(2, "text", text)
            v.field(3, "start_time", startTime)
            v.field(4, "end_time", endTime)
            v.field(5, "final", isFinal)
            v.field(6, "language", language)
            v.unknown(unknownFields)
        }
    }

    public struct SipDTMF: ProtoMessage {
        public var code: UInt32 = 0
        public var digit = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 3: try r.decode(tag, into: &code)
            case 4: try r.decode(tag, into: &digit)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(3, "code", code)
            v.field(4, "digit", digit)
            v.unknown(unknownFields)
        }
    }

    /// Legacy speaker list on the data channel (full list semantics).
    public struct ActiveSpeakerUpdate: ProtoMessage {
        public var speakers: [SpeakerInfo] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &speakers)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "speakers", speakers)
            v.unknown(unknownFields)
        }
    }

    public struct RpcRequest: ProtoMessage {
        public var id = ""
        public var method = ""
        public var payload = ""
        public var responseTimeoutMs: UInt32 = 0
        public var version: UInt32 = 0
        public var compressedPayload: [UInt8] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &id)
            case 2: try r.decode(tag, into: &method)
            case 3: try r.decode(tag, into: &payload)
            case 4: try r.decode(tag, into: &responseTimeoutMs)
            case 5: try r.decode(tag, into: &version)
            case 6: try r.decode(tag, into: &compressedPayload)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "id", id)
            v.field(2, "method", method)
            v.field(3, "payload", payload)
            v.field(4, "response_timeout_ms", responseTimeoutMs)
            v.field(5, "version", version)
            v.field(6, "compressed_payload", compressedPayload)
            v.unknown(unknownFields)
        }
    }

    public struct RpcAck: ProtoMessage {
        public var requestID = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &requestID)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "request_id", requestID)
            v.unknown(unknownFields)
        }
    }

    public struct RpcResponse: ProtoMessage {
        public enum Value: Sendable, Equatable {
            case payload(String)
            case error(RpcError)
            case compressedPayload([UInt8])
        }

        public var requestID = ""
        public var value: Value?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: return try r.decode(tag, into: &requestID)
            case 2:
                var s = ""
                guard try r.decode(tag, into: &s) else { return false }
                value = .payload(s)
                return true
            case 3: return try r.decodeOneof(tag, into: &value, Value.error)
            case 4:
                var b: [UInt8] = []
                guard try r.decode(tag, into: &b) else { return false }
                value = .compressedPayload(b)
                return true
            default: return false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "request_id", requestID)
            switch value {
            case .payload(let s): v.field(2, "payload", Optional(s))
            case .error(let e): v.field(3, "error", e)
            case .compressedPayload(let b): v.field(4, "compressed_payload", Optional(b))
            case nil: break
            }
            v.unknown(unknownFields)
        }
    }

    public struct RpcError: ProtoMessage {
        /// e.g. 1400 UNSUPPORTED_METHOD.
        public var code: UInt32 = 0
        public var message = ""
        public var data = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &code)
            case 2: try r.decode(tag, into: &message)
            case 3: try r.decode(tag, into: &data)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "code", code)
            v.field(2, "message", message)
            v.field(3, "data", data)
            v.unknown(unknownFields)
        }
    }

    /// E2EE envelope; its plaintext mirrors DataPacket's oneof. Decoded, never decrypted.
    public struct EncryptedPacket: ProtoMessage {
        public var encryptionType: EncryptionType = .unencrypted
        public var iv: [UInt8] = []
        public var keyIndex: UInt32 = 0
        public var encryptedValue: [UInt8] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &encryptionType)
            case 2: try r.decode(tag, into: &iv)
            case 3: try r.decode(tag, into: &keyIndex)
            case 4: try r.decode(tag, into: &encryptedValue)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "encryption_type", encryptionType)
            v.field(2, "iv", iv)
            v.field(3, "key_index", keyIndex)
            v.field(4, "encrypted_value", encryptedValue)
            v.unknown(unknownFields)
        }
    }

    /// Data streams: `Header`, then `Chunk`s, then `Trailer` (§2.11).
    public enum DataStream {}
}

extension LiveKit.DataStream {
    public struct Header: ProtoMessage {
        public enum ContentHeader: Sendable, Equatable {
            case text(TextHeader)
            case byte(ByteHeader)
        }

        public var streamID = ""
        public var timestamp: Int64 = 0
        public var topic = ""
        public var mimeType = ""
        /// Only for finite streams.
        public var totalLength: UInt64?
        public var encryptionType: LiveKit.EncryptionType = .unencrypted
        public var attributes: [String: String] = [:]
        public var contentHeader: ContentHeader?
        /// Single-packet stream (peers with client_protocol >= 2).
        public var inlineContent: [UInt8]?
        public var compression: CompressionType = .uncompressed
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &streamID)
            case 2: try r.decode(tag, into: &timestamp)
            case 3: try r.decode(tag, into: &topic)
            case 4: try r.decode(tag, into: &mimeType)
            case 5: try r.decode(tag, into: &totalLength)
            case 7: try r.decode(tag, into: &encryptionType)
            case 8: try r.decode(tag, into: &attributes)
            case 9: try r.decodeOneof(tag, into: &contentHeader, ContentHeader.text)
            case 10: try r.decodeOneof(tag, into: &contentHeader, ContentHeader.byte)
            case 11: try r.decode(tag, into: &inlineContent)
            case 12: try r.decode(tag, into: &compression)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "stream_id", streamID)
            v.field(2, "timestamp", timestamp)
            v.field(3, "topic", topic)
            v.field(4, "mime_type", mimeType)
            v.field(5, "total_length", totalLength)
            v.field(7, "encryption_type", encryptionType)
            v.field(8, "attributes", attributes)
            switch contentHeader {
            case .text(let h): v.field(9, "text_header", h)
            case .byte(let h): v.field(10, "byte_header", h)
            case nil: break
            }
            v.field(11, "inline_content", inlineContent)
            v.field(12, "compression", compression)
            v.unknown(unknownFields)
        }
    }

    public struct TextHeader: ProtoMessage {
        public var operationType: OperationType = .create
        public var version: Int32 = 0
        public var replyToStreamID = ""
        public var attachedStreamIDs: [String] = []
        public var generated = false
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &operationType)
            case 2: try r.decode(tag, into: &version)
            case 3: try r.decode(tag, into: &replyToStreamID)
            case 4: try r.decode(tag, into: &attachedStreamIDs)
            case 5: try r.decode(tag, into: &generated)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "operation_type", operationType)
            v.field(2, "version", version)
            v.field(3, "reply_to_stream_id", replyToStreamID)
            v.field(4, "attached_stream_ids", attachedStreamIDs)
            v.field(5, "generated", generated)
            v.unknown(unknownFields)
        }
    }

    public struct ByteHeader: ProtoMessage {
        public var name = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &name)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "name", name)
            v.unknown(unknownFields)
        }
    }

    public struct Chunk: ProtoMessage {
        public var streamID = ""
        public var chunkIndex: UInt64 = 0
        public var content: [UInt8] = []
        /// Non-zero = replaces an earlier chunk with the same index.
        public var version: Int32 = 0
        public var iv: [UInt8]?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &streamID)
            case 2: try r.decode(tag, into: &chunkIndex)
            case 3: try r.decode(tag, into: &content)
            case 4: try r.decode(tag, into: &version)
            case 5: try r.decode(tag, into: &iv)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "stream_id", streamID)
            v.field(2, "chunk_index", chunkIndex)
            v.field(3, "content", content)
            v.field(4, "version", version)
            v.field(5, "iv", iv)
            v.unknown(unknownFields)
        }
    }

    public struct Trailer: ProtoMessage {
        public var streamID = ""
        /// "" = normal end; anything else = aborted.
        public var reason = ""
        public var attributes: [String: String] = [:]
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &streamID)
            case 2: try r.decode(tag, into: &reason)
            case 3: try r.decode(tag, into: &attributes)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "stream_id", streamID)
            v.field(2, "reason", reason)
            v.field(3, "attributes", attributes)
            v.unknown(unknownFields)
        }
    }
}

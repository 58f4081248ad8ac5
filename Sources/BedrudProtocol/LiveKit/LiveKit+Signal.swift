// The signalling envelopes: one WebSocket binary message = one SignalRequest
// (client → server) or one SignalResponse (server → client). livekit-protocol.md §2.1.
//
// Both are a single oneof. A member this schema does not know (the data-track and
// data-blob messages 19–23 / 26–31 today, anything newer tomorrow) decodes to
// `.unknown(fieldNumber)` with its bytes kept in `unknownFields` — never an error.
// The members known by number but not modelled (19–23 / 26–31) follow the oneof rule
// like the others: the last one on the wire wins and only it is kept (issue 15). A
// number outside the schema is only an unknown field; it names the message
// (`.unknown(n)`) when nothing else does.

extension LiveKit {
    /// Client → server.
    public struct SignalRequest: ProtoMessage {
        public enum Message: Sendable, Equatable {
            /// Our offer for the PUBLISHER PC.
            case offer(SessionDescription)
            /// Our answer to a server offer (SUBSCRIBER PC); echoes the offer's id.
            case answer(SessionDescription)
            case trickle(TrickleRequest)
            case addTrack(AddTrackRequest)
            case mute(MuteTrackRequest)
            case subscription(UpdateSubscription)
            case trackSetting(UpdateTrackSettings)
            case leave(LeaveRequest)
            case updateLayers(UpdateVideoLayers)
            case subscriptionPermission(SubscriptionPermission)
            case syncState(SyncState)
            case simulate(SimulateScenario)
            /// Legacy ping: our clock in ms.
            case ping(Int64)
            case updateMetadata(UpdateParticipantMetadata)
            case pingReq(Ping)
            case updateAudioTrack(UpdateLocalAudioTrack)
            case updateVideoTrack(UpdateLocalVideoTrack)
            /// A member this schema does not know.
            case unknown(Int)
        }

        public var message: Message?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(_ message: Message) { self.message = message }

        /// Members known by number but not modelled (data tracks and data blobs).
        static let unmodelledMembers = 19...23

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            let before = message
            let consumed = try decodeOneField(tag, from: &r)
            // The oneof's last member wins: a replaced unmodelled member must not come back.
            if consumed, case .unknown(let n)? = before, Self.unmodelledMembers.contains(n), message != before {
                unknownFields.dropUnmodelledMember(n)
            }
            return consumed
        }

        private mutating func decodeOneField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: return try r.decodeOneof(tag, into: &message, Message.offer)
            case 2: return try r.decodeOneof(tag, into: &message, Message.answer)
            case 3: return try r.decodeOneof(tag, into: &message, Message.trickle)
            case 4: return try r.decodeOneof(tag, into: &message, Message.addTrack)
            case 5: return try r.decodeOneof(tag, into: &message, Message.mute)
            case 6: return try r.decodeOneof(tag, into: &message, Message.subscription)
            case 7: return try r.decodeOneof(tag, into: &message, Message.trackSetting)
            case 8: return try r.decodeOneof(tag, into: &message, Message.leave)
            case 10: return try r.decodeOneof(tag, into: &message, Message.updateLayers)
            case 11: return try r.decodeOneof(tag, into: &message, Message.subscriptionPermission)
            case 12: return try r.decodeOneof(tag, into: &message, Message.syncState)
            case 13: return try r.decodeOneof(tag, into: &message, Message.simulate)
            case 14:
                var ms: Int64 = 0
                guard try r.decode(tag, into: &ms) else { break }
                message = .ping(ms)
                return true
            case 15: return try r.decodeOneof(tag, into: &message, Message.updateMetadata)
            case 16: return try r.decodeOneof(tag, into: &message, Message.pingReq)
            case 17: return try r.decodeOneof(tag, into: &message, Message.updateAudioTrack)
            case 18: return try r.decodeOneof(tag, into: &message, Message.updateVideoTrack)
            case Self.unmodelledMembers:
                guard try r.decodeUnmodelledMember(tag, into: &unknownFields) else { break }
                message = .unknown(tag.fieldNumber)
                return true
            default: break
            }
            if message == nil { message = .unknown(tag.fieldNumber) }
            return false
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            switch message {
            case .offer(let m): v.field(1, "offer", m)
            case .answer(let m): v.field(2, "answer", m)
            case .trickle(let m): v.field(3, "trickle", m)
            case .addTrack(let m): v.field(4, "add_track", m)
            case .mute(let m): v.field(5, "mute", m)
            case .subscription(let m): v.field(6, "subscription", m)
            case .trackSetting(let m): v.field(7, "track_setting", m)
            case .leave(let m): v.field(8, "leave", m)
            case .updateLayers(let m): v.field(10, "update_layers", m)
            case .subscriptionPermission(let m): v.field(11, "subscription_permission", m)
            case .syncState(let m): v.field(12, "sync_state", m)
            case .simulate(let m): v.field(13, "simulate", m)
            case .ping(let ms): v.field(14, "ping", Optional(ms))
            case .updateMetadata(let m): v.field(15, "update_metadata", m)
            case .pingReq(let m): v.field(16, "ping_req", m)
            case .updateAudioTrack(let m): v.field(17, "update_audio_track", m)
            case .updateVideoTrack(let m): v.field(18, "update_video_track", m)
            case .unknown, nil: break
            }
            v.unknown(unknownFields)
        }
    }

    /// Server → client. `description` never shows tokens.
    public struct SignalResponse: ProtoMessage, CustomStringConvertible {
        /// `description` is the member's name only, so a token never reaches a log.
        public enum Message: Sendable, Equatable, CustomStringConvertible {
            case join(JoinResponse)
            /// Answer to our PUBLISHER offer.
            case answer(SessionDescription)
            /// Offer for our SUBSCRIBER PC; answer every one, echoing its id.
            case offer(SessionDescription)
            case trickle(TrickleRequest)
            case update(ParticipantUpdate)
            case trackPublished(TrackPublishedResponse)
            case leave(LeaveRequest)
            /// Server-initiated mute of one of our own tracks.
            case mute(MuteTrackRequest)
            case speakersChanged(SpeakersChanged)
            case roomUpdate(RoomUpdate)
            case connectionQuality(ConnectionQualityUpdate)
            case streamStateUpdate(StreamStateUpdate)
            case subscribedQualityUpdate(SubscribedQualityUpdate)
            case subscriptionPermissionUpdate(SubscriptionPermissionUpdate)
            /// A new token for the next (re)connect. Secret.
            case refreshToken(String)
            case trackUnpublished(TrackUnpublishedResponse)
            /// Reply to the legacy ping: the *server's* clock in ms.
            case pong(Int64)
            case reconnect(ReconnectResponse)
            case pongResp(Pong)
            case subscriptionResponse(SubscriptionResponse)
            case requestResponse(RequestResponse)
            case trackSubscribed(TrackSubscribed)
            case roomMoved(RoomMovedResponse)
            case mediaSectionsRequirement(MediaSectionsRequirement)
            /// A member this schema does not know (e.g. 26–31 today).
            case unknown(Int)

            /// The .proto name of the member, for logs.
            public var name: String {
                switch self {
                case .join: "join"
                case .answer: "answer"
                case .offer: "offer"
                case .trickle: "trickle"
                case .update: "update"
                case .trackPublished: "track_published"
                case .leave: "leave"
                case .mute: "mute"
                case .speakersChanged: "speakers_changed"
                case .roomUpdate: "room_update"
                case .connectionQuality: "connection_quality"
                case .streamStateUpdate: "stream_state_update"
                case .subscribedQualityUpdate: "subscribed_quality_update"
                case .subscriptionPermissionUpdate: "subscription_permission_update"
                case .refreshToken: "refresh_token"
                case .trackUnpublished: "track_unpublished"
                case .pong: "pong"
                case .reconnect: "reconnect"
                case .pongResp: "pong_resp"
                case .subscriptionResponse: "subscription_response"
                case .requestResponse: "request_response"
                case .trackSubscribed: "track_subscribed"
                case .roomMoved: "room_moved"
                case .mediaSectionsRequirement: "media_sections_requirement"
                case .unknown(let n): "unknown(\(n))"
                }
            }

            public var description: String { name }
        }

        public var message: Message?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(_ message: Message) { self.message = message }

        /// Members known by number but not modelled (audio codec update, data tracks and data blobs).
        static let unmodelledMembers = 26...31

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            let before = message
            let consumed = try decodeOneField(tag, from: &r)
            // The oneof's last member wins: a replaced unmodelled member must not come back.
            if consumed, case .unknown(let n)? = before, Self.unmodelledMembers.contains(n), message != before {
                unknownFields.dropUnmodelledMember(n)
            }
            return consumed
        }

        private mutating func decodeOneField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: return try r.decodeOneof(tag, into: &message, Message.join)
            case 2: return try r.decodeOneof(tag, into: &message, Message.answer)
            case 3: return try r.decodeOneof(tag, into: &message, Message.offer)
            case 4: return try r.decodeOneof(tag, into: &message, Message.trickle)
            case 5: return try r.decodeOneof(tag, into: &message, Message.update)
            case 6: return try r.decodeOneof(tag, into: &message, Message.trackPublished)
            case 8: return try r.decodeOneof(tag, into: &message, Message.leave)
            case 9: return try r.decodeOneof(tag, into: &message, Message.mute)
            case 10: return try r.decodeOneof(tag, into: &message, Message.speakersChanged)
            case 11: return try r.decodeOneof(tag, into: &message, Message.roomUpdate)
            case 12: return try r.decodeOneof(tag, into: &message, Message.connectionQuality)
            case 13: return try r.decodeOneof(tag, into: &message, Message.streamStateUpdate)
            case 14: return try r.decodeOneof(tag, into: &message, Message.subscribedQualityUpdate)
            case 15: return try r.decodeOneof(tag, into: &message, Message.subscriptionPermissionUpdate)
            case 16:
                var token = ""
                guard try r.decode(tag, into: &token) else { break }
                message = .refreshToken(token)
                return true
            case 17: return try r.decodeOneof(tag, into: &message, Message.trackUnpublished)
            case 18:
                var ms: Int64 = 0
                guard try r.decode(tag, into: &ms) else { break }
                message = .pong(ms)
                return true
            case 19: return try r.decodeOneof(tag, into: &message, Message.reconnect)
            case 20: return try r.decodeOneof(tag, into: &message, Message.pongResp)
            case 21: return try r.decodeOneof(tag, into: &message, Message.subscriptionResponse)
            case 22: return try r.decodeOneof(tag, into: &message, Message.requestResponse)
            case 23: return try r.decodeOneof(tag, into: &message, Message.trackSubscribed)
            case 24: return try r.decodeOneof(tag, into: &message, Message.roomMoved)
            case 25: return try r.decodeOneof(tag, into: &message, Message.mediaSectionsRequirement)
            case Self.unmodelledMembers:
                guard try r.decodeUnmodelledMember(tag, into: &unknownFields) else { break }
                message = .unknown(tag.fieldNumber)
                return true
            default: break
            }
            if message == nil { message = .unknown(tag.fieldNumber) }
            return false
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            switch message {
            case .join(let m): v.field(1, "join", m)
            case .answer(let m): v.field(2, "answer", m)
            case .offer(let m): v.field(3, "offer", m)
            case .trickle(let m): v.field(4, "trickle", m)
            case .update(let m): v.field(5, "update", m)
            case .trackPublished(let m): v.field(6, "track_published", m)
            case .leave(let m): v.field(8, "leave", m)
            case .mute(let m): v.field(9, "mute", m)
            case .speakersChanged(let m): v.field(10, "speakers_changed", m)
            case .roomUpdate(let m): v.field(11, "room_update", m)
            case .connectionQuality(let m): v.field(12, "connection_quality", m)
            case .streamStateUpdate(let m): v.field(13, "stream_state_update", m)
            case .subscribedQualityUpdate(let m): v.field(14, "subscribed_quality_update", m)
            case .subscriptionPermissionUpdate(let m): v.field(15, "subscription_permission_update", m)
            case .refreshToken(let t): v.field(16, "refresh_token", Optional(t))
            case .trackUnpublished(let m): v.field(17, "track_unpublished", m)
            case .pong(let ms): v.field(18, "pong", Optional(ms))
            case .reconnect(let m): v.field(19, "reconnect", m)
            case .pongResp(let m): v.field(20, "pong_resp", m)
            case .subscriptionResponse(let m): v.field(21, "subscription_response", m)
            case .requestResponse(let m): v.field(22, "request_response", m)
            case .trackSubscribed(let m): v.field(23, "track_subscribed", m)
            case .roomMoved(let m): v.field(24, "room_moved", m)
            case .mediaSectionsRequirement(let m): v.field(25, "media_sections_requirement", m)
            case .unknown, nil: break
            }
            v.unknown(unknownFields)
        }

        /// The member's name only: message bodies can carry tokens and credentials.
        public var description: String { "SignalResponse(\(message?.name ?? "empty"))" }
    }
}

// Server → client room-level updates (livekit_rtc.proto). Field tables:
// livekit-protocol.md §2.3–§2.4.

extension LiveKit {
    /// Full `ParticipantInfo` for every participant that changed.
    public struct ParticipantUpdate: ProtoMessage {
        public var participants: [ParticipantInfo] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &participants)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "participants", participants)
            v.unknown(unknownFields)
        }
    }

    public struct RoomUpdate: ProtoMessage {
        public var room: Room?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &room)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "room", room)
            v.unknown(unknownFields)
        }
    }

    /// Active-speaker deltas (protocol >= 3).
    public struct SpeakersChanged: ProtoMessage {
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

    public struct ConnectionQualityUpdate: ProtoMessage {
        public var updates: [ConnectionQualityInfo] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &updates)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "updates", updates)
            v.unknown(unknownFields)
        }
    }

    public struct ConnectionQualityInfo: ProtoMessage {
        public var participantSid = ""
        public var quality: ConnectionQuality = .poor
        /// MOS-like, 1.0 … 4.5.
        public var score: Float = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &participantSid)
            case 2: try r.decode(tag, into: &quality)
            case 3: try r.decode(tag, into: &score)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "participant_sid", participantSid)
            v.field(2, "quality", quality)
            v.field(3, "score", score)
            v.unknown(unknownFields)
        }
    }

    public struct StreamStateUpdate: ProtoMessage {
        public var streamStates: [StreamStateInfo] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &streamStates)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "stream_states", streamStates)
            v.unknown(unknownFields)
        }
    }

    public struct StreamStateInfo: ProtoMessage {
        public var participantSid = ""
        public var trackSid = ""
        public var state: StreamState = .active
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &participantSid)
            case 2: try r.decode(tag, into: &trackSid)
            case 3: try r.decode(tag, into: &state)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "participant_sid", participantSid)
            v.field(2, "track_sid", trackSid)
            v.field(3, "state", state)
            v.unknown(unknownFields)
        }
    }

    /// A subscription failed; expect no media for that track.
    public struct SubscriptionResponse: ProtoMessage {
        public var trackSid = ""
        public var err: SubscriptionError = .unknown
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &trackSid)
            case 2: try r.decode(tag, into: &err)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "track_sid", trackSid)
            v.field(2, "err", err)
            v.unknown(unknownFields)
        }
    }

    /// A publisher allowed or denied our subscription to one of its tracks.
    public struct SubscriptionPermissionUpdate: ProtoMessage {
        public var participantSid = ""
        public var trackSid = ""
        public var allowed = false
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &participantSid)
            case 2: try r.decode(tag, into: &trackSid)
            case 3: try r.decode(tag, into: &allowed)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "participant_sid", participantSid)
            v.field(2, "track_sid", trackSid)
            v.field(3, "allowed", allowed)
            v.unknown(unknownFields)
        }
    }

    /// Result of a request that carried a `request_id`. The data-track members of the
    /// `request` oneof (10, 11) surface as `.unknown(number)`.
    public struct RequestResponse: ProtoMessage {
        public enum Request: Sendable, Equatable {
            case trickle(TrickleRequest)
            case addTrack(AddTrackRequest)
            case mute(MuteTrackRequest)
            case updateMetadata(UpdateParticipantMetadata)
            case updateAudioTrack(UpdateLocalAudioTrack)
            case updateVideoTrack(UpdateLocalVideoTrack)
            case unknown(Int)
        }

        public var requestID: UInt32 = 0
        public var reason: Reason = .ok
        public var message = ""
        public var request: Request?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            let before = request
            let consumed = try decodeOneField(tag, from: &r)
            // The oneof's last member wins: a replaced data-track member must not come back.
            if consumed, case .unknown(let n)? = before, request != before { unknownFields.dropUnmodelledMember(n) }
            return consumed
        }

        private mutating func decodeOneField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: return try r.decode(tag, into: &requestID)
            case 2: return try r.decode(tag, into: &reason)
            case 3: return try r.decode(tag, into: &message)
            case 4: return try r.decodeOneof(tag, into: &request, Request.trickle)
            case 5: return try r.decodeOneof(tag, into: &request, Request.addTrack)
            case 6: return try r.decodeOneof(tag, into: &request, Request.mute)
            case 7: return try r.decodeOneof(tag, into: &request, Request.updateMetadata)
            case 8: return try r.decodeOneof(tag, into: &request, Request.updateAudioTrack)
            case 9: return try r.decodeOneof(tag, into: &request, Request.updateVideoTrack)
            case 10, 11:
                guard try r.decodeUnmodelledMember(tag, into: &unknownFields) else { return false }
                request = .unknown(tag.fieldNumber)
                return true
            default: return false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "request_id", requestID)
            v.field(2, "reason", reason)
            v.field(3, "message", message)
            switch request {
            case .trickle(let m): v.field(4, "trickle", m)
            case .addTrack(let m): v.field(5, "add_track", m)
            case .mute(let m): v.field(6, "mute", m)
            case .updateMetadata(let m): v.field(7, "update_metadata", m)
            case .updateAudioTrack(let m): v.field(8, "update_audio_track", m)
            case .updateVideoTrack(let m): v.field(9, "update_video_track", m)
            case .unknown, nil: break
            }
            v.unknown(unknownFields)
        }
    }

    /// Publishing (dynacast): which layers subscribers want.
    public struct SubscribedQualityUpdate: ProtoMessage {
        public var trackSid = ""
        public var subscribedQualities: [SubscribedQuality] = []
        public var subscribedCodecs: [SubscribedCodec] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &trackSid)
            case 2: try r.decode(tag, into: &subscribedQualities)
            case 3: try r.decode(tag, into: &subscribedCodecs)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "track_sid", trackSid)
            v.field(2, "subscribed_qualities", subscribedQualities)
            v.field(3, "subscribed_codecs", subscribedCodecs)
            v.unknown(unknownFields)
        }
    }

    public struct SubscribedCodec: ProtoMessage {
        public var codec = ""
        public var qualities: [SubscribedQuality] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &codec)
            case 2: try r.decode(tag, into: &qualities)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "codec", codec)
            v.field(2, "qualities", qualities)
            v.unknown(unknownFields)
        }
    }

    public struct SubscribedQuality: ProtoMessage {
        public var quality: VideoQuality = .low
        public var enabled = false
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &quality)
            case 2: try r.decode(tag, into: &enabled)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "quality", quality)
            v.field(2, "enabled", enabled)
            v.unknown(unknownFields)
        }
    }

    /// Single-PC mode: add this many recvonly transceivers and renegotiate.
    public struct MediaSectionsRequirement: ProtoMessage {
        public var numAudios: UInt32 = 0
        public var numVideos: UInt32 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &numAudios)
            case 2: try r.decode(tag, into: &numVideos)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "num_audios", numAudios)
            v.field(2, "num_videos", numVideos)
            v.unknown(unknownFields)
        }
    }
}

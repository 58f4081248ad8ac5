// Track control: publishing, muting, subscribing (livekit_rtc.proto).
// Field tables: livekit-protocol.md §2.4, §2.5, §2.9.

extension LiveKit {
    /// Mute or unmute one of *our own* published tracks (both directions).
    public struct MuteTrackRequest: ProtoMessage {
        public var sid = ""
        public var muted = false
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(sid: String, muted: Bool) {
            self.sid = sid
            self.muted = muted
        }

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &sid)
            case 2: try r.decode(tag, into: &muted)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "sid", sid)
            v.field(2, "muted", muted)
            v.unknown(unknownFields)
        }
    }

    /// The server's acknowledgement of `add_track`.
    public struct TrackPublishedResponse: ProtoMessage {
        public var cid = ""
        public var track: TrackInfo?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &cid)
            case 2: try r.decode(tag, into: &track)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "cid", cid)
            v.field(2, "track", track)
            v.unknown(unknownFields)
        }
    }

    /// The server removed one of our published tracks (protocol >= 7).
    public struct TrackUnpublishedResponse: ProtoMessage {
        public var trackSid = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &trackSid)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "track_sid", trackSid)
            v.unknown(unknownFields)
        }
    }

    /// Someone subscribed to one of our tracks for the first time.
    public struct TrackSubscribed: ProtoMessage {
        public var trackSid = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &trackSid)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "track_sid", trackSid)
            v.unknown(unknownFields)
        }
    }

    /// Announces a track we are about to publish; the server answers `track_published`.
    public struct AddTrackRequest: ProtoMessage {
        /// Client-chosen id, echoed in `TrackPublishedResponse.cid`.
        public var cid = ""
        public var name = ""
        public var type: TrackType = .audio
        public var width: UInt32 = 0
        public var height: UInt32 = 0
        public var muted = false
        public var disableDTX = false
        public var source: TrackSource = .unknown
        public var layers: [VideoLayer] = []
        public var simulcastCodecs: [SimulcastCodec] = []
        public var sid = ""
        public var stereo = false
        public var disableRed = false
        public var encryption: EncryptionType = .unencrypted
        public var stream = ""
        public var backupCodecPolicy: BackupCodecPolicy = .preferRegression
        public var audioFeatures: [AudioTrackFeature] = []
        public var packetTrailerFeatures: [PacketTrailerFeature] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &cid)
            case 2: try r.decode(tag, into: &name)
            case 3: try r.decode(tag, into: &type)
            case 4: try r.decode(tag, into: &width)
            case 5: try r.decode(tag, into: &height)
            case 6: try r.decode(tag, into: &muted)
            case 7: try r.decode(tag, into: &disableDTX)
            case 8: try r.decode(tag, into: &source)
            case 9: try r.decode(tag, into: &layers)
            case 10: try r.decode(tag, into: &simulcastCodecs)
            case 11: try r.decode(tag, into: &sid)
            case 12: try r.decode(tag, into: &stereo)
            case 13: try r.decode(tag, into: &disableRed)
            case 14: try r.decode(tag, into: &encryption)
            case 15: try r.decode(tag, into: &stream)
            case 16: try r.decode(tag, into: &backupCodecPolicy)
            case 17: try r.decode(tag, into: &audioFeatures)
            case 18: try r.decode(tag, into: &packetTrailerFeatures)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "cid", cid)
            v.field(2, "name", name)
            v.field(3, "type", type)
            v.field(4, "width", width)
            v.field(5, "height", height)
            v.field(6, "muted", muted)
            v.field(7, "disable_dtx", disableDTX)
            v.field(8, "source", source)
            v.field(9, "layers", layers)
            v.field(10, "simulcast_codecs", simulcastCodecs)
            v.field(11, "sid", sid)
            v.field(12, "stereo", stereo)
            v.field(13, "disable_red", disableRed)
            v.field(14, "encryption", encryption)
            v.field(15, "stream", stream)
            v.field(16, "backup_codec_policy", backupCodecPolicy)
            v.field(17, "audio_features", audioFeatures)
            v.field(18, "packet_trailer_features", packetTrailerFeatures)
            v.unknown(unknownFields)
        }
    }

    public struct SimulcastCodec: ProtoMessage {
        public var codec = ""
        public var cid = ""
        public var layers: [VideoLayer] = []
        public var videoLayerMode: VideoLayer.Mode = .unused
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &codec)
            case 2: try r.decode(tag, into: &cid)
            case 4: try r.decode(tag, into: &layers)
            case 5: try r.decode(tag, into: &videoLayerMode)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "codec", codec)
            v.field(2, "cid", cid)
            v.field(4, "layers", layers)
            v.field(5, "video_layer_mode", videoLayerMode)
            v.unknown(unknownFields)
        }
    }

    /// Subscribe to (or unsubscribe from) remote tracks; every SID is handled on its own.
    public struct UpdateSubscription: ProtoMessage {
        public var trackSids: [String] = []
        public var subscribe = false
        public var participantTracks: [ParticipantTracks] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(trackSids: [String], subscribe: Bool) {
            self.trackSids = trackSids
            self.subscribe = subscribe
        }

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &trackSids)
            case 2: try r.decode(tag, into: &subscribe)
            case 3: try r.decode(tag, into: &participantTracks)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "track_sids", trackSids)
            v.field(2, "subscribe", subscribe)
            v.field(3, "participant_tracks", participantTracks)
            v.unknown(unknownFields)
        }
    }

    public struct ParticipantTracks: ProtoMessage {
        public var participantSid = ""
        public var trackSids: [String] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &participantSid)
            case 2: try r.decode(tag, into: &trackSids)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "participant_sid", participantSid)
            v.field(2, "track_sids", trackSids)
            v.unknown(unknownFields)
        }
    }

    /// Per-subscription settings: pause (`disabled`), video size/quality, fps, priority.
    public struct UpdateTrackSettings: ProtoMessage {
        public var trackSids: [String] = []
        /// True = pause forwarding.
        public var disabled = false
        public var quality: VideoQuality = .low
        public var width: UInt32 = 0
        public var height: UInt32 = 0
        public var fps: UInt32 = 0
        /// 1 = highest, 0 = unset.
        public var priority: UInt32 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &trackSids)
            case 3: try r.decode(tag, into: &disabled)
            case 4: try r.decode(tag, into: &quality)
            case 5: try r.decode(tag, into: &width)
            case 6: try r.decode(tag, into: &height)
            case 7: try r.decode(tag, into: &fps)
            case 8: try r.decode(tag, into: &priority)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "track_sids", trackSids)
            v.field(3, "disabled", disabled)
            v.field(4, "quality", quality)
            v.field(5, "width", width)
            v.field(6, "height", height)
            v.field(7, "fps", fps)
            v.field(8, "priority", priority)
            v.unknown(unknownFields)
        }
    }

    /// Change our own metadata, name or attributes (needs `canUpdateOwnMetadata`).
    public struct UpdateParticipantMetadata: ProtoMessage {
        public var metadata = ""
        public var name = ""
        public var attributes: [String: String] = [:]
        public var requestID: UInt32 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &metadata)
            case 2: try r.decode(tag, into: &name)
            case 3: try r.decode(tag, into: &attributes)
            case 4: try r.decode(tag, into: &requestID)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "metadata", metadata)
            v.field(2, "name", name)
            v.field(3, "attributes", attributes)
            v.field(4, "request_id", requestID)
            v.unknown(unknownFields)
        }
    }

    public struct UpdateLocalAudioTrack: ProtoMessage {
        public var trackSid = ""
        public var features: [AudioTrackFeature] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &trackSid)
            case 2: try r.decode(tag, into: &features)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "track_sid", trackSid)
            v.field(2, "features", features)
            v.unknown(unknownFields)
        }
    }

    public struct UpdateLocalVideoTrack: ProtoMessage {
        public var trackSid = ""
        public var width: UInt32 = 0
        public var height: UInt32 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &trackSid)
            case 2: try r.decode(tag, into: &width)
            case 3: try r.decode(tag, into: &height)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "track_sid", trackSid)
            v.field(2, "width", width)
            v.field(3, "height", height)
            v.unknown(unknownFields)
        }
    }

    /// Deprecated publisher simulcast layer update (kept for completeness).
    public struct UpdateVideoLayers: ProtoMessage {
        public var trackSid = ""
        public var layers: [VideoLayer] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &trackSid)
            case 2: try r.decode(tag, into: &layers)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "track_sid", trackSid)
            v.field(2, "layers", layers)
            v.unknown(unknownFields)
        }
    }

    /// Publisher side: who may subscribe to our tracks.
    public struct SubscriptionPermission: ProtoMessage {
        public var allParticipants = false
        public var trackPermissions: [TrackPermission] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &allParticipants)
            case 2: try r.decode(tag, into: &trackPermissions)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "all_participants", allParticipants)
            v.field(2, "track_permissions", trackPermissions)
            v.unknown(unknownFields)
        }
    }

    public struct TrackPermission: ProtoMessage {
        public var participantSid = ""
        public var allTracks = false
        public var trackSids: [String] = []
        public var participantIdentity = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &participantSid)
            case 2: try r.decode(tag, into: &allTracks)
            case 3: try r.decode(tag, into: &trackSids)
            case 4: try r.decode(tag, into: &participantIdentity)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "participant_sid", participantSid)
            v.field(2, "all_tracks", allTracks)
            v.field(3, "track_sids", trackSids)
            v.field(4, "participant_identity", participantIdentity)
            v.unknown(unknownFields)
        }
    }
}

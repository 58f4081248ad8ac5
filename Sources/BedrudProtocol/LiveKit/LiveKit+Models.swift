// Shared model messages from livekit_models.proto: rooms, participants, tracks, codecs,
// server and client info. Field tables: livekit-protocol.md §2.2–§2.3.

extension LiveKit {
    /// A version stamp (`unix_micro` + tie-breaking `ticks`).
    public struct TimedVersion: ProtoMessage {
        public var unixMicro: Int64 = 0
        public var ticks: Int32 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &unixMicro)
            case 2: try r.decode(tag, into: &ticks)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "unix_micro", unixMicro)
            v.field(2, "ticks", ticks)
            v.unknown(unknownFields)
        }
    }

    /// A codec by MIME type, with an optional fmtp line.
    public struct Codec: ProtoMessage {
        public var mime = ""
        public var fmtpLine = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &mime)
            case 2: try r.decode(tag, into: &fmtpLine)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "mime", mime)
            v.field(2, "fmtp_line", fmtpLine)
            v.unknown(unknownFields)
        }
    }

    /// A room as the SFU describes it. `sid` may be "" in `join` and arrive later in
    /// `room_update` (protocol >= 12).
    public struct Room: ProtoMessage {
        /// `RM_…`
        public var sid = ""
        public var name = ""
        /// Seconds a never-joined room lives.
        public var emptyTimeout: UInt32 = 0
        public var maxParticipants: UInt32 = 0
        /// Unix seconds.
        public var creationTime: Int64 = 0
        public var turnPassword = ""
        public var enabledCodecs: [Codec] = []
        public var metadata = ""
        /// Non-dependent participants (agents, recorders, egress excluded).
        public var numParticipants: UInt32 = 0
        public var activeRecording = false
        public var numPublishers: UInt32 = 0
        public var version: TimedVersion?
        /// Seconds the room lives after the last non-dependent participant left.
        public var departureTimeout: UInt32 = 0
        /// Unix milliseconds.
        public var creationTimeMs: Int64 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &sid)
            case 2: try r.decode(tag, into: &name)
            case 3: try r.decode(tag, into: &emptyTimeout)
            case 4: try r.decode(tag, into: &maxParticipants)
            case 5: try r.decode(tag, into: &creationTime)
            case 6: try r.decode(tag, into: &turnPassword)
            case 7: try r.decode(tag, into: &enabledCodecs)
            case 8: try r.decode(tag, into: &metadata)
            case 9: try r.decode(tag, into: &numParticipants)
            case 10: try r.decode(tag, into: &activeRecording)
            case 11: try r.decode(tag, into: &numPublishers)
            case 13: try r.decode(tag, into: &version)
            case 14: try r.decode(tag, into: &departureTimeout)
            case 15: try r.decode(tag, into: &creationTimeMs)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "sid", sid)
            v.field(2, "name", name)
            v.field(3, "empty_timeout", emptyTimeout)
            v.field(4, "max_participants", maxParticipants)
            v.field(5, "creation_time", creationTime)
            v.field(6, "turn_password", turnPassword)
            v.field(7, "enabled_codecs", enabledCodecs)
            v.field(8, "metadata", metadata)
            v.field(9, "num_participants", numParticipants)
            v.field(10, "active_recording", activeRecording)
            v.field(11, "num_publishers", numPublishers)
            v.field(13, "version", version)
            v.field(14, "departure_timeout", departureTimeout)
            v.field(15, "creation_time_ms", creationTimeMs)
            v.unknown(unknownFields)
        }
    }

    /// What a participant's token allows.
    public struct ParticipantPermission: ProtoMessage {
        public var canSubscribe = false
        public var canPublish = false
        public var canPublishData = false
        public var hidden = false
        /// Deprecated; see `ParticipantInfo.kind == .egress`.
        public var recorder = false
        public var canPublishSources: [TrackSource] = []
        public var canUpdateMetadata = false
        /// Deprecated; see `ParticipantInfo.kind == .agent`.
        public var agent = false
        public var canSubscribeMetrics = false
        public var canManageAgentSession = false
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &canSubscribe)
            case 2: try r.decode(tag, into: &canPublish)
            case 3: try r.decode(tag, into: &canPublishData)
            case 7: try r.decode(tag, into: &hidden)
            case 8: try r.decode(tag, into: &recorder)
            case 9: try r.decode(tag, into: &canPublishSources)
            case 10: try r.decode(tag, into: &canUpdateMetadata)
            case 11: try r.decode(tag, into: &agent)
            case 12: try r.decode(tag, into: &canSubscribeMetrics)
            case 13: try r.decode(tag, into: &canManageAgentSession)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "can_subscribe", canSubscribe)
            v.field(2, "can_publish", canPublish)
            v.field(3, "can_publish_data", canPublishData)
            v.field(7, "hidden", hidden)
            v.field(8, "recorder", recorder)
            v.field(9, "can_publish_sources", canPublishSources)
            v.field(10, "can_update_metadata", canUpdateMetadata)
            v.field(11, "agent", agent)
            v.field(12, "can_subscribe_metrics", canSubscribeMetrics)
            v.field(13, "can_manage_agent_session", canManageAgentSession)
            v.unknown(unknownFields)
        }
    }

    /// A participant and its complete list of published tracks. Key participants by
    /// `identity`; `sid` changes on every full reconnect. `data_tracks` (19) is not
    /// modelled (kept in `unknownFields`).
    public struct ParticipantInfo: ProtoMessage {
        /// `PA_…`
        public var sid = ""
        public var identity = ""
        public var state: State = .joining
        /// Complete list: a track missing from a newer update was unpublished.
        public var tracks: [TrackInfo] = []
        public var metadata = ""
        /// Unix seconds.
        public var joinedAt: Int64 = 0
        public var name = ""
        /// Monotonic per SID; ignore updates older than the one applied.
        public var version: UInt32 = 0
        public var permission: ParticipantPermission?
        public var region = ""
        public var isPublisher = false
        public var kind: Kind = .standard
        public var attributes: [String: String] = [:]
        /// Set when `state == .disconnected`.
        public var disconnectReason: DisconnectReason = .unknownReason
        /// Unix milliseconds.
        public var joinedAtMs: Int64 = 0
        public var kindDetails: [KindDetail] = []
        public var clientProtocol: Int32 = 0
        public var capabilities: [ClientInfo.Capability] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &sid)
            case 2: try r.decode(tag, into: &identity)
            case 3: try r.decode(tag, into: &state)
            case 4: try r.decode(tag, into: &tracks)
            case 5: try r.decode(tag, into: &metadata)
            case 6: try r.decode(tag, into: &joinedAt)
            case 9: try r.decode(tag, into: &name)
            case 10: try r.decode(tag, into: &version)
            case 11: try r.decode(tag, into: &permission)
            case 12: try r.decode(tag, into: &region)
            case 13: try r.decode(tag, into: &isPublisher)
            case 14: try r.decode(tag, into: &kind)
            case 15: try r.decode(tag, into: &attributes)
            case 16: try r.decode(tag, into: &disconnectReason)
            case 17: try r.decode(tag, into: &joinedAtMs)
            case 18: try r.decode(tag, into: &kindDetails)
            case 20: try r.decode(tag, into: &clientProtocol)
            case 21: try r.decode(tag, into: &capabilities)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "sid", sid)
            v.field(2, "identity", identity)
            v.field(3, "state", state)
            v.field(4, "tracks", tracks)
            v.field(5, "metadata", metadata)
            v.field(6, "joined_at", joinedAt)
            v.field(9, "name", name)
            v.field(10, "version", version)
            v.field(11, "permission", permission)
            v.field(12, "region", region)
            v.field(13, "is_publisher", isPublisher)
            v.field(14, "kind", kind)
            v.field(15, "attributes", attributes)
            v.field(16, "disconnect_reason", disconnectReason)
            v.field(17, "joined_at_ms", joinedAtMs)
            v.field(18, "kind_details", kindDetails)
            v.field(20, "client_protocol", clientProtocol)
            v.field(21, "capabilities", capabilities)
            v.unknown(unknownFields)
        }
    }

    /// One simulcast layer of a video track.
    public struct VideoLayer: ProtoMessage {
        public var quality: VideoQuality = .low
        public var width: UInt32 = 0
        public var height: UInt32 = 0
        public var bitrate: UInt32 = 0
        public var ssrc: UInt32 = 0
        public var spatialLayer: Int32 = 0
        public var rid = ""
        public var repairSSRC: UInt32 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &quality)
            case 2: try r.decode(tag, into: &width)
            case 3: try r.decode(tag, into: &height)
            case 4: try r.decode(tag, into: &bitrate)
            case 5: try r.decode(tag, into: &ssrc)
            case 6: try r.decode(tag, into: &spatialLayer)
            case 7: try r.decode(tag, into: &rid)
            case 8: try r.decode(tag, into: &repairSSRC)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "quality", quality)
            v.field(2, "width", width)
            v.field(3, "height", height)
            v.field(4, "bitrate", bitrate)
            v.field(5, "ssrc", ssrc)
            v.field(6, "spatial_layer", spatialLayer)
            v.field(7, "rid", rid)
            v.field(8, "repair_ssrc", repairSSRC)
            v.unknown(unknownFields)
        }
    }

    /// Per-codec information of a published track (primary and backup codec).
    public struct SimulcastCodecInfo: ProtoMessage {
        public var mimeType = ""
        public var mid = ""
        public var cid = ""
        public var layers: [VideoLayer] = []
        public var videoLayerMode: VideoLayer.Mode = .unused
        public var sdpCid = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &mimeType)
            case 2: try r.decode(tag, into: &mid)
            case 3: try r.decode(tag, into: &cid)
            case 4: try r.decode(tag, into: &layers)
            case 5: try r.decode(tag, into: &videoLayerMode)
            case 6: try r.decode(tag, into: &sdpCid)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "mime_type", mimeType)
            v.field(2, "mid", mid)
            v.field(3, "cid", cid)
            v.field(4, "layers", layers)
            v.field(5, "video_layer_mode", videoLayerMode)
            v.field(6, "sdp_cid", sdpCid)
            v.unknown(unknownFields)
        }
    }

    /// A published track. `sid` equals the msid track id in the subscriber SDP; `mid`
    /// is the *publisher's* mid, never ours.
    public struct TrackInfo: ProtoMessage {
        /// `TR_…`
        public var sid = ""
        public var type: TrackType = .audio
        public var name = ""
        public var muted = false
        public var width: UInt32 = 0
        public var height: UInt32 = 0
        public var simulcast = false
        public var disableDTX = false
        public var source: TrackSource = .unknown
        public var layers: [VideoLayer] = []
        /// e.g. "audio/opus", "audio/red"; compare case-insensitively.
        public var mimeType = ""
        public var mid = ""
        public var codecs: [SimulcastCodecInfo] = []
        /// Deprecated in favour of `audioFeatures.contains(.stereo)`.
        public var stereo = false
        public var disableRed = false
        public var encryption: EncryptionType = .unencrypted
        public var stream = ""
        public var version: TimedVersion?
        public var audioFeatures: [AudioTrackFeature] = []
        public var backupCodecPolicy: BackupCodecPolicy = .preferRegression
        public var packetTrailerFeatures: [PacketTrailerFeature] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &sid)
            case 2: try r.decode(tag, into: &type)
            case 3: try r.decode(tag, into: &name)
            case 4: try r.decode(tag, into: &muted)
            case 5: try r.decode(tag, into: &width)
            case 6: try r.decode(tag, into: &height)
            case 7: try r.decode(tag, into: &simulcast)
            case 8: try r.decode(tag, into: &disableDTX)
            case 9: try r.decode(tag, into: &source)
            case 10: try r.decode(tag, into: &layers)
            case 11: try r.decode(tag, into: &mimeType)
            case 12: try r.decode(tag, into: &mid)
            case 13: try r.decode(tag, into: &codecs)
            case 14: try r.decode(tag, into: &stereo)
            case 15: try r.decode(tag, into: &disableRed)
            case 16: try r.decode(tag, into: &encryption)
            case 17: try r.decode(tag, into: &stream)
            case 18: try r.decode(tag, into: &version)
            case 19: try r.decode(tag, into: &audioFeatures)
            case 20: try r.decode(tag, into: &backupCodecPolicy)
            case 21: try r.decode(tag, into: &packetTrailerFeatures)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "sid", sid)
            v.field(2, "type", type)
            v.field(3, "name", name)
            v.field(4, "muted", muted)
            v.field(5, "width", width)
            v.field(6, "height", height)
            v.field(7, "simulcast", simulcast)
            v.field(8, "disable_dtx", disableDTX)
            v.field(9, "source", source)
            v.field(10, "layers", layers)
            v.field(11, "mime_type", mimeType)
            v.field(12, "mid", mid)
            v.field(13, "codecs", codecs)
            v.field(14, "stereo", stereo)
            v.field(15, "disable_red", disableRed)
            v.field(16, "encryption", encryption)
            v.field(17, "stream", stream)
            v.field(18, "version", version)
            v.field(19, "audio_features", audioFeatures)
            v.field(20, "backup_codec_policy", backupCodecPolicy)
            v.field(21, "packet_trailer_features", packetTrailerFeatures)
            v.unknown(unknownFields)
        }

        /// True when the track is stereo by either the old flag or `TF_STEREO`.
        public var isStereo: Bool { stereo || audioFeatures.contains(.stereo) }
    }

    /// The server's own description; `protocol` decides how `leave` is read (§5.4).
    public struct ServerInfo: ProtoMessage {
        public var edition: Edition = .standard
        public var version = ""
        /// The server's CurrentProtocol (10 on 1.5.0 … 17 on >= 1.10.1).
        public var `protocol`: Int32 = 0
        public var region = ""
        public var nodeID = ""
        public var debugInfo = ""
        public var agentProtocol: Int32 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &edition)
            case 2: try r.decode(tag, into: &version)
            case 3: try r.decode(tag, into: &`protocol`)
            case 4: try r.decode(tag, into: &region)
            case 5: try r.decode(tag, into: &nodeID)
            case 6: try r.decode(tag, into: &debugInfo)
            case 7: try r.decode(tag, into: &agentProtocol)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "edition", edition)
            v.field(2, "version", version)
            v.field(3, "protocol", `protocol`)
            v.field(4, "region", region)
            v.field(5, "node_id", nodeID)
            v.field(6, "debug_info", debugInfo)
            v.field(7, "agent_protocol", agentProtocol)
            v.unknown(unknownFields)
        }
    }

    /// What a client says about itself (v1 `JoinRequest.client_info`; v0 sends the same
    /// facts as query parameters).
    public struct ClientInfo: ProtoMessage {
        public var sdk: SDK = .unknown
        public var version = ""
        public var `protocol`: Int32 = 0
        public var os = ""
        public var osVersion = ""
        public var deviceModel = ""
        public var browser = ""
        public var browserVersion = ""
        /// Filled in by the server.
        public var address = ""
        public var network = ""
        public var otherSDKs = ""
        public var clientProtocol: Int32 = 0
        public var capabilities: [Capability] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &sdk)
            case 2: try r.decode(tag, into: &version)
            case 3: try r.decode(tag, into: &`protocol`)
            case 4: try r.decode(tag, into: &os)
            case 5: try r.decode(tag, into: &osVersion)
            case 6: try r.decode(tag, into: &deviceModel)
            case 7: try r.decode(tag, into: &browser)
            case 8: try r.decode(tag, into: &browserVersion)
            case 9: try r.decode(tag, into: &address)
            case 10: try r.decode(tag, into: &network)
            case 11: try r.decode(tag, into: &otherSDKs)
            case 12: try r.decode(tag, into: &clientProtocol)
            case 13: try r.decode(tag, into: &capabilities)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "sdk", sdk)
            v.field(2, "version", version)
            v.field(3, "protocol", `protocol`)
            v.field(4, "os", os)
            v.field(5, "os_version", osVersion)
            v.field(6, "device_model", deviceModel)
            v.field(7, "browser", browser)
            v.field(8, "browser_version", browserVersion)
            v.field(9, "address", address)
            v.field(10, "network", network)
            v.field(11, "other_sdks", otherSDKs)
            v.field(12, "client_protocol", clientProtocol)
            v.field(13, "capabilities", capabilities)
            v.unknown(unknownFields)
        }
    }

    public struct VideoConfiguration: ProtoMessage {
        public var hardwareEncoder: ClientConfigSetting = .unset
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &hardwareEncoder)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "hardware_encoder", hardwareEncoder)
            v.unknown(unknownFields)
        }
    }

    public struct DisabledCodecs: ProtoMessage {
        public var codecs: [Codec] = []
        public var publish: [Codec] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &codecs)
            case 2: try r.decode(tag, into: &publish)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "codecs", codecs)
            v.field(2, "publish", publish)
            v.unknown(unknownFields)
        }
    }

    /// Settings the server pushes: `resumeConnection == .disabled` ⇒ never resume;
    /// `forceRelay == .enabled` ⇒ relay-only ICE.
    public struct ClientConfiguration: ProtoMessage {
        public var video: VideoConfiguration?
        public var screen: VideoConfiguration?
        public var resumeConnection: ClientConfigSetting = .unset
        public var disabledCodecs: DisabledCodecs?
        public var forceRelay: ClientConfigSetting = .unset
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &video)
            case 2: try r.decode(tag, into: &screen)
            case 3: try r.decode(tag, into: &resumeConnection)
            case 4: try r.decode(tag, into: &disabledCodecs)
            case 5: try r.decode(tag, into: &forceRelay)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "video", video)
            v.field(2, "screen", screen)
            v.field(3, "resume_connection", resumeConnection)
            v.field(4, "disabled_codecs", disabledCodecs)
            v.field(5, "force_relay", forceRelay)
            v.unknown(unknownFields)
        }
    }

    /// One participant's speaking state. In `speakers_changed` these are deltas:
    /// `active == false` means stopped speaking.
    public struct SpeakerInfo: ProtoMessage {
        public var sid = ""
        /// 0 … 1, 1 loudest.
        public var level: Float = 0
        public var active = false
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &sid)
            case 2: try r.decode(tag, into: &level)
            case 3: try r.decode(tag, into: &active)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "sid", sid)
            v.field(2, "level", level)
            v.field(3, "active", active)
            v.unknown(unknownFields)
        }
    }
}

// Join, negotiation, ICE, leave and keepalive messages from livekit_rtc.proto.
// Field tables: livekit-protocol.md §2.2, §2.6–§2.8.

extension LiveKit {
    /// The first message of a fresh join.
    public struct JoinResponse: ProtoMessage {
        public var room: Room?
        /// Our own participant (its `sid` is needed to resume).
        public var participant: ParticipantInfo?
        public var otherParticipants: [ParticipantInfo] = []
        /// Deprecated; see `serverInfo.version`.
        public var serverVersion = ""
        public var iceServers: [ICEServer] = []
        /// True ⇒ the server offers on the SUBSCRIBER PC, which is the one that must connect.
        public var subscriberPrimary = false
        public var alternativeURL = ""
        public var clientConfiguration: ClientConfiguration?
        /// Deprecated; see `serverInfo.region`.
        public var serverRegion = ""
        /// Seconds without any message before the connection counts as dead (0 = none).
        public var pingTimeout: Int32 = 0
        /// Seconds between our pings (0 = don't ping).
        public var pingInterval: Int32 = 0
        public var serverInfo: ServerInfo?
        public var sifTrailer: [UInt8] = []
        public var enabledPublishCodecs: [Codec] = []
        public var fastPublish = false
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &room)
            case 2: try r.decode(tag, into: &participant)
            case 3: try r.decode(tag, into: &otherParticipants)
            case 4: try r.decode(tag, into: &serverVersion)
            case 5: try r.decode(tag, into: &iceServers)
            case 6: try r.decode(tag, into: &subscriberPrimary)
            case 7: try r.decode(tag, into: &alternativeURL)
            case 8: try r.decode(tag, into: &clientConfiguration)
            case 9: try r.decode(tag, into: &serverRegion)
            case 10: try r.decode(tag, into: &pingTimeout)
            case 11: try r.decode(tag, into: &pingInterval)
            case 12: try r.decode(tag, into: &serverInfo)
            case 13: try r.decode(tag, into: &sifTrailer)
            case 14: try r.decode(tag, into: &enabledPublishCodecs)
            case 15: try r.decode(tag, into: &fastPublish)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "room", room)
            v.field(2, "participant", participant)
            v.field(3, "other_participants", otherParticipants)
            v.field(4, "server_version", serverVersion)
            v.field(5, "ice_servers", iceServers)
            v.field(6, "subscriber_primary", subscriberPrimary)
            v.field(7, "alternative_url", alternativeURL)
            v.field(8, "client_configuration", clientConfiguration)
            v.field(9, "server_region", serverRegion)
            v.field(10, "ping_timeout", pingTimeout)
            v.field(11, "ping_interval", pingInterval)
            v.field(12, "server_info", serverInfo)
            v.field(13, "sif_trailer", sifTrailer)
            v.field(14, "enabled_publish_codecs", enabledPublishCodecs)
            v.field(15, "fast_publish", fastPublish)
            v.unknown(unknownFields)
        }
    }

    /// The first message after a successful resume (`reconnect=1`).
    public struct ReconnectResponse: ProtoMessage {
        public var iceServers: [ICEServer] = []
        public var clientConfiguration: ClientConfiguration?
        public var serverInfo: ServerInfo?
        /// Last reliable data sequence the server received from us.
        public var lastMessageSeq: UInt32 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &iceServers)
            case 2: try r.decode(tag, into: &clientConfiguration)
            case 3: try r.decode(tag, into: &serverInfo)
            case 4: try r.decode(tag, into: &lastMessageSeq)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "ice_servers", iceServers)
            v.field(2, "client_configuration", clientConfiguration)
            v.field(3, "server_info", serverInfo)
            v.field(4, "last_message_seq", lastMessageSeq)
            v.unknown(unknownFields)
        }
    }

    /// A STUN/TURN server. `description` never shows the credential.
    public struct ICEServer: ProtoMessage, CustomStringConvertible {
        public var urls: [String] = []
        public var username = ""
        public var credential = ""
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &urls)
            case 2: try r.decode(tag, into: &username)
            case 3: try r.decode(tag, into: &credential)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "urls", urls)
            v.field(2, "username", username)
            v.field(3, "credential", credential)
            v.unknown(unknownFields)
        }

        public var description: String {
            "ICEServer(urls: \(urls), username: \(username.isEmpty ? "none" : "set"), credential: \(credential.isEmpty ? "none" : Redact.mask))"
        }
    }

    /// An SDP offer or answer. Answers echo the offer's `id` (0 = legacy server).
    public struct SessionDescription: ProtoMessage {
        /// "offer", "answer", "pranswer" or "rollback".
        public var type = ""
        public var sdp = ""
        public var id: UInt32 = 0
        /// mid → track SID for media sections the sender is sending.
        public var midToTrackID: [String: String] = [:]
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(type: String, sdp: String, id: UInt32 = 0) {
            self.type = type
            self.sdp = sdp
            self.id = id
        }

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &type)
            case 2: try r.decode(tag, into: &sdp)
            case 3: try r.decode(tag, into: &id)
            case 4: try r.decode(tag, into: &midToTrackID)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "type", type)
            v.field(2, "sdp", sdp)
            v.field(3, "id", id)
            v.field(4, "mid_to_track_id", midToTrackID)
            v.unknown(unknownFields)
        }
    }

    /// One ICE candidate. `candidateInit` is JSON text (see ``ICECandidateInit``);
    /// `target` names the *client's* PC in both directions.
    public struct TrickleRequest: ProtoMessage {
        public var candidateInit = ""
        public var target: SignalTarget = .publisher
        /// Set by the server on the last candidate of a gathering round; ignored.
        public var isFinal = false
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(candidateInit: String, target: SignalTarget) {
            self.candidateInit = candidateInit
            self.target = target
        }

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &candidateInit)
            case 2: try r.decode(tag, into: &target)
            case 3: try r.decode(tag, into: &isFinal)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "candidateInit", candidateInit)
            v.field(2, "target", target)
            v.field(3, "final", isFinal)
            v.unknown(unknownFields)
        }
    }

    /// Leave, in both directions. From the server, `action` (protocol >= 13) says what
    /// to do; older servers only set `canReconnect` (§5.4).
    public struct LeaveRequest: ProtoMessage {
        public var canReconnect = false
        public var reason: DisconnectReason = .unknownReason
        public var action: Action = .disconnect
        public var regions: RegionSettings?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(reason: DisconnectReason, action: Action = .disconnect) {
            self.reason = reason
            self.action = action
        }

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &canReconnect)
            case 2: try r.decode(tag, into: &reason)
            case 3: try r.decode(tag, into: &action)
            case 4: try r.decode(tag, into: &regions)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "can_reconnect", canReconnect)
            v.field(2, "reason", reason)
            v.field(3, "action", action)
            v.field(4, "regions", regions)
            v.unknown(unknownFields)
        }
    }

    public struct RegionSettings: ProtoMessage {
        public var regions: [RegionInfo] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &regions)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "regions", regions)
            v.unknown(unknownFields)
        }
    }

    public struct RegionInfo: ProtoMessage {
        public var region = ""
        public var url = ""
        public var distance: Int64 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &region)
            case 2: try r.decode(tag, into: &url)
            case 3: try r.decode(tag, into: &distance)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "region", region)
            v.field(2, "url", url)
            v.field(3, "distance", distance)
            v.unknown(unknownFields)
        }
    }

    /// Sent after a resume so the server can check our view of the session (§5.2).
    /// `publish_data_tracks` (8) and `data_subscription` (9) are not modelled.
    public struct SyncState: ProtoMessage {
        /// Dual PC: our last SUBSCRIBER answer.
        public var answer: SessionDescription?
        public var subscription: UpdateSubscription?
        public var publishTracks: [TrackPublishedResponse] = []
        public var dataChannels: [DataChannelInfo] = []
        /// Dual PC: the last server offer we received.
        public var offer: SessionDescription?
        public var trackSidsDisabled: [String] = []
        public var dataChannelReceiveStates: [DataChannelReceiveState] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &answer)
            case 2: try r.decode(tag, into: &subscription)
            case 3: try r.decode(tag, into: &publishTracks)
            case 4: try r.decode(tag, into: &dataChannels)
            case 5: try r.decode(tag, into: &offer)
            case 6: try r.decode(tag, into: &trackSidsDisabled)
            case 7: try r.decode(tag, into: &dataChannelReceiveStates)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "answer", answer)
            v.field(2, "subscription", subscription)
            v.field(3, "publish_tracks", publishTracks)
            v.field(4, "data_channels", dataChannels)
            v.field(5, "offer", offer)
            v.field(6, "track_sids_disabled", trackSidsDisabled)
            v.field(7, "datachannel_receive_states", dataChannelReceiveStates)
            v.unknown(unknownFields)
        }
    }

    public struct DataChannelInfo: ProtoMessage {
        public var label = ""
        public var id: UInt32 = 0
        public var target: SignalTarget = .publisher
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(label: String, id: UInt32, target: SignalTarget) {
            self.label = label
            self.id = id
            self.target = target
        }

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &label)
            case 2: try r.decode(tag, into: &id)
            case 3: try r.decode(tag, into: &target)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "label", label)
            v.field(2, "id", id)
            v.field(3, "target", target)
            v.unknown(unknownFields)
        }
    }

    /// Last reliable sequence received from one publisher.
    public struct DataChannelReceiveState: ProtoMessage {
        public var publisherSid = ""
        public var lastSeq: UInt32 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(publisherSid: String, lastSeq: UInt32) {
            self.publisherSid = publisherSid
            self.lastSeq = lastSeq
        }

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &publisherSid)
            case 2: try r.decode(tag, into: &lastSeq)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "publisher_sid", publisherSid)
            v.field(2, "last_seq", lastSeq)
            v.unknown(unknownFields)
        }
    }

    /// `ping_req`: our clock in ms and the last measured RTT.
    public struct Ping: ProtoMessage {
        public var timestamp: Int64 = 0
        public var rtt: Int64 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(timestamp: Int64, rtt: Int64 = 0) {
            self.timestamp = timestamp
            self.rtt = rtt
        }

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &timestamp)
            case 2: try r.decode(tag, into: &rtt)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "timestamp", timestamp)
            v.field(2, "rtt", rtt)
            v.unknown(unknownFields)
        }
    }

    /// `pong_resp`: echo of our ping timestamp plus the server clock.
    public struct Pong: ProtoMessage {
        public var lastPingTimestamp: Int64 = 0
        public var timestamp: Int64 = 0
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &lastPingTimestamp)
            case 2: try r.decode(tag, into: &timestamp)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "last_ping_timestamp", lastPingTimestamp)
            v.field(2, "timestamp", timestamp)
            v.unknown(unknownFields)
        }
    }

    /// Test hooks the server accepts from any client (§2.7).
    public struct SimulateScenario: ProtoMessage {
        public enum Scenario: Sendable, Equatable {
            /// Appear as active speaker for N seconds.
            case speakerUpdate(Int32)
            case nodeFailure(Bool)
            case migration(Bool)
            case serverLeave(Bool)
            case switchCandidateProtocol(CandidateProtocol)
            /// Downlink cap in bits per second (0 clears).
            case subscriberBandwidth(Int64)
            case disconnectSignalOnResume(Bool)
            case disconnectSignalOnResumeNoMessages(Bool)
            case leaveRequestFullReconnect(Bool)
        }

        public var scenario: Scenario?
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public init(_ scenario: Scenario) { self.scenario = scenario }

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            var flag = false
            switch tag.fieldNumber {
            case 1:
                var n: Int32 = 0
                guard try r.decode(tag, into: &n) else { return false }
                scenario = .speakerUpdate(n)
            case 2, 3, 4, 7, 8, 9:
                guard try r.decode(tag, into: &flag) else { return false }
                switch tag.fieldNumber {
                case 2: scenario = .nodeFailure(flag)
                case 3: scenario = .migration(flag)
                case 4: scenario = .serverLeave(flag)
                case 7: scenario = .disconnectSignalOnResume(flag)
                case 8: scenario = .disconnectSignalOnResumeNoMessages(flag)
                default: scenario = .leaveRequestFullReconnect(flag)
                }
            case 5:
                var p = CandidateProtocol.udp
                guard try r.decode(tag, into: &p) else { return false }
                scenario = .switchCandidateProtocol(p)
            case 6:
                var bps: Int64 = 0
                guard try r.decode(tag, into: &bps) else { return false }
                scenario = .subscriberBandwidth(bps)
            default:
                return false
            }
            return true
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            switch scenario {
            case .speakerUpdate(let n): v.field(1, "speaker_update", Optional(n))
            case .nodeFailure(let b): v.field(2, "node_failure", Optional(b))
            case .migration(let b): v.field(3, "migration", Optional(b))
            case .serverLeave(let b): v.field(4, "server_leave", Optional(b))
            case .switchCandidateProtocol(let p): v.field(5, "switch_candidate_protocol", Optional(p))
            case .subscriberBandwidth(let n): v.field(6, "subscriber_bandwidth", Optional(n))
            case .disconnectSignalOnResume(let b): v.field(7, "disconnect_signal_on_resume", Optional(b))
            case .disconnectSignalOnResumeNoMessages(let b): v.field(8, "disconnect_signal_on_resume_no_messages", Optional(b))
            case .leaveRequestFullReconnect(let b): v.field(9, "leave_request_full_reconnect", Optional(b))
            case nil: break
            }
            v.unknown(unknownFields)
        }
    }

    /// Moved to another room (protocol >= 16): a new join state and a new token.
    /// `description` never shows the token.
    public struct RoomMovedResponse: ProtoMessage, CustomStringConvertible {
        public var room: Room?
        public var token = ""
        public var participant: ParticipantInfo?
        public var otherParticipants: [ParticipantInfo] = []
        public var unknownFields = ProtoUnknownFields()
        public init() {}

        public mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &room)
            case 2: try r.decode(tag, into: &token)
            case 3: try r.decode(tag, into: &participant)
            case 4: try r.decode(tag, into: &otherParticipants)
            default: false
            }
        }

        public func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "room", room)
            v.field(2, "token", token)
            v.field(3, "participant", participant)
            v.field(4, "other_participants", otherParticipants)
            v.unknown(unknownFields)
        }

        public var description: String {
            "RoomMovedResponse(room: \(room?.name ?? "?"), participant: \(participant?.identity ?? "?"), others: \(otherParticipants.count), token: \(Redact.mask))"
        }
    }
}

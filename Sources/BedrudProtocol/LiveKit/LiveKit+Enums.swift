// Enums of the LiveKit schema (livekit_models.proto, livekit_rtc.proto), as Swift enums
// that tolerate numbers they do not know: `init(rawValue:)` never fails, an unknown
// number becomes `.unrecognized(n)` and encodes back to `n`. Case names are the .proto
// value names in lowerCamelCase with the value-name prefix (TF_, SE_, RR_, CAP_, PTF_)
// dropped. Numbers: livekit-protocol-reference §2 and the official package's
// descriptors (checked by the conformance fixtures).

extension LiveKit {
    /// Which of the *client's* peer connections a candidate or channel belongs to.
    public enum SignalTarget: ProtoEnum {
        case publisher, subscriber
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .publisher
            case 1: self = .subscriber
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .publisher: 0
            case .subscriber: 1
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// Whether the SFU is forwarding a subscribed stream.
    public enum StreamState: ProtoEnum {
        case active, paused
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .active
            case 1: self = .paused
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .active: 0
            case .paused: 1
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// Transport preference for `SimulateScenario.switch_candidate_protocol`.
    public enum CandidateProtocol: ProtoEnum {
        case udp, tcp, tls
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .udp
            case 1: self = .tcp
            case 2: self = .tls
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .udp: 0
            case .tcp: 1
            case .tls: 2
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.LeaveRequest {
    /// What the server wants after a `leave` (protocol >= 13; 0 on older servers).
    public enum Action: ProtoEnum {
        case disconnect, resume, reconnect
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .disconnect
            case 1: self = .resume
            case 2: self = .reconnect
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .disconnect: 0
            case .resume: 1
            case .reconnect: 2
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.RequestResponse {
    /// Outcome of a request that carried a `request_id`.
    public enum Reason: ProtoEnum {
        case ok, notFound, notAllowed, limitExceeded, queued, unsupportedType, unclassifiedError, invalidHandle, invalidName, duplicateHandle, duplicateName, invalidRequest
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .ok
            case 1: self = .notFound
            case 2: self = .notAllowed
            case 3: self = .limitExceeded
            case 4: self = .queued
            case 5: self = .unsupportedType
            case 6: self = .unclassifiedError
            case 7: self = .invalidHandle
            case 8: self = .invalidName
            case 9: self = .duplicateHandle
            case 10: self = .duplicateName
            case 11: self = .invalidRequest
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .ok: 0
            case .notFound: 1
            case .notAllowed: 2
            case .limitExceeded: 3
            case .queued: 4
            case .unsupportedType: 5
            case .unclassifiedError: 6
            case .invalidHandle: 7
            case .invalidName: 8
            case .duplicateHandle: 9
            case .duplicateName: 10
            case .invalidRequest: 11
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.WrappedJoinRequest {
    /// Compression of the serialized `JoinRequest`.
    public enum Compression: ProtoEnum {
        case uncompressed, gzip
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .uncompressed
            case 1: self = .gzip
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .uncompressed: 0
            case .gzip: 1
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// How a publisher uses its backup codec.
    public enum BackupCodecPolicy: ProtoEnum {
        case preferRegression, simulcast, regression
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .preferRegression
            case 1: self = .simulcast
            case 2: self = .regression
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .preferRegression: 0
            case .simulcast: 1
            case .regression: 2
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// Media kind of a track.
    public enum TrackType: ProtoEnum {
        case audio, video, data
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .audio
            case 1: self = .video
            case 2: self = .data
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .audio: 0
            case .video: 1
            case .data: 2
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// Where a track comes from on the publisher side.
    public enum TrackSource: ProtoEnum {
        case unknown, camera, microphone, screenShare, screenShareAudio
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .unknown
            case 1: self = .camera
            case 2: self = .microphone
            case 3: self = .screenShare
            case 4: self = .screenShareAudio
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .unknown: 0
            case .camera: 1
            case .microphone: 2
            case .screenShare: 3
            case .screenShareAudio: 4
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// Simulcast layer quality.
    public enum VideoQuality: ProtoEnum {
        case low, medium, high, off
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .low
            case 1: self = .medium
            case 2: self = .high
            case 3: self = .off
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .low: 0
            case .medium: 1
            case .high: 2
            case .off: 3
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// The server's rating of a participant's connection.
    public enum ConnectionQuality: ProtoEnum {
        case poor, good, excellent, lost
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .poor
            case 1: self = .good
            case 2: self = .excellent
            case 3: self = .lost
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .poor: 0
            case .good: 1
            case .excellent: 2
            case .lost: 3
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// A tri-state client setting pushed by the server.
    public enum ClientConfigSetting: ProtoEnum {
        case unset, disabled, enabled
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .unset
            case 1: self = .disabled
            case 2: self = .enabled
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .unset: 0
            case .disabled: 1
            case .enabled: 2
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// Why a participant left or was removed.
    public enum DisconnectReason: ProtoEnum {
        case unknownReason, clientInitiated, duplicateIdentity, serverShutdown, participantRemoved, roomDeleted, stateMismatch, joinFailure, migration, signalClose, roomClosed, userUnavailable, userRejected, sipTrunkFailure, connectionTimeout, mediaFailure, agentError
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .unknownReason
            case 1: self = .clientInitiated
            case 2: self = .duplicateIdentity
            case 3: self = .serverShutdown
            case 4: self = .participantRemoved
            case 5: self = .roomDeleted
            case 6: self = .stateMismatch
            case 7: self = .joinFailure
            case 8: self = .migration
            case 9: self = .signalClose
            case 10: self = .roomClosed
            case 11: self = .userUnavailable
            case 12: self = .userRejected
            case 13: self = .sipTrunkFailure
            case 14: self = .connectionTimeout
            case 15: self = .mediaFailure
            case 16: self = .agentError
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .unknownReason: 0
            case .clientInitiated: 1
            case .duplicateIdentity: 2
            case .serverShutdown: 3
            case .participantRemoved: 4
            case .roomDeleted: 5
            case .stateMismatch: 6
            case .joinFailure: 7
            case .migration: 8
            case .signalClose: 9
            case .roomClosed: 10
            case .userUnavailable: 11
            case .userRejected: 12
            case .sipTrunkFailure: 13
            case .connectionTimeout: 14
            case .mediaFailure: 15
            case .agentError: 16
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// Why the client resumes (`reconnect_reason` query parameter / JoinRequest field).
    public enum ReconnectReason: ProtoEnum {
        case unknown, signalDisconnected, publisherFailed, subscriberFailed, switchCandidate
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .unknown
            case 1: self = .signalDisconnected
            case 2: self = .publisherFailed
            case 3: self = .subscriberFailed
            case 4: self = .switchCandidate
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .unknown: 0
            case .signalDisconnected: 1
            case .publisherFailed: 2
            case .subscriberFailed: 3
            case .switchCandidate: 4
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// Why a subscription failed.
    public enum SubscriptionError: ProtoEnum {
        case unknown, codecUnsupported, trackNotFound
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .unknown
            case 1: self = .codecUnsupported
            case 2: self = .trackNotFound
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .unknown: 0
            case .codecUnsupported: 1
            case .trackNotFound: 2
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// Audio processing features a publisher announces.
    public enum AudioTrackFeature: ProtoEnum {
        case stereo, noDtx, autoGainControl, echoCancellation, noiseSuppression, enhancedNoiseCancellation, preconnectBuffer
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .stereo
            case 1: self = .noDtx
            case 2: self = .autoGainControl
            case 3: self = .echoCancellation
            case 4: self = .noiseSuppression
            case 5: self = .enhancedNoiseCancellation
            case 6: self = .preconnectBuffer
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .stereo: 0
            case .noDtx: 1
            case .autoGainControl: 2
            case .echoCancellation: 3
            case .noiseSuppression: 4
            case .enhancedNoiseCancellation: 5
            case .preconnectBuffer: 6
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// RTP packet trailer features.
    public enum PacketTrailerFeature: ProtoEnum {
        case userTimestamp, frameId, userData
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .userTimestamp
            case 1: self = .frameId
            case 2: self = .userData
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .userTimestamp: 0
            case .frameId: 1
            case .userData: 2
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.ParticipantInfo {
    /// Session state of a participant.
    public enum State: ProtoEnum {
        case joining, joined, active, disconnected
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .joining
            case 1: self = .joined
            case 2: self = .active
            case 3: self = .disconnected
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .joining: 0
            case .joined: 1
            case .active: 2
            case .disconnected: 3
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.ParticipantInfo {
    /// What kind of client a participant is (token `kind` claim).
    public enum Kind: ProtoEnum {
        case standard, ingress, egress, sip, agent, connector, bridge
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .standard
            case 1: self = .ingress
            case 2: self = .egress
            case 3: self = .sip
            case 4: self = .agent
            case 7: self = .connector
            case 8: self = .bridge
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .standard: 0
            case .ingress: 1
            case .egress: 2
            case .sip: 3
            case .agent: 4
            case .connector: 7
            case .bridge: 8
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.ParticipantInfo {
    /// Finer classification of a participant kind.
    public enum KindDetail: ProtoEnum {
        case cloudAgent, forwarded, connectorWhatsapp, connectorTwilio, bridgeRtsp, simulation
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .cloudAgent
            case 1: self = .forwarded
            case 2: self = .connectorWhatsapp
            case 3: self = .connectorTwilio
            case 4: self = .bridgeRtsp
            case 5: self = .simulation
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .cloudAgent: 0
            case .forwarded: 1
            case .connectorWhatsapp: 2
            case .connectorTwilio: 3
            case .bridgeRtsp: 4
            case .simulation: 5
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit {
    /// End-to-end encryption scheme (`Encryption.Type`).
    public enum EncryptionType: ProtoEnum {
        case unencrypted, gcm, custom
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .unencrypted
            case 1: self = .gcm
            case 2: self = .custom
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .unencrypted: 0
            case .gcm: 1
            case .custom: 2
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.VideoLayer {
    /// How simulcast layers map to RTP streams.
    public enum Mode: ProtoEnum {
        case unused, oneSpatialLayerPerStream, multipleSpatialLayersPerStream, oneSpatialLayerPerStreamIncompleteRTCPSR
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .unused
            case 1: self = .oneSpatialLayerPerStream
            case 2: self = .multipleSpatialLayersPerStream
            case 3: self = .oneSpatialLayerPerStreamIncompleteRTCPSR
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .unused: 0
            case .oneSpatialLayerPerStream: 1
            case .multipleSpatialLayersPerStream: 2
            case .oneSpatialLayerPerStreamIncompleteRTCPSR: 3
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.DataPacket {
    /// Data channel a packet travelled on (the server overwrites it).
    public enum Kind: ProtoEnum {
        case reliable, lossy
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .reliable
            case 1: self = .lossy
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .reliable: 0
            case .lossy: 1
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.ServerInfo {
    /// Open-source or LiveKit Cloud.
    public enum Edition: ProtoEnum {
        case standard, cloud
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .standard
            case 1: self = .cloud
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .standard: 0
            case .cloud: 1
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.ClientInfo {
    /// Which SDK a client says it is.
    public enum SDK: ProtoEnum {
        case unknown, js, swift, android, flutter, go, unity, reactNative, rust, python, cpp, unityWeb, node, unreal, esp32, dotnet
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .unknown
            case 1: self = .js
            case 2: self = .swift
            case 3: self = .android
            case 4: self = .flutter
            case 5: self = .go
            case 6: self = .unity
            case 7: self = .reactNative
            case 8: self = .rust
            case 9: self = .python
            case 10: self = .cpp
            case 11: self = .unityWeb
            case 12: self = .node
            case 13: self = .unreal
            case 14: self = .esp32
            case 15: self = .dotnet
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .unknown: 0
            case .js: 1
            case .swift: 2
            case .android: 3
            case .flutter: 4
            case .go: 5
            case .unity: 6
            case .reactNative: 7
            case .rust: 8
            case .python: 9
            case .cpp: 10
            case .unityWeb: 11
            case .node: 12
            case .unreal: 13
            case .esp32: 14
            case .dotnet: 15
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.ClientInfo {
    /// Optional client capabilities.
    public enum Capability: ProtoEnum {
        case unused, packetTrailer, compressionDeflateRaw
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .unused
            case 1: self = .packetTrailer
            case 2: self = .compressionDeflateRaw
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .unused: 0
            case .packetTrailer: 1
            case .compressionDeflateRaw: 2
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.DataStream {
    /// What a text stream does to earlier streams.
    public enum OperationType: ProtoEnum {
        case create, update, delete, reaction
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .create
            case 1: self = .update
            case 2: self = .delete
            case 3: self = .reaction
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .create: 0
            case .update: 1
            case .delete: 2
            case .reaction: 3
            case .unrecognized(let value): value
            }
        }
    }
}

extension LiveKit.DataStream {
    /// Compression of data-stream content.
    public enum CompressionType: ProtoEnum {
        case uncompressed, deflateRaw
        /// A number this schema does not know; kept so it round-trips.
        case unrecognized(Int32)

        public init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .uncompressed
            case 1: self = .deflateRaw
            default: self = .unrecognized(rawValue)
            }
        }

        public var rawValue: Int32 {
            switch self {
            case .uncompressed: 0
            case .deflateRaw: 1
            case .unrecognized(let value): value
            }
        }
    }
}

import BedrudProtocol

/// A participant of the room: the bot itself (`isLocal`) or a remote one. Remote
/// participants are keyed by `identity` (stable across reconnects); `sid` changes on
/// every full reconnect of that identity.
public struct MeetingParticipant: Sendable, Equatable, Identifiable {
    public var identity: String
    /// `PA_…`
    public var sid: String
    public var name: String
    /// Raw participant metadata (Bedrud: a JSON object with `accesses`).
    public var metadata: String
    /// Bedrud's reading of `metadata`: accesses (`moderator`, …), chat block, deafen.
    public var bedrud: BedrudParticipantMetadata
    public var attributes: [String: String]
    public var state: LiveKit.ParticipantInfo.State
    public var kind: LiveKit.ParticipantInfo.Kind
    public var isLocal: Bool
    /// The `ParticipantInfo.version` last applied (per SID).
    public var version: UInt32
    /// Unix milliseconds (from `joined_at_ms`, else `joined_at` × 1000).
    public var joinedAtMs: Int64
    /// Published tracks in publication order.
    public var tracks: [MeetingTrack]
    public var isSpeaking: Bool
    /// 0 … 1 while speaking, else 0.
    public var audioLevel: Float
    /// Unknown until the first `connection_quality` update naming this participant.
    public var connectionQuality: LiveKit.ConnectionQuality?
    public var canPublish: Bool

    public var id: String { identity }
    /// Bedrud access levels from the metadata, e.g. `["user", "moderator"]`.
    public var accesses: [String] { bedrud.accesses }

    public init(
        identity: String, sid: String, name: String = "", metadata: String = "", attributes: [String: String] = [:],
        state: LiveKit.ParticipantInfo.State = .active, kind: LiveKit.ParticipantInfo.Kind = .standard,
        isLocal: Bool = false, version: UInt32 = 0, joinedAtMs: Int64 = 0, tracks: [MeetingTrack] = [],
        isSpeaking: Bool = false, audioLevel: Float = 0, connectionQuality: LiveKit.ConnectionQuality? = nil,
        canPublish: Bool = false
    ) {
        self.identity = identity
        self.sid = sid
        self.name = name
        self.metadata = metadata
        self.bedrud = BedrudParticipantMetadata(json: metadata)
        self.attributes = attributes
        self.state = state
        self.kind = kind
        self.isLocal = isLocal
        self.version = version
        self.joinedAtMs = joinedAtMs
        self.tracks = tracks
        self.isSpeaking = isSpeaking
        self.audioLevel = audioLevel
        self.connectionQuality = connectionQuality
        self.canPublish = canPublish
    }

    /// A participant as `info` describes it (speaking and quality start unknown).
    public init(_ info: LiveKit.ParticipantInfo, isLocal: Bool) {
        self.init(
            identity: info.identity, sid: info.sid, name: info.name, metadata: info.metadata,
            attributes: info.attributes, state: info.state, kind: info.kind, isLocal: isLocal, version: info.version,
            joinedAtMs: info.joinedAtMs != 0 ? info.joinedAtMs : info.joinedAt &* 1000,
            tracks: info.tracks.map(MeetingTrack.init), canPublish: info.permission?.canPublish ?? false)
    }

    /// The track with `sid`, if published.
    public func track(_ sid: String) -> MeetingTrack? { tracks.first { $0.sid == sid } }
}

/// What changed in a participant update (besides tracks, which get their own events).
public struct ParticipantChanges: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let name = ParticipantChanges(rawValue: 1 << 0)
    public static let metadata = ParticipantChanges(rawValue: 1 << 1)
    public static let attributes = ParticipantChanges(rawValue: 1 << 2)
    public static let state = ParticipantChanges(rawValue: 1 << 3)
    public static let permission = ParticipantChanges(rawValue: 1 << 4)
}

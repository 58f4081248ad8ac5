import BedrudProtocol

/// The LiveKit room as the state machine knows it. `sid` may be "" until a
/// `room_update` delivers it (protocol >= 12); do not use it as a key before that.
public struct MeetingRoom: Sendable, Equatable {
    public var sid: String
    public var name: String
    public var metadata: String
    /// Non-dependent participants, as the server counts them.
    public var numParticipants: UInt32
    public var numPublishers: UInt32
    public var activeRecording: Bool
    public var maxParticipants: UInt32
    /// Unix milliseconds.
    public var creationTimeMs: Int64
    public var emptyTimeoutSeconds: UInt32
    public var departureTimeoutSeconds: UInt32

    public init(
        sid: String = "", name: String = "", metadata: String = "", numParticipants: UInt32 = 0,
        numPublishers: UInt32 = 0, activeRecording: Bool = false, maxParticipants: UInt32 = 0,
        creationTimeMs: Int64 = 0, emptyTimeoutSeconds: UInt32 = 0, departureTimeoutSeconds: UInt32 = 0
    ) {
        self.sid = sid
        self.name = name
        self.metadata = metadata
        self.numParticipants = numParticipants
        self.numPublishers = numPublishers
        self.activeRecording = activeRecording
        self.maxParticipants = maxParticipants
        self.creationTimeMs = creationTimeMs
        self.emptyTimeoutSeconds = emptyTimeoutSeconds
        self.departureTimeoutSeconds = departureTimeoutSeconds
    }

    public init(_ room: LiveKit.Room) {
        self.init(
            sid: room.sid, name: room.name, metadata: room.metadata, numParticipants: room.numParticipants,
            numPublishers: room.numPublishers, activeRecording: room.activeRecording,
            maxParticipants: room.maxParticipants,
            creationTimeMs: room.creationTimeMs != 0 ? room.creationTimeMs : room.creationTime &* 1000,
            emptyTimeoutSeconds: room.emptyTimeout, departureTimeoutSeconds: room.departureTimeout)
    }
}

/// One participant currently speaking.
public struct MeetingSpeaker: Sendable, Equatable {
    public var identity: String
    public var sid: String
    /// 0 … 1, 1 loudest.
    public var level: Float

    public init(identity: String, sid: String, level: Float) {
        self.identity = identity
        self.sid = sid
        self.level = level
    }
}

/// Application data received on a data channel (a LiveKit user packet).
public struct MeetingDataMessage: Sendable, Equatable {
    public var topic: String?
    /// "" when the sender is hidden or unknown.
    public var senderIdentity: String
    public var senderSid: String
    public var payload: [UInt8]
    /// True when it came on `_reliable` (ordered, retransmitted, deduplicated).
    public var reliable: Bool

    public init(topic: String?, senderIdentity: String, senderSid: String, payload: [UInt8], reliable: Bool) {
        self.topic = topic
        self.senderIdentity = senderIdentity
        self.senderSid = senderSid
        self.payload = payload
        self.reliable = reliable
    }
}

/// A chat message from Bedrud's JSON chat (topic `chat`) or LiveKit's own ChatMessage.
public struct MeetingChatMessage: Sendable, Equatable {
    public enum Origin: Sendable, Equatable {
        /// Bedrud's `{type: "chat", …}` user packet.
        case bedrud
        /// LiveKit `DataPacket.chat_message` (LiveKit SDK chat).
        case livekit
    }

    public var id: String
    /// Identity of the sender as the server asserts it (falls back to the payload's).
    public var senderIdentity: String
    /// Display name: the payload's `senderName`, else the participant's name.
    public var senderName: String
    public var text: String
    /// Sender's timestamp, Unix ms (0 if none).
    public var timestampMs: Int64
    public var attachments: [BedrudChatPayload.Attachment]
    public var origin: Origin
    /// The poll the message carries (Bedrud web v0.12), if any.
    public var poll: BedrudChatPoll?

    public init(
        id: String, senderIdentity: String, senderName: String, text: String, timestampMs: Int64,
        attachments: [BedrudChatPayload.Attachment] = [], origin: Origin = .bedrud, poll: BedrudChatPoll? = nil
    ) {
        self.poll = poll
        self.id = id
        self.senderIdentity = senderIdentity
        self.senderName = senderName
        self.text = text
        self.timestampMs = timestampMs
        self.attachments = attachments
        self.origin = origin
    }
}

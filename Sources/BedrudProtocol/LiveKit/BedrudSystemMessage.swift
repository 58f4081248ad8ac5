import FoundationEssentials

/// A moderation notice Bedrud's server sends as a reliable user packet on topic
/// `system` (bedrud-api.md §3.2): `{type: "system", event, actor, target}` where
/// `actor` is the moderator's user id and `target` the affected identity.
///
/// Bedrud v0.12 adds room-end notices `{type: "system", event: room_ended|room_closed|
/// room_archived|room_deleted, message, deletedIdentity?}` (server/internal/lkutil/lkutil.go
/// `SystemMessage`) and the web client's `stage` lines `{event: "stage", actor?, message}`
/// (MeetingContext.tsx, the `system` topic branch).
///
/// `kick` and `ban` arrive *after* the target was removed, so the target never sees
/// its own; the others see it. `deafen`, `undeafen`, `ask_*` go to the target only.
public struct BedrudSystemMessage: Sendable, Equatable {
    public enum Event: Sendable, Equatable, CustomStringConvertible {
        case kick, ban, spotlight, deafen, undeafen, askUnmute, askCamera
        /// The room is over (lkutil.go; the web client leaves the meeting on each).
        case roomEnded, roomClosed, roomArchived, roomDeleted
        /// A stage share line (YouTube, whiteboard, screen share…) with free text.
        case stage
        /// An event name this version does not know, kept verbatim.
        case other(String)

        public init(name: String) {
            switch name {
            case "kick": self = .kick
            case "ban": self = .ban
            case "spotlight": self = .spotlight
            case "deafen": self = .deafen
            case "undeafen": self = .undeafen
            case "ask_unmute": self = .askUnmute
            case "ask_camera": self = .askCamera
            case "room_ended": self = .roomEnded
            case "room_closed": self = .roomClosed
            case "room_archived": self = .roomArchived
            case "room_deleted": self = .roomDeleted
            case "stage": self = .stage
            default: self = .other(name)
            }
        }

        /// The wire name (`ask_unmute`, …).
        public var name: String {
            switch self {
            case .kick: "kick"
            case .ban: "ban"
            case .spotlight: "spotlight"
            case .deafen: "deafen"
            case .undeafen: "undeafen"
            case .askUnmute: "ask_unmute"
            case .askCamera: "ask_camera"
            case .roomEnded: "room_ended"
            case .roomClosed: "room_closed"
            case .roomArchived: "room_archived"
            case .roomDeleted: "room_deleted"
            case .stage: "stage"
            case .other(let name): name
            }
        }

        public var description: String { name }

        /// One of the four notices that end the meeting for everyone (the web client's
        /// `ROOM_DELETION_EVENTS`).
        public var endsRoom: Bool {
            switch self {
            case .roomEnded, .roomClosed, .roomArchived, .roomDeleted: true
            default: false
            }
        }
    }

    public var event: Event
    /// The moderator's Bedrud user id ("" when absent).
    public var actor: String
    /// The affected participant identity ("" when absent).
    public var target: String
    /// A sender timestamp if one was included (Bedrud's server sends none).
    public var timestampMs: Int64?
    /// The server's or sender's text ("" when absent): why the room ended, a stage line.
    public var message: String
    /// With `room_deleted`: the identity whose account was deleted ("" when absent).
    public var deletedIdentity: String

    public init(event: Event, actor: String, target: String, timestampMs: Int64? = nil, message: String = "", deletedIdentity: String = "") {
        self.event = event
        self.actor = actor
        self.target = target
        self.timestampMs = timestampMs
        self.message = message
        self.deletedIdentity = deletedIdentity
    }

    public static let topic = "system"

    /// Decodes a user packet on topic `system`; nil for anything else, for a JSON
    /// `type` other than `system`, or for a missing/empty `event`.
    public init?(topic: String?, payload: [UInt8]) {
        guard topic == Self.topic, !payload.isEmpty, payload.count <= BedrudChatPayload.maxPayloadBytes,
              let wire = try? JSONDecoder().decode(Wire.self, from: Data(payload)),
              wire.type == nil || wire.type == "system",
              let event = wire.event, !event.isEmpty
        else { return nil }
        self.event = Event(name: event)
        actor = wire.actor ?? ""
        target = wire.target ?? ""
        timestampMs = wire.ts
        message = wire.message ?? ""
        deletedIdentity = wire.deletedIdentity ?? ""
    }

    private struct Wire: Decodable {
        var type: String?
        var event: String?
        var actor: String?
        var target: String?
        var ts: Int64?
        var message: String?
        var deletedIdentity: String?

        enum CodingKeys: String, CodingKey { case type, event, actor, target, ts, message, deletedIdentity }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            type = try? c.decodeIfPresent(String.self, forKey: .type)
            event = try? c.decodeIfPresent(String.self, forKey: .event)
            actor = LenientJSON.string(c, .actor)
            target = try? c.decodeIfPresent(String.self, forKey: .target)
            ts = LenientJSON.int64(c, .ts)
            message = try? c.decodeIfPresent(String.self, forKey: .message)
            deletedIdentity = try? c.decodeIfPresent(String.self, forKey: .deletedIdentity)
        }
    }
}

/// Bedrud's participant metadata (bedrud-api.md §3.3): a JSON object string with
/// `accesses` (e.g. `["user","moderator"]`), optionally `chatBlocked`, `deafened`,
/// `avatarUrl`. Anything unparsable reads as empty.
public struct BedrudParticipantMetadata: Sendable, Equatable {
    public var accesses: [String]
    public var chatBlocked: Bool
    public var deafened: Bool
    public var avatarURL: String?

    public init(accesses: [String] = [], chatBlocked: Bool = false, deafened: Bool = false, avatarURL: String? = nil) {
        self.accesses = accesses
        self.chatBlocked = chatBlocked
        self.deafened = deafened
        self.avatarURL = avatarURL
    }

    public init(json metadata: String) {
        self.init()
        guard !metadata.isEmpty, metadata.utf8.count <= BedrudChatPayload.maxPayloadBytes,
              let wire = try? JSONDecoder().decode(Wire.self, from: Data(metadata.utf8))
        else { return }
        accesses = wire.accesses ?? []
        chatBlocked = wire.chatBlocked ?? false
        deafened = wire.deafened ?? false
        avatarURL = wire.avatarUrl
    }

    public var isModerator: Bool { accesses.contains("moderator") }

    private struct Wire: Decodable {
        var accesses: [String]?
        var chatBlocked: Bool?
        var deafened: Bool?
        var avatarUrl: String?

        enum CodingKeys: String, CodingKey { case accesses, chatBlocked, deafened, avatarUrl }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if let list = try? c.decodeIfPresent([LenientString].self, forKey: .accesses) {
                accesses = list.compactMap(\.value)
            }
            chatBlocked = try? c.decodeIfPresent(Bool.self, forKey: .chatBlocked)
            deafened = try? c.decodeIfPresent(Bool.self, forKey: .deafened)
            avatarUrl = try? c.decodeIfPresent(String.self, forKey: .avatarUrl)
        }
    }

    /// An array element that is kept only if it is a string.
    private struct LenientString: Decodable {
        var value: String?
        init(from decoder: any Decoder) throws {
            value = try? decoder.singleValueContainer().decode(String.self)
        }
    }
}

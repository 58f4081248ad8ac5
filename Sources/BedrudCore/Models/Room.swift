import BedrudProtocol
/// A room's settings object, read and written back whole.
///
/// Bedrud v0.12.0 replaces the whole `settings` object on `PUT /room/{id}/settings`
/// (handlers/room.go:2017-2021): a key left out is reset to false. So the bot keeps every
/// key it was given — the ones it knows as fields, any other in ``otherKeys`` — and
/// sends them all back. `recordingsAllowed` (models/room.go:105-107) says whether the
/// room's owner allows recording; `join --record` honours it. `isPersistent` is admin-only
/// (the server keeps its own value whatever is sent).
public struct RoomSettings: Codable, Sendable, Equatable {
    public var allowChat: Bool
    public var allowVideo: Bool
    public var allowAudio: Bool
    public var requireApproval: Bool
    public var e2ee: Bool
    public var isPersistent: Bool
    /// Whether the owner allows recording; nil when the server does not know the flag
    /// (Bedrud before v0.12.0), which the bot reads as allowed.
    public var recordingsAllowed: Bool?
    /// Keys this client does not know, kept as they came so they survive a round trip.
    public var otherKeys: [String: JSONValue]

    public init(allowChat: Bool = true, allowVideo: Bool = true, allowAudio: Bool = true, requireApproval: Bool = false, e2ee: Bool = false,
                isPersistent: Bool = false, recordingsAllowed: Bool? = nil, otherKeys: [String: JSONValue] = [:]) {
        self.allowChat = allowChat
        self.allowVideo = allowVideo
        self.allowAudio = allowAudio
        self.requireApproval = requireApproval
        self.e2ee = e2ee
        self.isPersistent = isPersistent
        self.recordingsAllowed = recordingsAllowed
        self.otherKeys = otherKeys
    }

    /// The settings `rooms create` sends: the three `allow` flags on, the rest off.
    public static let `default` = RoomSettings()

    static let knownKeys: Set<String> = ["allowChat", "allowVideo", "allowAudio", "requireApproval", "e2ee", "isPersistent", "recordingsAllowed"]

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ s: String) { stringValue = s }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        func flag(_ name: String, _ fallback: Bool) -> Bool {
            ((try? c.decodeIfPresent(Bool.self, forKey: Key(name))) ?? nil) ?? fallback
        }
        allowChat = flag("allowChat", true)
        allowVideo = flag("allowVideo", true)
        allowAudio = flag("allowAudio", true)
        requireApproval = flag("requireApproval", false)
        e2ee = flag("e2ee", false)
        isPersistent = flag("isPersistent", false)
        recordingsAllowed = (try? c.decodeIfPresent(Bool.self, forKey: Key("recordingsAllowed"))) ?? nil
        var other: [String: JSONValue] = [:]
        for key in c.allKeys where !Self.knownKeys.contains(key.stringValue) {
            if let v = try? c.decode(JSONValue.self, forKey: key) { other[key.stringValue] = v }
        }
        otherKeys = other
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        for (k, v) in otherKeys where !Self.knownKeys.contains(k) { try c.encode(v, forKey: Key(k)) }
        try c.encode(allowChat, forKey: Key("allowChat"))
        try c.encode(allowVideo, forKey: Key("allowVideo"))
        try c.encode(allowAudio, forKey: Key("allowAudio"))
        try c.encode(requireApproval, forKey: Key("requireApproval"))
        try c.encode(e2ee, forKey: Key("e2ee"))
        try c.encode(isPersistent, forKey: Key("isPersistent"))
        try c.encodeIfPresent(recordingsAllowed, forKey: Key("recordingsAllowed"))
    }
}

/// A room as `/room/list`, `/room/create`, `/room/join` and settings updates return it.
///
/// Tolerant of the server's real shapes: `create` omits `adminId` and `expiresAt`,
/// `guest-join` returns only five keys, `join` adds `token`. Only `id` and `name` are
/// required.
public struct Room: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var createdBy: String?
    public var adminId: String?
    public var isActive: Bool?
    public var isPublic: Bool?
    public var maxParticipants: Int?
    public var expiresAt: String?
    public var createdAt: String?
    public var settings: RoomSettings?
    public var mode: String?
    /// The LiveKit URL clients connect to (`<bedrud>/livekit` in embedded mode).
    public var livekitHost: String?

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }

    enum CodingKeys: String, CodingKey {
        case id, name, createdBy, adminId, isActive, isPublic, maxParticipants, expiresAt, createdAt, settings, mode, livekitHost
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        createdBy = try? c.decodeIfPresent(String.self, forKey: .createdBy)
        adminId = try? c.decodeIfPresent(String.self, forKey: .adminId)
        isActive = try? c.decodeIfPresent(Bool.self, forKey: .isActive)
        isPublic = try? c.decodeIfPresent(Bool.self, forKey: .isPublic)
        maxParticipants = try? c.decodeIfPresent(Int.self, forKey: .maxParticipants)
        expiresAt = try? c.decodeIfPresent(String.self, forKey: .expiresAt)
        createdAt = try? c.decodeIfPresent(String.self, forKey: .createdAt)
        settings = try? c.decodeIfPresent(RoomSettings.self, forKey: .settings)
        mode = try? c.decodeIfPresent(String.self, forKey: .mode)
        livekitHost = try? c.decodeIfPresent(String.self, forKey: .livekitHost)
    }
}

/// What `/room/join` and `/room/guest-join` return: the room plus a LiveKit token.
public struct JoinRoomResponse: Decodable, Sendable {
    public var room: Room
    /// LiveKit access token (JWT). A secret: never log it.
    public var token: String
    public var livekitHost: String

    enum CodingKeys: String, CodingKey { case token, livekitHost }

    public init(from decoder: any Decoder) throws {
        room = try Room(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        token = try c.decode(String.self, forKey: .token)
        livekitHost = try c.decode(String.self, forKey: .livekitHost)
    }

    public init(room: Room, token: String, livekitHost: String) {
        self.room = room
        self.token = token
        self.livekitHost = livekitHost
    }
}

/// The v0.12.0 answer to `/room/join` for the creator of a room that is no longer active
/// (handlers/room.go:436-446): `{status: "archived_owned", name, mode, settings}`, no id
/// and no token. The web client offers "Start new meeting": create a room with the same
/// name, mode and settings, then join it.
public struct ArchivedRoom: Decodable, Sendable, Equatable {
    public var name: String
    public var mode: String?
    public var settings: RoomSettings?

    public init(name: String, mode: String?, settings: RoomSettings?) {
        self.name = name
        self.mode = mode
        self.settings = settings
    }
}

/// What `/room/join` answers with a 200: a token for an active room, or — to the room's
/// creator only — the news that the meeting has ended.
public enum JoinAnswer: Decodable, Sendable {
    case joined(JoinRoomResponse)
    case archivedOwned(ArchivedRoom)

    enum CodingKeys: String, CodingKey { case status }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if ((try? c.decodeIfPresent(String.self, forKey: .status)) ?? nil) == "archived_owned" {
            self = .archivedOwned(try ArchivedRoom(from: decoder))
        } else {
            self = .joined(try JoinRoomResponse(from: decoder))
        }
    }
}

/// `POST /room/refresh-token`'s answer: `{token}` (handlers/room.go:796-849).
public struct LiveKitTokenResponse: Decodable, Sendable {
    /// LiveKit access token (JWT). A secret: never log it.
    public var token: String
}

/// Bedrud's room-name rule (`models.ValidateRoomName`), applied after trimming and
/// lowercasing: 3–63 bytes of lowercase letters, digits and single inner hyphens.
public enum RoomName {
    public static func normalize(_ s: String) -> String {
        s.trimmingWhitespaceScalars().lowercased()
    }

    /// The server's error text for an invalid name, or nil when valid.
    public static func problem(with name: String) -> String? {
        let n = normalize(name)
        if n.utf8.count < 3 { return "room name must be at least 3 characters" }
        if n.utf8.count > 63 { return "room name must be at most 63 characters" }
        let parts = n.split(separator: "-", omittingEmptySubsequences: false)
        let ok = parts.allSatisfy { p in !p.isEmpty && p.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) } }
        return ok ? nil : "room name must contain only lowercase letters, numbers, and hyphens"
    }
}

import FoundationEssentials

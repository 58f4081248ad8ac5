import BedrudProtocol
/// A room's feature flags. Bedrud stores and echoes them but enforces none.
public struct RoomSettings: Codable, Sendable, Equatable {
    public var allowChat: Bool
    public var allowVideo: Bool
    public var allowAudio: Bool
    public var requireApproval: Bool
    public var e2ee: Bool

    public init(allowChat: Bool = true, allowVideo: Bool = true, allowAudio: Bool = true, requireApproval: Bool = false, e2ee: Bool = false) {
        self.allowChat = allowChat
        self.allowVideo = allowVideo
        self.allowAudio = allowAudio
        self.requireApproval = requireApproval
        self.e2ee = e2ee
    }

    public static let `default` = RoomSettings()

    enum CodingKeys: String, CodingKey { case allowChat, allowVideo, allowAudio, requireApproval, e2ee }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        allowChat = ((try? c.decodeIfPresent(Bool.self, forKey: .allowChat)) ?? nil) ?? true
        allowVideo = ((try? c.decodeIfPresent(Bool.self, forKey: .allowVideo)) ?? nil) ?? true
        allowAudio = ((try? c.decodeIfPresent(Bool.self, forKey: .allowAudio)) ?? nil) ?? true
        requireApproval = ((try? c.decodeIfPresent(Bool.self, forKey: .requireApproval)) ?? nil) ?? false
        e2ee = ((try? c.decodeIfPresent(Bool.self, forKey: .e2ee)) ?? nil) ?? false
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

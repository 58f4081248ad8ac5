import BedrudNet
import BedrudProtocol

/// Bedrud's room endpoints, called with a valid token from an ``AuthManager``.
public struct RoomAPI: Sendable {
    public let auth: AuthManager

    public init(auth: AuthManager) { self.auth = auth }

    var api: APIClient { auth.api }

    /// `GET /room/list`: rooms created by the caller, newest first.
    public func list() async throws -> [Room] {
        let api = self.api
        return try await auth.authorized { try await api.request([Room].self, "GET", "/room/list", bearer: $0) }
    }

    /// `POST /room/create`. Bedrud ignores `maxParticipants` here (only LiveKit sees
    /// it), so a given value is applied afterwards with a settings update.
    public func create(name: String?, isPublic: Bool?, maxParticipants: Int?, mode: String? = nil, settings: RoomSettings? = nil) async throws -> Room {
        struct Body: Encodable, Sendable {
            let name: String?
            let isPublic: Bool?
            let maxParticipants: Int?
            let mode: String?
            let settings: RoomSettings?
        }
        let api = self.api
        let body = Body(name: name, isPublic: isPublic, maxParticipants: maxParticipants, mode: mode, settings: settings)
        var room = try await auth.authorized { try await api.request(Room.self, "POST", "/room/create", json: body, bearer: $0) }
        if let max = maxParticipants {
            room = try await updateSettings(roomID: room.id, isPublic: nil, maxParticipants: max, settings: nil)
        }
        return room
    }

    /// `PUT /room/{id}/settings` with the body shape the server reads
    /// (`{isPublic?, maxParticipants?, settings?}`; the iOS app's flat body is a no-op).
    public func updateSettings(roomID: String, isPublic: Bool?, maxParticipants: Int?, settings: RoomSettings?) async throws -> Room {
        struct Body: Encodable, Sendable {
            let isPublic: Bool?
            let maxParticipants: Int?
            let settings: RoomSettings?
        }
        let api = self.api
        let body = Body(isPublic: isPublic, maxParticipants: maxParticipants, settings: settings)
        return try await auth.authorized {
            try await api.request(Room.self, "PUT", "/room/\(PercentEncoding.encodeQueryComponent(roomID))/settings", json: body, bearer: $0)
        }
    }

    /// `DELETE /room/{id}`.
    public func delete(roomID: String) async throws {
        let api = self.api
        _ = try await auth.authorized { try await api.send("DELETE", "/room/\(PercentEncoding.encodeQueryComponent(roomID))", bearer: $0) }
    }

    /// `POST /room/join`: a LiveKit token for an active room by name, or — to the room's
    /// creator, when the meeting has ended — ``JoinAnswer/archivedOwned(_:)``. Others get
    /// 410 for an ended meeting and 403 for a private room they are not in (v0.12.0
    /// handlers/room.go:436-461).
    public func join(roomName: String) async throws -> JoinAnswer {
        struct Body: Encodable, Sendable { let roomName: String }
        let api = self.api
        return try await auth.authorized {
            try await api.request(JoinAnswer.self, "POST", "/room/join", json: Body(roomName: RoomName.normalize(roomName)), bearer: $0)
        }
    }

    /// `POST /room/refresh-token {roomName}` → `{token}`: a fresh LiveKit token for a room
    /// the caller is already in, for rejoins (it counts no capacity and fires no join
    /// webhook; v0.12.0 handlers/room.go:796-849). 410 when the meeting has ended, 403 when
    /// banned or no longer admitted to a private room.
    public func refreshToken(roomName: String) async throws -> String {
        struct Body: Encodable, Sendable { let roomName: String }
        let api = self.api
        return try await auth.authorized {
            try await api.request(LiveKitTokenResponse.self, "POST", "/room/refresh-token", json: Body(roomName: RoomName.normalize(roomName)), bearer: $0)
        }.token
    }

    /// `POST /room/guest-join`: no account needed; public, active rooms only.
    public static func guestJoin(api: APIClient, roomName: String, guestName: String) async throws -> JoinRoomResponse {
        struct Body: Encodable, Sendable { let roomName: String; let guestName: String }
        return try await api.request(JoinRoomResponse.self, "POST", "/room/guest-join", json: Body(roomName: RoomName.normalize(roomName), guestName: guestName))
    }

    /// Moderation: `POST /room/{id}/{action}/{identity}` (kick, ban, mute, ...).
    public func moderate(roomID: String, action: String, identity: String) async throws {
        let api = self.api
        let path = "/room/\(PercentEncoding.encodeQueryComponent(roomID))/\(action)/\(PercentEncoding.encodeQueryComponent(identity))"
        _ = try await auth.authorized { try await api.send("POST", path, bearer: $0) }
    }

    /// `POST /room/{id}/chat/upload` (multipart field `file`), as the web client sends it
    /// (v0.12.0 apps/web/src/components/meeting/ChatPanel.tsx:119-129). Any participant of
    /// the room may upload, a guest too; the server keeps the image and answers with its
    /// attachment: a `data:` URL for an image under its inline limit (512,000 bytes by
    /// default), else `/uploads/chat/{room}/{user}/{sha256}.{ext}`, a URL relative to the
    /// server (storage/chat_upload.go:290-310, 383-388; handlers/room.go:2657-2783).
    /// 403 for a non-participant or a room without chat, 413 over the server's limit, 400
    /// for a type or size it refuses, 507 when its upload quota is full.
    public func uploadChatImage(roomID: String, filename: String, mime: String, data: [UInt8]) async throws -> ChatUpload {
        let api = self.api
        var form = MultipartFormData()
        form.addFile(name: "file", filename: filename, contentType: mime, data: data)
        var req = HTTPRequest(method: "POST", url: api.url("/room/\(PercentEncoding.encodeQueryComponent(roomID))/chat/upload"))
        req.headers.set("Content-Type", form.contentType)
        req.body = form.body
        let request = req
        let resp = try await auth.authorized { try await api.send(request, bearer: $0) }
        return try api.decode(ChatUpload.self, resp, call: "POST /api/room/…/chat/upload on \(api.server.origin)")
    }

    /// The chat upload limits the web client checks before uploading (ChatInput.tsx:186-212):
    /// `chatUploadMaxBytes` and `chatUploadMaxDimension` of `GET /auth/settings`
    /// (admin_handler.go:292-336), each defaulting when the server does not say or does not
    /// answer, as the web client's do.
    public static func chatUploadLimits(api: APIClient) async -> ChatUploadLimits {
        guard let answer = try? await api.request(ChatUploadLimits.Answer.self, "GET", "/auth/settings") else { return ChatUploadLimits() }
        return ChatUploadLimits(answer)
    }
}

/// What a chat image may be: at most `maxBytes` bytes and `maxDimension` pixels wide and high.
public struct ChatUploadLimits: Sendable, Equatable {
    /// The web client's defaults (ChatInput.tsx:25-26), which are the server's too
    /// (handlers/room.go:211-214, 260-266).
    public static let defaultMaxBytes = 10 * 1024 * 1024
    public static let defaultMaxDimension = 8192

    public var maxBytes: Int
    public var maxDimension: Int

    public init(maxBytes: Int = ChatUploadLimits.defaultMaxBytes, maxDimension: Int = ChatUploadLimits.defaultMaxDimension) {
        self.maxBytes = maxBytes
        self.maxDimension = maxDimension
    }

    /// `/auth/settings`' two fields; a value that is missing, not a number or not above 0
    /// keeps the default, one above ``ceilingBytes`` is cut to it.
    struct Answer: Decodable, Sendable {
        var chatUploadMaxBytes: Int?
        var chatUploadMaxDimension: Int?

        enum CodingKeys: String, CodingKey { case chatUploadMaxBytes, chatUploadMaxDimension }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            chatUploadMaxBytes = (try? c.decodeIfPresent(Int.self, forKey: .chatUploadMaxBytes)) ?? nil
            chatUploadMaxDimension = (try? c.decodeIfPresent(Int.self, forKey: .chatUploadMaxDimension)) ?? nil
        }
    }

    /// The most taken from a server's answer: a file is read into memory whole before it is
    /// sent, so a server saying "any size" cannot make the bot read without bound.
    public static let ceilingBytes = 1 << 30

    init(_ answer: Answer) {
        self.init()
        if let v = answer.chatUploadMaxBytes, v > 0 { maxBytes = min(v, Self.ceilingBytes) }
        if let v = answer.chatUploadMaxDimension, v > 0 { maxDimension = min(v, 1 << 24) }
    }
}

/// The chat upload answer, v0.12.0's `ChatAttachment` (storage/chat_upload.go:38-50):
/// `{kind, url, mime, size, w, h}` and `name` for a file. Sent on as the chat attachment,
/// field for field (the web client's normalizeChatAttachment, MeetingContext.tsx:100-132,
/// takes a missing `kind` for "image").
public struct ChatUpload: Decodable, Sendable, Equatable {
    public var kind: String?
    public var url: String
    public var mime: String
    public var size: Int
    public var w: Int
    public var h: Int
    public var name: String?

    enum CodingKeys: String, CodingKey { case kind, url, mime, size, w, h, name }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = (try? c.decodeIfPresent(String.self, forKey: .kind)) ?? nil
        url = try c.decode(String.self, forKey: .url)
        mime = try c.decode(String.self, forKey: .mime)
        size = ((try? c.decodeIfPresent(Int.self, forKey: .size)) ?? nil) ?? 0
        w = ((try? c.decodeIfPresent(Int.self, forKey: .w)) ?? nil) ?? 0
        h = ((try? c.decodeIfPresent(Int.self, forKey: .h)) ?? nil) ?? 0
        name = (try? c.decodeIfPresent(String.self, forKey: .name)) ?? nil
    }
}

/// `GET /api/health`'s answer in v0.12.0 (server.go:320-322): `{status: "healthy", time}`.
public struct HealthAnswer: Decodable, Sendable {
    public var status: String
}

/// Is this a Bedrud server? `GET /api/health` (v0.12.0) must say `healthy`, and
/// `GET /auth/settings` must have Bedrud's shape. A server without `/api/health` (404:
/// Bedrud before v0.12.0) is still accepted on its `/auth/settings`.
public enum ServerProbe {
    public static func check(_ api: APIClient) async throws -> AuthSettings {
        do {
            let health = try await api.request(HealthAnswer.self, "GET", "/health")
            guard health.status == "healthy" else {
                throw APIError(.serverError, status: 200, message: "the server reports its health as '\(TerminalText.sanitize(String(health.status.prefix(40))))'", call: "GET /api/health on \(api.server.origin)")
            }
        } catch let e as APIError where e.code == .notFound {
            // An older Bedrud: no health route; /auth/settings below decides.
        }
        return try await api.request(AuthSettings.self, "GET", "/auth/settings")
    }
}

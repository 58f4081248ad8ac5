import BedrudNet
import BedrudProtocol

/// A room as `GET /api/admin/rooms` lists it (v0.12.0 repository/room_repository.go:519,
/// `AdminRoomDetail`): the room with its live participant count.
public struct AdminRoom: Decodable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var isActive: Bool
    public var isPublic: Bool?
    public var participantsCount: Int
    public var settings: RoomSettings?

    public init(id: String, name: String, isActive: Bool = true, isPublic: Bool? = nil, participantsCount: Int, settings: RoomSettings? = nil) {
        self.id = id
        self.name = name
        self.isActive = isActive
        self.isPublic = isPublic
        self.participantsCount = participantsCount
        self.settings = settings
    }

    enum CodingKeys: String, CodingKey { case id, name, isActive, isPublic, participantsCount, settings }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        isActive = try c.decodeIfPresent(Bool.self, forKey: .isActive) ?? false
        isPublic = try c.decodeIfPresent(Bool.self, forKey: .isPublic)
        // A server that could not enrich the list sends rooms without counts (room.go:2143).
        participantsCount = try c.decodeIfPresent(Int.self, forKey: .participantsCount) ?? 0
        settings = try c.decodeIfPresent(RoomSettings.self, forKey: .settings)
    }
}

/// One page of `GET /api/admin/rooms`: `{rooms, total, page, limit}` (room.go:2148).
public struct AdminRoomPage: Decodable, Sendable {
    public var rooms: [AdminRoom]
    public var total: Int
    public var page: Int
    public var limit: Int
}

/// A webhook endpoint as `/api/admin/webhooks` shows it (v0.12.0 models/webhook.go,
/// handlers/admin_handler.go `webhookDTO`). `secret` is masked (`••••abcd`) except in the
/// answers to create and rotate, which show it once.
public struct WebhookEndpoint: Decodable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var url: String
    public var secret: String?
    public var events: [String]
    public var isActive: Bool
    public var lastSeen: String?
    public var createdAt: String?
}

/// `POST /api/admin/webhooks/:id/test`: `{status, httpStatus?, latencyMs?, error?}`
/// (admin_handler.go:1579-1635).
public struct WebhookTestResult: Decodable, Sendable, Equatable {
    /// `success`, `non_2xx`, `delivery_failed` or `error`.
    public var status: String
    public var httpStatus: Int?
    public var latencyMs: Int?
    public var error: String?
}

/// Bedrud's superadmin endpoints (`/api/admin/…`, server.go:555-624): the rooms that are
/// active and the webhook endpoints. Every call answers 403 to an account without the
/// `superadmin` access (middleware.RequireAccess).
public struct AdminAPI: Sendable {
    public let auth: AuthManager

    public init(auth: AuthManager) { self.auth = auth }

    var api: APIClient { auth.api }

    /// The most pages `activeRooms` reads: 100 rooms a page, so 10,000 rooms.
    public static let maxPages = 100

    /// Every active room (`status=active`), page by page, 100 at a time (the server's
    /// largest page, room.go:2130). Bedrud's occupancy filter has no "not empty" value, so
    /// the caller looks at `participantsCount`.
    public func activeRooms() async throws -> [AdminRoom] {
        var rooms: [AdminRoom] = []
        var page = 1
        while page <= Self.maxPages {
            let api = self.api
            let path = "/admin/rooms?status=active&limit=100&page=\(page)&sort=createdAt&order=asc"
            let p = try await auth.authorized { try await api.request(AdminRoomPage.self, "GET", path, bearer: $0) }
            rooms += p.rooms
            if p.rooms.isEmpty || rooms.count >= p.total { break }
            page += 1
        }
        return rooms
    }

    /// The room with this id, found by its name (`q` searches names, room.go:2068); nil
    /// when the list does not have it.
    public func room(id: String, name: String) async throws -> AdminRoom? {
        let api = self.api
        let path = "/admin/rooms?limit=100&q=\(PercentEncoding.encodeQueryComponent(name))"
        let p = try await auth.authorized { try await api.request(AdminRoomPage.self, "GET", path, bearer: $0) }
        return p.rooms.first { $0.id == id }
    }

    // MARK: - Webhooks

    public func webhooks() async throws -> [WebhookEndpoint] {
        struct Page: Decodable, Sendable { var webhooks: [WebhookEndpoint]; var total: Int }
        var all: [WebhookEndpoint] = []
        var page = 1
        while page <= Self.maxPages {
            let api = self.api
            let path = "/admin/webhooks?limit=100&page=\(page)"
            let p = try await auth.authorized { try await api.request(Page.self, "GET", path, bearer: $0) }
            all += p.webhooks
            if p.webhooks.isEmpty || all.count >= p.total { break }
            page += 1
        }
        return all
    }

    /// `POST /api/admin/webhooks {name, url, events}` → 201 with the secret, shown once.
    public func addWebhook(name: String, url: String, events: [String]) async throws -> WebhookEndpoint {
        struct Body: Encodable, Sendable { let name: String; let url: String; let events: [String] }
        let api = self.api
        return try await auth.authorized {
            try await api.request(WebhookEndpoint.self, "POST", "/admin/webhooks", json: Body(name: name, url: url, events: events), bearer: $0)
        }
    }

    /// `DELETE /api/admin/webhooks/:id` → `{status: "deleted"}`; 404 when unknown.
    public func removeWebhook(id: String) async throws {
        let api = self.api
        _ = try await auth.authorized { try await api.send("DELETE", "/admin/webhooks/\(PercentEncoding.encodeQueryComponent(id))", bearer: $0) }
    }

    /// `POST /api/admin/webhooks/:id/rotate-secret` → `{secret}`, shown once.
    public func rotateSecret(id: String) async throws -> String {
        struct Answer: Decodable, Sendable { let secret: String }
        let api = self.api
        return try await auth.authorized {
            try await api.request(Answer.self, "POST", "/admin/webhooks/\(PercentEncoding.encodeQueryComponent(id))/rotate-secret", bearer: $0)
        }.secret
    }

    /// `POST /api/admin/webhooks/:id/test`: Bedrud sends a signed `ping` and says how it went.
    public func testWebhook(id: String) async throws -> WebhookTestResult {
        let api = self.api
        return try await auth.authorized {
            try await api.request(WebhookTestResult.self, "POST", "/admin/webhooks/\(PercentEncoding.encodeQueryComponent(id))/test", bearer: $0)
        }
    }
}

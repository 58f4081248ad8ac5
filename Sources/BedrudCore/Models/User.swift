/// A Bedrud user as the server sends it (`/auth/me`, login, register, guest login).
///
/// Tolerant: every field but `id` may be missing, and unknown fields are ignored, so a
/// newer or older server never breaks decoding (the iOS app's stricter models do break).
public struct User: Codable, Sendable, Equatable {
    public var id: String
    public var email: String
    public var name: String
    /// `local`, `guest`, `passkey`, `google`, `github` or `twitter`.
    public var provider: String?
    public var avatarUrl: String?
    public var accesses: [String]
    public var isActive: Bool?
    public var createdAt: String?

    public init(id: String, email: String = "", name: String = "", provider: String? = nil, accesses: [String] = []) {
        self.id = id
        self.email = email
        self.name = name
        self.provider = provider
        self.accesses = accesses
    }

    public var isGuest: Bool { provider == "guest" || accesses.contains("guest") }
    /// Bedrud checks only `superadmin` server-side; `admin` is shown as admin by its UIs.
    public var isAdmin: Bool { accesses.contains("superadmin") || accesses.contains("admin") }

    enum CodingKeys: String, CodingKey { case id, email, name, provider, avatarUrl, accesses, isActive, createdAt }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        email = (try? c.decodeIfPresent(String.self, forKey: .email)) ?? ""
        name = (try? c.decodeIfPresent(String.self, forKey: .name)) ?? ""
        provider = try? c.decodeIfPresent(String.self, forKey: .provider)
        avatarUrl = try? c.decodeIfPresent(String.self, forKey: .avatarUrl)
        accesses = ((try? c.decodeIfPresent([String].self, forKey: .accesses)) ?? nil) ?? []
        isActive = try? c.decodeIfPresent(Bool.self, forKey: .isActive)
        createdAt = try? c.decodeIfPresent(String.self, forKey: .createdAt)
    }
}

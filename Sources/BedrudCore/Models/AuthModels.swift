/// A Bedrud access/refresh token pair. Secrets: never log them.
public struct AuthTokens: Codable, Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String

    public init(accessToken: String, refreshToken: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }
}

/// Login, register, guest-login and passkey responses: `{user, tokens:{accessToken, refreshToken}}`.
/// (The server's docs and the iOS app disagree with the server here; this is the server's shape.)
public struct LoginResponse: Decodable, Sendable {
    public var user: User
    public var tokens: AuthTokens
}

/// `POST /auth/register`'s answer: a session like login's, or — when the server requires
/// a verified email (v0.12.0 auth_handler.go:226-235) — `{requiresVerification: true,
/// message, email}` and no tokens.
public enum RegisterAnswer: Decodable, Sendable {
    case session(LoginResponse)
    case verificationRequired(email: String?)

    enum Keys: String, CodingKey { case requiresVerification, email }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        if ((try? c.decodeIfPresent(Bool.self, forKey: .requiresVerification)) ?? nil) == true {
            self = .verificationRequired(email: (try? c.decodeIfPresent(String.self, forKey: .email)) ?? nil)
        } else {
            self = .session(try LoginResponse(from: decoder))
        }
    }
}

/// The refresh response, `{access_token, refresh_token}` in snake_case, unlike login.
/// The camelCase form is accepted as well in case a later server harmonises it.
public struct RefreshResponse: Decodable, Sendable {
    public var tokens: AuthTokens

    enum Keys: String, CodingKey { case access_token, refresh_token, accessToken, refreshToken }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let access = try c.decodeIfPresent(String.self, forKey: .access_token) ?? c.decode(String.self, forKey: .accessToken)
        let refresh = try c.decodeIfPresent(String.self, forKey: .refresh_token) ?? c.decode(String.self, forKey: .refreshToken)
        tokens = AuthTokens(accessToken: access, refreshToken: refresh)
    }
}

/// `GET /auth/settings`: public; answered by every Bedrud build, so it doubles as the
/// health check when adding an instance (release builds have no `/api/health`).
public struct AuthSettings: Decodable, Sendable, Equatable {
    public var registrationEnabled: Bool
    public var tokenRegistrationOnly: Bool
    public var passkeysEnabled: Bool
    public var oauthProviders: [String]
    /// v0.12.0 additions (nil from older servers).
    public var guestLoginEnabled: Bool?
    public var requireEmailVerification: Bool?
    public var recordingsEnabled: Bool?

    enum CodingKeys: String, CodingKey {
        case registrationEnabled, tokenRegistrationOnly, passkeysEnabled, oauthProviders, guestLoginEnabled, requireEmailVerification, recordingsEnabled
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        registrationEnabled = try c.decode(Bool.self, forKey: .registrationEnabled)
        tokenRegistrationOnly = ((try? c.decodeIfPresent(Bool.self, forKey: .tokenRegistrationOnly)) ?? nil) ?? false
        passkeysEnabled = ((try? c.decodeIfPresent(Bool.self, forKey: .passkeysEnabled)) ?? nil) ?? false
        oauthProviders = ((try? c.decodeIfPresent([String].self, forKey: .oauthProviders)) ?? nil) ?? []
        guestLoginEnabled = (try? c.decodeIfPresent(Bool.self, forKey: .guestLoginEnabled)) ?? nil
        requireEmailVerification = (try? c.decodeIfPresent(Bool.self, forKey: .requireEmailVerification)) ?? nil
        recordingsEnabled = (try? c.decodeIfPresent(Bool.self, forKey: .recordingsEnabled)) ?? nil
    }
}

/// What a credential store keeps for one instance: tokens and the cached user.
public struct StoredSession: Codable, Sendable, Equatable {
    public var tokens: AuthTokens
    public var user: User?
    /// The server this session belongs to, so a changed instance URL is noticed.
    public var server: String

    public init(tokens: AuthTokens, user: User?, server: String) {
        self.tokens = tokens
        self.user = user
        self.server = server
    }
}

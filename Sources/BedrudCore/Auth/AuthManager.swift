import BedrudNet
import BedrudProtocol
import BedrudRuntime

/// How to log in without asking anyone, when there is no usable session.
public enum LoginMethod: Sendable {
    /// Email + password; the password is read only when needed and never stored.
    case password(email: String, password: @Sendable () throws -> String)
    /// Bedrud guest login with a display name (creates a guest account on the server).
    case guest(name: String)
}

/// One instance's authentication: the headless mirror of the iOS app's AuthManager.
///
/// Keeps the access/refresh token pair in a ``CredentialStore``; knows from the JWT's
/// `exp` when a token is stale; refreshes single-flight (concurrent callers share one
/// refresh, because Bedrud keeps only one valid refresh token per user and rotates it);
/// retries a call once after a 401 and never after a 403; falls back to an unattended
/// ``LoginMethod`` when the session is gone. Logout revokes the tokens on the server,
/// which the iOS app never does.
public actor AuthManager {
    public nonisolated let instanceKey: String
    public nonisolated let api: APIClient
    private let store: any CredentialStore
    private let fallbackLogin: LoginMethod?
    /// Unix seconds now; injected so expiry can be tested without waiting.
    private let now: @Sendable () -> Double
    private var session: StoredSession?
    private var loaded = false
    private var refreshTask: Task<AuthTokens, any Error>?
    private let logger = Logger("auth")

    public init(instanceKey: String, api: APIClient, store: any CredentialStore, fallbackLogin: LoginMethod? = nil, now: @escaping @Sendable () -> Double) {
        self.instanceKey = instanceKey
        self.api = api
        self.store = store
        self.fallbackLogin = fallbackLogin
        self.now = now
    }

    // MARK: - Session state

    /// Loads the stored session once (the iOS app's restoreSession, minus the network).
    /// A session stored for a different server URL is ignored.
    @discardableResult
    public func restore() throws -> StoredSession? {
        if !loaded {
            loaded = true
            if let s = try store.load(instanceKey), s.server == api.serverDescription {
                session = s
            }
        }
        return session
    }

    public var currentUser: User? { session?.user }

    /// True when a session is stored (its tokens may still need a refresh).
    public var hasSession: Bool { (try? restore()) != nil && session != nil }

    /// The access token's expiry as Unix seconds, if known.
    public var accessTokenExpiry: Double? {
        session.flatMap { JWTClaims(token: $0.tokens.accessToken)?.expiresAt }
    }

    private func store(_ tokens: AuthTokens, user: User?) throws {
        let s = StoredSession(tokens: tokens, user: user ?? session?.user, server: api.serverDescription)
        session = s
        loaded = true
        try store.save(s, for: instanceKey)
    }

    // MARK: - Login flows

    /// `POST /auth/login`.
    /// - Throws: ``AccountProblem`` when the server wants the email verified first.
    @discardableResult
    public func login(email: String, password: String) async throws -> User {
        struct Body: Encodable, Sendable { let email: String; let password: String }
        let r: LoginResponse
        do {
            r = try await api.request(LoginResponse.self, "POST", "/auth/login", json: Body(email: email, password: password))
        } catch let e as APIError where e.needsEmailVerification {
            throw AccountProblem(.emailNotVerified(justRegistered: false), email: email, server: api.serverDescription)
        }
        try store(r.tokens, user: r.user)
        logger.debug("logged in to \(api.serverDescription) as \(r.user.email)")
        return r.user
    }

    /// `POST /auth/register`; same answer shape as login, unless the server requires a
    /// verified email: then it answers `{requiresVerification, message, email}` with no
    /// tokens, and this throws ``AccountProblem``.
    @discardableResult
    public func register(email: String, password: String, name: String, inviteToken: String? = nil) async throws -> User {
        struct Body: Encodable, Sendable { let email: String; let password: String; let name: String; let inviteToken: String? }
        let r = try await api.request(RegisterAnswer.self, "POST", "/auth/register", json: Body(email: email, password: password, name: name, inviteToken: inviteToken))
        switch r {
        case .session(let login):
            try store(login.tokens, user: login.user)
            return login.user
        case .verificationRequired(let address):
            throw AccountProblem(.emailNotVerified(justRegistered: true), email: address ?? email, server: api.serverDescription)
        }
    }

    /// `POST /auth/guest-login`: a persistent guest account with this display name.
    @discardableResult
    public func guestLogin(name: String) async throws -> User {
        struct Body: Encodable, Sendable { let name: String }
        let r = try await api.request(LoginResponse.self, "POST", "/auth/guest-login", json: Body(name: name))
        try store(r.tokens, user: r.user)
        return r.user
    }

    /// The server refused the stored session's refresh token, so the session was revoked
    /// (a logout elsewhere, or an admin who set a new password: v0.12.0 `PUT
    /// /admin/users/:id/password` clears it). Logs in again unattended; when the stored
    /// password is refused too, says both in one error instead of two failures in a row.
    private func loginAfterRevocation() async throws {
        do {
            try await loginUnattended()
        } catch let e as APIError where e.code == .unauthorized {
            throw APIError(.unauthorized, status: e.status, message: "the session was revoked (the server refused its refresh token) and the stored password no longer works "
                + "(the login with it was refused: \(e.message)). Was the password changed or reset? Put the new one in the password file, or run 'bedrud-bot login'",
                call: e.call)
        }
    }

    /// Logs in with the unattended method, if one was configured.
    private func loginUnattended() async throws {
        switch fallbackLogin {
        case .password(let email, let password)?:
            try await login(email: email, password: try password())
        case .guest(let name)?:
            try await guestLogin(name: name)
        case nil:
            throw APIError(.notLoggedIn, message: "Not logged in to \(api.serverDescription). Run 'bedrud-bot login' (or set email and password_file for this instance).", call: "")
        }
    }

    // MARK: - Tokens

    /// Exchanges the refresh token for a new pair (`POST /auth/refresh`, snake_case).
    /// Concurrent callers share one request. A refused refresh (401) drops the stored
    /// session, since the server has invalidated it.
    ///
    /// A 409 means the token was rotated already (v0.12.0 auth_handler.go:486-492): the
    /// credential file is shared by every bot process of an instance, so another one may
    /// have just refreshed. The stored tokens are read again (for up to
    /// ``rotationWaitSeconds``, while that process writes them) and the newer pair is used
    /// — refreshed once more if its access token is stale. Only when nobody stored a newer
    /// pair is the session treated as lost.
    public func refresh() async throws -> AuthTokens {
        if let t = refreshTask { return try await t.value }
        try restore()
        guard let refreshToken = session?.tokens.refreshToken, !refreshToken.isEmpty else {
            throw APIError(.notLoggedIn, message: "Not logged in to \(api.serverDescription).", call: "")
        }
        let task = Task<AuthTokens, any Error> { [self] in
            do {
                return try await self.exchange(refreshToken)
            } catch let e as APIError where e.code == .conflict {
                logger.info("the refresh token for \(api.serverDescription) was rotated by another process; reading the stored session again")
                guard let newer = await self.storedTokens(replacing: refreshToken) else {
                    throw APIError(.unauthorized, status: 409, message: e.message + " (and no other process stored a newer session)", call: e.call)
                }
                if let claims = JWTClaims(token: newer.accessToken), !claims.isExpired(now: self.now()) { return newer }
                return try await self.exchange(newer.refreshToken)
            }
        }
        refreshTask = task
        defer { refreshTask = nil }
        do {
            let tokens = try await task.value
            try store(tokens, user: nil)
            logger.debug("refreshed tokens for \(api.serverDescription)")
            return tokens
        } catch let e as APIError where e.code == .unauthorized {
            logger.info("the server refused the refresh token for \(api.serverDescription); the session is gone")
            session = nil
            try? store.delete(instanceKey)
            throw e
        }
    }

    /// How long a refresh that got 409 waits for another process to store its new pair.
    public var rotationWaitSeconds: Double = 3

    /// Sets ``rotationWaitSeconds`` (tests shorten it).
    public func setRotationWait(_ seconds: Double) { rotationWaitSeconds = seconds }

    /// One `POST /auth/refresh`. 403s become ``AccountProblem``; one 429 is waited out as
    /// its `Retry-After` says (at most a minute) and tried again.
    private func exchange(_ refreshToken: String) async throws -> AuthTokens {
        struct Body: Encodable, Sendable {
            let refresh_token: String  // snake_case, as the server expects
        }
        var waited = false
        while true {
            do {
                return try await api.request(RefreshResponse.self, "POST", "/auth/refresh", json: Body(refresh_token: refreshToken)).tokens
            } catch let e as APIError where e.code == .rateLimited && !waited {
                let delay = min(60, e.retryAfter ?? 10)
                logger.info("the server rate-limits token refreshes; trying again in \(Int(delay)) s")
                waited = true
                try await Task.sleep(for: .milliseconds(Int64(delay * 1000)))
            } catch let e as APIError where e.code == .forbidden {
                let email = session?.user?.email
                if e.needsEmailVerification { throw AccountProblem(.emailNotVerified(justRegistered: false), email: email, server: api.serverDescription) }
                if e.message.lowercased().contains("deactivated") { throw AccountProblem(.deactivated, email: email, server: api.serverDescription) }
                throw e
            }
        }
    }

    /// The stored pair once its refresh token is no longer `old` (another process rotated
    /// it), waiting up to ``rotationWaitSeconds``; nil when none appears.
    private func storedTokens(replacing old: String) async -> AuthTokens? {
        let deadline = MonotonicClock.nanos() + UInt64(rotationWaitSeconds * 1e9)
        while true {
            if let s = try? store.load(instanceKey), s.server == api.serverDescription, s.tokens.refreshToken != old {
                session = s
                return s.tokens
            }
            if MonotonicClock.nanos() >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// An access token that is not expired (refreshing, or logging in unattended, if needed).
    public func validAccessToken() async throws -> String {
        try restore()
        if let s = session {
            let claims = JWTClaims(token: s.tokens.accessToken)
            if let claims, !claims.isExpired(now: now()) { return s.tokens.accessToken }
            do {
                return try await refresh().accessToken
            } catch let e as APIError where e.code == .unauthorized || e.code == .notLoggedIn {
                guard fallbackLogin != nil else { throw e }
                try await loginAfterRevocation()
                guard let token = session?.tokens.accessToken else { throw e }
                return token
            }
        }
        try await loginUnattended()
        guard let token = session?.tokens.accessToken else {
            throw APIError(.notLoggedIn, message: "Not logged in to \(api.serverDescription).", call: "")
        }
        return token
    }

    /// Runs an authenticated call with a valid token; on 401 refreshes once and retries
    /// once (a 403 is final). Mirrors the iOS APIClient's authFetch.
    public func authorized<T: Sendable>(_ call: @Sendable (String) async throws -> T) async throws -> T {
        do {
            return try await authorizedOnce(call)
        } catch let e as APIError where e.needsEmailVerification {
            throw AccountProblem(.emailNotVerified(justRegistered: false), email: session?.user?.email, server: api.serverDescription)
        }
    }

    private func authorizedOnce<T: Sendable>(_ call: @Sendable (String) async throws -> T) async throws -> T {
        let token = try await validAccessToken()
        do {
            return try await call(token)
        } catch let e as APIError where e.code == .unauthorized {
            logger.debug("401 from \(e.call); refreshing once")
            let fresh: String
            do {
                fresh = try await refresh().accessToken
            } catch let r as APIError where r.code == .unauthorized || r.code == .notLoggedIn {
                guard fallbackLogin != nil else { throw e }
                try await loginAfterRevocation()
                guard let t = session?.tokens.accessToken else { throw e }
                fresh = t
            }
            return try await call(fresh)
        }
    }

    /// `GET /auth/me`; updates the cached user.
    public func me() async throws -> User {
        let api = self.api
        let user = try await authorized { token in
            try await api.request(User?.self, "GET", "/auth/me", bearer: token)
        }
        guard let user else {
            throw APIError(.notFound, status: 200, message: "the server no longer has this account", call: "GET /api/auth/me on \(api.server.origin)")
        }
        if let s = session { try store(s.tokens, user: user) }
        return user
    }

    /// Revokes the session on the server (`POST /auth/logout` with the refresh token)
    /// and deletes it locally. The local copy is deleted even if the server cannot be
    /// reached; the error is still reported.
    public func logout() async throws {
        try restore()
        guard let s = session else { return }
        struct Body: Encodable, Sendable {
            let refresh_token: String
        }
        defer {
            session = nil
            try? store.delete(instanceKey)
        }
        _ = try await api.send("POST", "/auth/logout", json: Body(refresh_token: s.tokens.refreshToken), bearer: s.tokens.accessToken)
    }

    /// Stores a session obtained elsewhere (tests, migration).
    public func adopt(_ tokens: AuthTokens, user: User?) throws {
        try store(tokens, user: user)
    }
}

import BedrudCore
import BedrudNet
import BedrudProtocol
import Foundation
import Synchronization
import Testing
import TestSupport

@Suite struct AuthManagerTests {
    static let password = "correct horse battery staple"

    func manager(_ url: String, store: any CredentialStore = MemoryCredentialStore(), fallback: LoginMethod? = nil) -> AuthManager {
        let api = APIClient(server: WebURL(url)!, http: HTTPClient())
        return AuthManager(instanceKey: "t", api: api, store: store, fallbackLogin: fallback, now: { Date().timeIntervalSince1970 })
    }

    @Test func concurrentCallersShareOneRefresh() async throws {
        let server = try await DevServer.start(["--access-ttl", "1s", "--seed-user", "a@example.com:\(Self.password)"])
        let auth = manager(server.baseURL)
        try await auth.login(email: "a@example.com", password: Self.password)
        // Until the access token has expired for the server too (its `exp`, from the token).
        try await waitUntilWallClock(passes: try #require(await auth.accessTokenExpiry), atMost: 5)
        // The refreshed token must outlive the eight calls even on a starved machine (a CI
        // run under load took seconds per request): only the first token was short.
        _ = try server.dev("POST", "/_dev/config", json: ["accessTtl": "1h"])
        // Bedrud rotates refresh tokens: a second refresh with the old one would be
        // refused, so all of these succeeding shows they shared one refresh.
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await auth.me().email } }
            for try await email in group { #expect(email == "a@example.com") }
        }
        let state = try server.dev("GET", "/_dev/state") as? [String: Any]
        #expect((state?["blockedRefreshTokens"] as? Int) == 1)
    }

    @Test func unattendedLoginWhenTheSessionIsGone() async throws {
        let server = try await DevServer.start(["--seed-user", "a@example.com:\(Self.password)"])
        let auth = manager(server.baseURL, fallback: .password(email: "a@example.com", password: { Self.password }))
        #expect(try await auth.me().email == "a@example.com")
        // Someone else logs in with the same account: our refresh token is invalidated.
        let other = manager(server.baseURL)
        try await other.login(email: "a@example.com", password: Self.password)
        await #expect(throws: APIError.self) { try await auth.refresh() }
        #expect(await auth.hasSession == false)
        // With no session left, the next call logs in again by itself.
        #expect(try await auth.me().email == "a@example.com")
        #expect(await auth.hasSession)
    }

    @Test func retriesOnceAfter401AndNeverAfter403() async throws {
        let requests = Mutex<[String]>([])
        let server = try ScriptedServer { c in
            while let req = c.readRequest() {
                let line = String(req.head.prefix { $0 != "\r" })
                requests.withLock { $0.append(line) }
                if line.contains("/api/auth/refresh") {
                    c.respond(headers: [("Content-Type", "application/json")], body: #"{"access_token":"\#(TestJWT.make(exp: 4_000_000_000))","refresh_token":"r2"}"#)
                } else if line.contains("/api/room/list") {
                    let auth = req.head.contains(TestJWT.make(exp: 4_000_000_000)) ? "fresh" : "stale"
                    if auth == "stale" { c.respond(status: 401, reason: "Unauthorized", body: #"{"error":"Invalid token"}"#) } else { c.respond(body: "[]") }
                } else if line.contains("/api/room/join") {
                    c.respond(status: 403, reason: "Forbidden", body: #"{"error":"you are banned from this room"}"#)
                } else {
                    c.respond(status: 404, reason: "Not Found", body: "Not Found")
                }
            }
        }
        let auth = manager(server.baseURL)
        // A token that looks valid to us but that the server refuses.
        try await auth.adopt(AuthTokens(accessToken: TestJWT.make(exp: 3_999_999_999), refreshToken: "r1"), user: nil)
        let rooms = RoomAPI(auth: auth)
        #expect(try await rooms.list().isEmpty)
        #expect(requests.withLock { $0.filter { $0.contains("/room/list") }.count } == 2)
        #expect(requests.withLock { $0.filter { $0.contains("/auth/refresh") }.count } == 1)
        do {
            _ = try await rooms.join(roomName: "x")
            Issue.record("403 must fail")
        } catch let e as APIError {
            #expect(e.code == .forbidden)
            #expect(e.description.contains("you are banned from this room"))
        }
        #expect(requests.withLock { $0.filter { $0.contains("/room/join") }.count } == 1)
    }

    @Test func plainTextErrorsAreReadable() async throws {
        let server = try ScriptedServer { c in
            _ = c.readRequest()
            c.respond(status: 404, reason: "Not Found", headers: [("Content-Type", "text/plain")], body: "Cannot GET /api/health")
        }
        let api = APIClient(server: WebURL(server.baseURL)!, http: HTTPClient())
        do {
            _ = try await api.send("GET", "/health")
            Issue.record("expected 404")
        } catch let e as APIError {
            #expect(e.code == .notFound)
            #expect(e.description == "GET /api/health on \(server.baseURL) failed with HTTP 404: Cannot GET /api/health.")
        }
    }

    @Test func modelsTolerateTheServersRealShapes() throws {
        // Create's answer lacks adminId and expiresAt (the iOS decoder breaks on it).
        let create = #"{"id":"r1","name":"abc-defg-hij","createdBy":"u1","isActive":true,"isPublic":false,"maxParticipants":20,"settings":{"allowChat":true},"livekitHost":"http://x/livekit","mode":"standard"}"#
        let room = try JSONDecoder().decode(Room.self, from: Data(create.utf8))
        #expect(room.adminId == nil && room.settings?.allowVideo == true)
        // Guest-join returns five keys only.
        let gj = #"{"id":"r1","name":"n","token":"t","adminId":"u","livekitHost":"http://x/livekit"}"#
        let j = try JSONDecoder().decode(JoinRoomResponse.self, from: Data(gj.utf8))
        #expect(j.room.name == "n" && j.livekitHost == "http://x/livekit")
        // Refresh is snake_case; login is camelCase.
        let rf = try JSONDecoder().decode(RefreshResponse.self, from: Data(#"{"access_token":"a","refresh_token":"b"}"#.utf8))
        #expect(rf.tokens == AuthTokens(accessToken: "a", refreshToken: "b"))
        let login = #"{"user":{"id":"u","email":"e","name":"n","provider":"local","accesses":["user"],"unknownField":1},"tokens":{"accessToken":"a","refreshToken":"b"}}"#
        #expect(try JSONDecoder().decode(LoginResponse.self, from: Data(login.utf8)).user.accesses == ["user"])
        // /auth/me can be null when the account was deleted.
        #expect(try JSONDecoder().decode(User?.self, from: Data("null".utf8)) == nil)
    }

    @Test func roomNameRules() {
        #expect(RoomName.problem(with: "ab") != nil)
        #expect(RoomName.problem(with: "  Weekly-Sync ") == nil)
        #expect(RoomName.problem(with: "a--b") != nil)
        #expect(RoomName.problem(with: "-ab") != nil)
        #expect(RoomName.problem(with: String(repeating: "a", count: 64)) != nil)
    }
}

/// Unsigned JWTs with chosen claims, for tests that only need `exp` to be read.
enum TestJWT {
    static func make(exp: Double, sub: String = "u") -> String {
        func b64(_ s: String) -> String {
            Data(s.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        return b64(#"{"alg":"HS256","typ":"JWT"}"#) + "." + b64(#"{"sub":"\#(sub)","exp":\#(Int(exp))}"#) + ".c2ln"
    }
}

import BedrudBot
import BedrudCore
import BedrudNet
import BedrudProtocol
import Foundation
import Testing
import TestSupport

/// ``AuthManager`` refreshing against Bedrud v0.12.0's rotation rule (the devserver's
/// `--refresh-latency`: two refreshes of one token close together, the second gets 409)
/// when several bots of one instance share one ``FileCredentialStore`` file.
@Suite struct FileCredentialStoreSharedRefreshTests {
    static let password = "correct horse battery staple"

    static func manager(_ url: String, _ store: any CredentialStore) -> AuthManager {
        AuthManager(instanceKey: "dev", api: APIClient(server: WebURL(url)!, http: HTTPClient()), store: store, now: { Date().timeIntervalSince1970 })
    }

    static func stateDir() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shared-session-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func twoBotsOfOneInstanceRefreshingAtOnceBothGoOn() async throws {
        let server = try await DevServer.start(["--seed-user", "a@example.com:\(Self.password)", "--refresh-latency", "1"])
        let dir = try Self.stateDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = Self.manager(server.baseURL, FileCredentialStore(stateDirectory: dir))
        try await first.login(email: "a@example.com", password: Self.password)
        // A second process of the same instance: its own manager, the same session file.
        let second = Self.manager(server.baseURL, FileCredentialStore(stateDirectory: dir))
        #expect(try await second.restore() != nil)
        async let a = first.refresh()
        async let b = second.refresh()
        let (ta, tb) = try await (a, b)
        // One of them rotated the token; the other got 409, read the file again and took that pair.
        #expect(ta == tb)
        #expect(try FileCredentialStore(stateDirectory: dir).load("dev")?.tokens == ta)
        let state = try server.dev("GET", "/_dev/state") as? [String: Any]
        #expect((state?["blockedRefreshTokens"] as? Int) == 1, "one rotation, not two")
        // Both go on with it.
        #expect(try await first.me().email == "a@example.com")
        #expect(try await second.me().email == "a@example.com")
    }

    @Test func aConflictNobodyStoredIsALostSession() async throws {
        let server = try await DevServer.start(["--seed-user", "a@example.com:\(Self.password)", "--refresh-latency", "1"])
        let first = Self.manager(server.baseURL, MemoryCredentialStore())
        try await first.login(email: "a@example.com", password: Self.password)
        let tokens = try #require(try await first.restore()).tokens
        // Another machine with a copy of the tokens: nothing newer ever reaches this store.
        let other = Self.manager(server.baseURL, MemoryCredentialStore())
        try await other.adopt(tokens, user: nil)
        await other.setRotationWait(0.3)
        await first.setRotationWait(0.3)
        async let a: AuthTokens? = try? first.refresh()
        async let b: AuthTokens? = try? other.refresh()
        let results = await [a, b]
        #expect(results.compactMap { $0 }.count == 1, "exactly one refresh won")
        #expect(await first.hasSession != (await other.hasSession), "the loser's session is gone, the winner's kept")
    }

    @Test func aDeactivatedAccountSaysSo() async throws {
        let server = try await DevServer.start(["--seed-user", "a@example.com:\(Self.password)"])
        let auth = Self.manager(server.baseURL, MemoryCredentialStore())
        try await auth.login(email: "a@example.com", password: Self.password)
        _ = try server.dev("POST", "/_dev/users/a@example.com/deactivate")
        do {
            _ = try await auth.refresh()
            Issue.record("a deactivated account must not refresh")
        } catch let e as AccountProblem {
            #expect(e.kind == .deactivated)
            #expect(e.description == "The account a@example.com on \(server.baseURL) has been deactivated by an administrator: it cannot sign in until it is reactivated.")
        }
    }
}

import Synchronization

/// Where an instance's session (tokens and cached user) is kept between runs: the
/// headless counterpart of the iOS app's Keychain. The bot layer provides the file-backed
/// store; throwaway guest sessions use ``MemoryCredentialStore``.
public protocol CredentialStore: Sendable {
    /// The stored session, or nil if there is none.
    /// - Throws: when the store exists but may not be read (e.g. unsafe permissions).
    func load(_ key: String) throws -> StoredSession?
    func save(_ session: StoredSession, for key: String) throws
    func delete(_ key: String) throws
}

/// A credential store that lives only as long as the process.
public final class MemoryCredentialStore: CredentialStore {
    private let sessions = Mutex<[String: StoredSession]>([:])

    public init() {}

    public func load(_ key: String) throws -> StoredSession? { sessions.withLock { $0[key] } }
    public func save(_ session: StoredSession, for key: String) throws { sessions.withLock { $0[key] = session } }
    public func delete(_ key: String) throws { _ = sessions.withLock { $0.removeValue(forKey: key) } }
}

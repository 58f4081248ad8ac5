import BedrudCore
import BedrudProtocol
import FoundationEssentials

/// Sessions on disk: `<state_dir>/sessions/<instance>.json`, the folder 0700 and each
/// file 0600, replaced atomically. A file others can read is refused with a fix-it
/// message rather than used. Passwords are never written here.
public final class FileCredentialStore: CredentialStore {
    public let directory: String

    public init(stateDirectory: String) {
        directory = stateDirectory + "/sessions"
    }

    public func path(for key: String) -> String {
        let safe = key.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" }
        return directory + "/" + String(safe) + ".json"
    }

    public func load(_ key: String) throws -> StoredSession? {
        let p = path(for: key)
        if FileManager.default.fileExists(atPath: directory) { try SecureFiles.checkPrivate(directory) }
        guard let data = try SecureFiles.readPrivate(p) else { return nil }
        do {
            return try JSONDecoder().decode(StoredSession.self, from: data)
        } catch {
            throw ConfigError(file: p, "the stored session is damaged; delete the file or run 'bedrud-bot login' again")
        }
    }

    public func save(_ session: StoredSession, for key: String) throws {
        try SecureFiles.ensurePrivateDirectory(directory)
        // Pretty, sorted, `/` escaped: the text these files have always had.
        let text = try JSONWriter.string(session, style: .init(pretty: true, escapingSlashes: true))
        try SecureFiles.writePrivate(Data(text.utf8), to: path(for: key))
    }

    public func delete(_ key: String) throws {
        let p = path(for: key)
        if FileManager.default.fileExists(atPath: p) { try FileManager.default.removeItem(atPath: p) }
    }
}

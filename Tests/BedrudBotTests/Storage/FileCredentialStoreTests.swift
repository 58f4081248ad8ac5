@testable import BedrudBot
import BedrudCore
import Foundation
import Testing
import TestSupport

/// A stored session: the text it always had (`JSONEncoder`, pretty, sorted, `/` escaped),
/// owner-only, replaced whole, read back as it was saved.
@Suite struct FileCredentialStoreTests {
    @Test func aSavedSessionHasItsTextAndModeAndReadsBack() throws {
        let user = try CLIUser()  // only for its temporary folder
        let store = FileCredentialStore(stateDirectory: user.home.path + "/state")
        let session = StoredSession(tokens: AuthTokens(accessToken: "a.b/c+d", refreshToken: "r\u{2028}"),
                                    user: User(id: "u-1", email: "a@example.org", name: "Ann/\"B\"", provider: "local", accesses: ["user"]),
                                    server: "http://127.0.0.1:1/x")
        try store.save(session, for: "default")
        var replaced = session
        replaced.tokens.accessToken = "new"
        try store.save(replaced, for: "default")
        let path = store.path(for: "default")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        #expect(FileManager.default.contents(atPath: path) == (try encoder.encode(replaced)))
        #expect(try store.load("default") == replaced)
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory) == ["default.json"], "no temporary file is left")
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
@testable import BedrudBot

/// Passwords from the service manager's credentials folder (systemd `LoadCredential=`,
/// a Kubernetes Secret volume): root-owned 0440 files there are the platform's normal
/// shape and must be accepted; everywhere else the 0600 rule stands.
@Suite struct SecureFilesCredentialsDirectoryTests {
    static let regular = UInt32(S_IFREG)

    @Test func theShapesSystemdAndKubernetesWriteAreAccepted() {
        // systemd with ACLs: 0400 root, the ACL mask shows as group read.
        #expect(SecureFiles.credentialProblem(mode: Self.regular | 0o440, owner: 0, me: 61_234) == nil)
        // systemd without ACLs (ramfs): chowned to the service user.
        #expect(SecureFiles.credentialProblem(mode: Self.regular | 0o400, owner: 61_234, me: 61_234) == nil)
        // Kubernetes Secret with fsGroup and defaultMode 0440.
        #expect(SecureFiles.credentialProblem(mode: Self.regular | 0o440, owner: 0, me: 10_001) == nil)
    }

    @Test func readableByOthersWritableByGroupOrSomeoneElsesIsRefused() {
        #expect(SecureFiles.credentialProblem(mode: Self.regular | 0o444, owner: 0, me: 10_001)?.contains("(444)") == true)
        #expect(SecureFiles.credentialProblem(mode: Self.regular | 0o460, owner: 0, me: 10_001)?.contains("(460)") == true)
        #expect(SecureFiles.credentialProblem(mode: Self.regular | 0o400, owner: 1_000, me: 10_001)?.contains("uid 1000") == true)
        #expect(SecureFiles.credentialProblem(mode: UInt32(S_IFDIR) | 0o500, owner: 0, me: 0) == "not a regular file")
    }

    @Test func onlyFilesInsideTheFolderGetTheRule() throws {
        let user = try CLIUser()  // only for its temporary folder
        let inside = try user.writeFile("credentials/bedrud-password", "s3cret pass\n", mode: 0o440)
        let outside = try user.writeFile("elsewhere", "s3cret pass\n", mode: 0o440)
        let creds = (inside as NSString).deletingLastPathComponent
        symlink(outside, creds + "/link-out")
        #expect(try SecureFiles.readPassword(inside, credentialsDirectory: creds) == "s3cret pass")
        // The same mode outside the folder, or a link that leads out of it: the 0600 rule.
        #expect(throws: SecureFiles.UnsafePermissions.self) { try SecureFiles.readPassword(outside, credentialsDirectory: creds) }
        #expect(throws: SecureFiles.UnsafePermissions.self) { try SecureFiles.readPassword(creds + "/link-out", credentialsDirectory: creds) }
        #expect(throws: SecureFiles.UnsafePermissions.self) { try SecureFiles.readPassword(inside, credentialsDirectory: nil) }
        chmod(inside, 0o444)
        #expect(throws: ConfigError.self) { try SecureFiles.readPassword(inside, credentialsDirectory: creds) }
    }

    @Test func aCredentialFromLoadCredentialLogsIn() async throws {
        let server = try await DevServer.start(["--seed-user", "rec@example.com:a long enough password"])
        let user = try CLIUser()
        let pw = try user.writeFile("credentials/bedrud-password", "a long enough password\n", mode: 0o440)
        let creds = (pw as NSString).deletingLastPathComponent
        try await user.expect(0, ["instance", "add", server.baseURL, "--name", "dev", "--email", "rec@example.com", "--no-check"])
        user.extraEnvironment["BEDRUD_BOT_PASSWORD_FILE"] = pw
        var r = try await user.expect(3, ["rooms", "list"])  // no credentials folder: the 0600 rule
        #expect(r.stderr.contains("chmod 600"))
        user.extraEnvironment["CREDENTIALS_DIRECTORY"] = creds
        r = try await user.expect(0, ["rooms", "list"])
        #expect(r.stdout.contains("no rooms"))
    }
}

import Foundation
import Testing

@testable import BedrudBot

/// Password files: read bounded, and refused when others may read them.
@Suite struct SecureFilesTests {
    func file(_ bytes: [UInt8], mode: mode_t = 0o600) throws -> String {
        let p = FileManager.default.temporaryDirectory.appendingPathComponent("bedrud-pw-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        chmod(p, mode)
        return p
    }

    /// A 64 MB password file was read whole (222 MB RSS).
    @Test func aPasswordFileIsReadAtMost4KiB() throws {
        let big = try file(Array("secret\n".utf8) + [UInt8](repeating: 0x61, count: 64 << 20))
        defer { unlink(big) }
        do {
            _ = try SecureFiles.readPassword(big)
            Issue.record("a 64 MiB password file was read")
        } catch {
            #expect("\(error)" == "\(big): the password file is larger than 4096 bytes; it should hold the password on its first line and nothing else")
        }
        let exact = try file(Array("secret\n".utf8) + [UInt8](repeating: 0x61, count: 4096 - 7))
        defer { unlink(exact) }
        #expect(try SecureFiles.readPassword(exact) == "secret")
        let crlf = try file(Array("secret\r\nnext line\r\n".utf8))
        defer { unlink(crlf) }
        #expect(try SecureFiles.readPassword(crlf) == "secret")
    }

    @Test func theModeIsCheckedWithoutReading() throws {
        let open = try file(Array("secret\n".utf8), mode: 0o644)
        defer { unlink(open) }
        #expect(throws: SecureFiles.UnsafePermissions.self) { try SecureFiles.checkPasswordFile(open) }
        chmod(open, 0o600)
        try SecureFiles.checkPasswordFile(open)
        try SecureFiles.checkPasswordFile("/nonexistent/password")  // reading it says so
    }
}

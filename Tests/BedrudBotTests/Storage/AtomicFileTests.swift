@testable import BedrudBot
import Foundation
import Glibc
import Testing

/// A file is written whole or not at all: through a temporary file, with its mode, into
/// place in one step; replacing or creating only, and what each leaves when a step fails.
@Suite struct AtomicFileTests {
    let dir: String

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("atomic-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    private func mode(_ path: String) -> mode_t {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o777 : 0
    }

    private func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir).sorted() }

    @Test func replacingPutsTheWholeFileInPlaceWithItsMode() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/summary.json"
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        try Data("stale".utf8).write(to: URL(fileURLWithPath: path + ".part"))  // left by a crash
        let big = String(repeating: "0123456789abcdef", count: 300_000)  // 4.8 MB: more than one write
        try AtomicFile.write(big.utf8, to: path, through: path + ".part", mode: 0o640, replacing: true)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == big)
        #expect(mode(path) == 0o640)
        #expect(try names() == ["summary.json"])
        let umask0 = umask(0o077)
        defer { umask(umask0) }
        try AtomicFile.write([UInt8]("secret".utf8), to: path, through: dir + "/.summary.json.1.tmp", mode: 0o604, replacing: true, syncFolder: true)
        #expect(mode(path) == 0o604, "the mode asked for, whatever the umask")
        #expect(try names() == ["summary.json"])
    }

    @Test func aFailedReplacementLeavesTheOldFileAndNoTemporaryFile() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/report.html"
        try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)  // cannot be renamed over
        #expect {
            try AtomicFile.write("new".utf8, to: path, through: path + ".part", mode: 0o640, replacing: true)
        } throws: { error in
            guard let f = error as? AtomicFile.Failure else { return false }
            return f.step == .place && f.description == "cannot replace \(path): \(String(cString: strerror(f.code)))"
        }
        #expect(try names() == ["report.html"])
        #expect(FileManager.default.fileExists(atPath: path + "/inside"))
    }

    @Test func creatingOnlyNeverReplacesAFileAndKeepsWhatWasWritten() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/transcript.vtt"
        try AtomicFile.write("first".utf8, to: path, through: path + ".part", mode: 0o600, replacing: false)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "first")
        #expect(mode(path) == 0o600)
        #expect(try names() == ["transcript.vtt"])
        #expect {
            try AtomicFile.write("second".utf8, to: path, through: path + ".part", mode: 0o600, replacing: false)
        } throws: { error in
            guard let f = error as? AtomicFile.Failure else { return false }
            return f.step == .place && f.code == EEXIST
                && f.description == "cannot write \(path): \(String(cString: strerror(EEXIST))) (what was written is in \(path).part)"
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "first")
        #expect(try String(contentsOfFile: path + ".part", encoding: .utf8) == "second")
    }

    @Test func creatingOnlyLeavesSomeoneElsesTemporaryFileAlone() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/summary.json"
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: path + ".part"))
        #expect {
            try AtomicFile.write("mine".utf8, to: path, through: path + ".part", mode: 0o600, replacing: false)
        } throws: { error in
            (error as? AtomicFile.Failure).map { $0.step == .create && $0.code == EEXIST } ?? false
        }
        #expect(try String(contentsOfFile: path + ".part", encoding: .utf8) == "theirs")
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

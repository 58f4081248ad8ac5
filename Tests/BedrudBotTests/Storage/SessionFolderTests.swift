import BedrudBot
import BedrudMedia
import Foundation
import Testing

/// `SessionFolder`: a session folder belongs to one writer. Created with an exclusive mkdir,
/// files with O_EXCL, a flock held while it is written.
@Suite struct SessionFolderTests {
    func tempDir() throws -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("folders-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    func mode(_ path: String) -> mode_t {
        var st = stat()
        stat(path, &st)
        return st.st_mode & 0o777
    }

    @Test func writersStartingTogetherGetAFolderEach() async throws {
        let root = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let base = root + "/standup/2026-12-01_101500"
        // Eight writers at the same instant, on threads of their own.
        let folders = try await withThrowingTaskGroup(of: SessionFolder.self) { group in
            for _ in 0..<8 {
                group.addTask { try SessionFolder.create(base: base, directoryMode: 0o750, fileMode: 0o640) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let paths = Set(folders.map(\.path))
        #expect(paths.count == 8)
        #expect(paths == Set([base] + (2...8).map { "\(base)-\($0)" }))
        for f in folders {
            #expect(mode(f.path) == 0o750)
            #expect(SessionFolder.isBusy(f.path), "the writer holds its folder")
            #expect(throws: SessionFolder.Busy.self) { try SessionFolder.adopt(f.path) }
        }
        #expect(mode(root + "/standup") == 0o750)
        folders[0].release()
        // Another test of this process may be starting a program at this moment: between its
        // fork and exec the child holds a copy of every descriptor, the lock's too (O_CLOEXEC
        // closes it only at exec). So the lock is free within moments, not at once.
        var busy = SessionFolder.isBusy(folders[0].path)
        for _ in 0..<200 where busy {
            usleep(10_000)
            busy = SessionFolder.isBusy(folders[0].path)
        }
        #expect(!busy, "the folder is still locked 2 s after its writer released it")
    }

    @Test func filesAreNeverSharedOrTruncated() throws {
        let root = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = try SessionFolder.create(base: root + "/s", directoryMode: 0o750, fileMode: 0o640)
        // Someone else's file with the name we would pick: it is left alone, we take -2.
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: folder.path + "/Alice.opus.part"))
        let a = try folder.makeSink(for: .participant(identity: "u1", name: "Alice"))
        let b = try folder.makeSink(for: .participant(identity: "u2", name: "alice"))
        try a.close(clean: true)
        try b.close(clean: true)
        #expect(try String(contentsOfFile: folder.path + "/Alice.opus.part", encoding: .utf8) == "theirs")
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(names == ["Alice.opus.part", "Alice-2.opus", "alice-3.opus"], "\(names)")
        #expect(mode(folder.path + "/Alice-2.opus") == 0o640)
        // Text files: exclusive, and never replace what is there.
        try folder.writeFinished("summary.json", "{}\n")
        #expect(mode(folder.path + "/summary.json") == 0o640)
        #expect(throws: (any Error).self) { try folder.writeFinished("summary.json", "{\"again\":1}\n") }
        #expect(try String(contentsOfFile: folder.path + "/summary.json", encoding: .utf8) == "{}\n")
        let fd = try folder.createFile("events.jsonl", append: true)
        close(fd)
        #expect(throws: (any Error).self) { _ = try folder.createFile("events.jsonl", append: true) }
    }
}

import BedrudBot
import BedrudMedia
import Foundation
import Testing

/// Rotation's file names: the first segment keeps its name, later ones are
/// numbered before the extension; a participant who already has such a name keeps it.
@Suite struct SessionFolderSegmentTests {
    @Test func segmentsAreNumberedAfterTheFirstFile() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("segments-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = try SessionFolder.create(base: root + "/s", directoryMode: 0o750, fileMode: 0o640)
        let alice = RecordingOutput.participant(identity: "u1", name: "Alice")
        // Someone named "Alice.002" joined first: Alice's second segment steps aside.
        let other = try folder.makeSink(for: .participant(identity: "u2", name: "Alice.002"))
        let sinks = [
            try folder.makeSink(for: alice), try folder.makeSink(for: alice, segment: 2), try folder.makeSink(for: alice, segment: 3),
            try folder.makeSink(for: .room), try folder.makeSink(for: .room, segment: 2), other,
        ]
        #expect(folder.currentPaths[alice] == folder.path + "/Alice.003.opus")
        #expect(folder.paths[alice] == folder.path + "/Alice.opus", "summary.json names the first segment")
        for s in sinks { try s.close(clean: true) }
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(names == ["Alice.opus", "Alice.002-2.opus", "Alice.003.opus", "Alice.002.opus", "room.opus", "room.002.opus"], "\(names)")
        #expect(SessionFolder.segmentPath("/r/Bob Chen.opus", segment: 12) == "/r/Bob Chen.012.opus")
        #expect(SessionFolder.segmentPath("/r/room.opus", segment: 1234) == "/r/room.1234.opus")
        // A segment of an output that never had a first file is refused, not invented.
        #expect(throws: (any Error).self) { try folder.makeSink(for: .participant(identity: "u9", name: "Nobody"), segment: 2) }
        folder.release()
    }
}

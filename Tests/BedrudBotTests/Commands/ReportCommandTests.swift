import Foundation
import Testing
import TestSupport

/// `bedrud-bot report` as a user runs it.
@Suite struct ReportCommandTests {
    @Test func writesThePageNamesTheInstanceAndRefusesAFolderWithoutEvents() async throws {
        let user = try CLIUser()
        _ = try user.writeFile(".config/bedrud-bot/config", "[instance work]\nurl = https://meet.example.com\n")
        let dir = try RecordingsCommandTests.finishedSession(user.home.path + "/rec/standup/2026-11-28_090000", room: "standup", started: "2026-11-28T09:00:00.000Z")
        try #"{"room":"standup","server":"https://meet.example.com","started":"2026-11-28T09:00:00.000Z","duration_ms":754000,"end_reason":"signal","participants":[]}"#
            .write(toFile: dir + "/summary.json", atomically: true, encoding: .utf8)
        let r = try await user.expect(0, ["report", dir, "--open"])
        #expect(r.stdout == dir + "/report.html\n")
        #expect(r.stderr == "No display (DISPLAY and WAYLAND_DISPLAY are unset): open \(dir)/report.html in a browser.\n", "\(r.stderr)")
        let page = try String(contentsOfFile: dir + "/report.html", encoding: .utf8)
        #expect(page.contains("<dt>Instance</dt><dd><bdi>work</bdi></dd>"))
        #expect(page.contains("<dt>Participants</dt><dd>2: <bdi>A</bdi>, <bdi>B</bdi></dd>"))

        let empty = user.home.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let bad = try await user.expect(5, ["report", empty])
        #expect(bad.stderr == "bedrud-bot: \(empty) is not a session folder (it has no readable events.jsonl)\n", "\(bad.stderr)")
        try await user.expect(2, ["report"])
    }
}

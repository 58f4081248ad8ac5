import BedrudCore
@testable import BedrudMedia
import Testing
@testable import BedrudBot

/// The live block as a pure function (state → lines), and the bytes that keep event lines
/// out of it.
@Suite struct TerminalViewTests {
    static let plain = TerminalView.Style(width: 80, height: 24, color: false)

    static func state(_ rows: [TerminalView.Row]) -> TerminalView.State {
        .init(elapsedSeconds: 65.4, rows: rows, bytesWritten: 1_234_567, freeDiskBytes: 18_400_000_000)
    }

    @Test func oneRowPerParticipantUnderTheHeader() {
        let lines = TerminalView.render(Self.state([
            .init(name: "Alice Martin", speaking: true, levelDBFS: -18, muted: false, spokenSeconds: 41.7, loss: 0),
            .init(name: "Bob Chen", speaking: false, levelDBFS: -70, muted: true, spokenSeconds: 3, loss: 0.0123),
            .init(name: "Dial-in", muted: nil),
        ]), style: Self.plain)
        #expect(lines == [
            "── 1m05s ── 3 here ── 1.2 MB written ── 18.4 GB free ───────────────────────────",
            " ● Alice Martin          [#######---]  mic on       41s spoken  loss 0.0%",
            "   Bob Chen              [----------]  muted         3s spoken  loss 1.2%",
            "   Dial-in               [----------]  no audio      0s spoken  loss -",
        ])
        #expect(lines.allSatisfy { TerminalView.width($0) <= 80 })
    }

    @Test func notRecordingShowsNoBytesAndAnEmptyRoomSaysSo() {
        let lines = TerminalView.render(.init(elapsedSeconds: 4, rows: [], bytesWritten: nil, freeDiskBytes: nil), style: Self.plain)
        #expect(lines[0].hasPrefix("── 4s ── 0 here ─"))
        #expect(!lines[0].contains("written"))
        #expect(lines[1] == "   nobody else here yet")
    }

    @Test func everyLineFitsANarrowTerminalAndWideNamesCountTwoColumns() {
        let style = TerminalView.Style(width: 40, height: 24, color: false)
        let lines = TerminalView.render(Self.state([
            .init(name: "明日の会議のための非常に長い名前です", speaking: true, levelDBFS: -10),
            .init(name: "مریم احمدی", levelDBFS: -30),
        ]), style: style)
        for line in lines { #expect(TerminalView.width(line) <= 40, "\(line)") }
        #expect(lines[1].contains("明日の会議のための… "))  // 20 columns: 9 wide characters, the ellipsis, a space
        #expect(lines[2].contains("مریم احمدی"))
    }

    @Test func namesAreSanitised() {
        let lines = TerminalView.render(Self.state([.init(name: "Eve\u{1B}]0;owned\u{07}\u{1B}[2J\nroot#")]), style: Self.plain)
        #expect(!lines.joined().contains("\u{1B}"))
        #expect(!lines.joined().contains("\n"))
        #expect(lines[1].hasPrefix("   Eve\\x1b]0;owned\\x0"))
    }

    @Test func aShortTerminalGetsASummaryRowInsteadOfScrolling() {
        let rows = (1...30).map { TerminalView.Row(name: "P\($0)") }
        let lines = TerminalView.render(Self.state(rows), style: .init(width: 80, height: 10, color: false))
        #expect(lines.count == 8)  // height - 2: the block never fills the screen
        #expect(lines.last == "   … and 24 more")
    }

    @Test func colourOnlyWhenAllowed() {
        let rows = [TerminalView.Row(name: "Alice", speaking: true, levelDBFS: -20)]
        let coloured = TerminalView.render(Self.state(rows), style: .init(width: 80, height: 24, color: true))
        #expect(coloured[1].hasPrefix(" \u{1B}[1;32m●\u{1B}[0m Alice"))
        #expect(TerminalView.render(Self.state(rows), style: Self.plain).joined().contains("\u{1B}") == false)
        #expect(TerminalCapabilities.color(environment: [:]))
        #expect(!TerminalCapabilities.color(environment: ["NO_COLOR": "1"]))
        #expect(TerminalCapabilities.color(environment: ["NO_COLOR": ""]))  // no-color.org: present and not empty
    }

    @Test func dumbOrQuietOrNotATerminalMeansNoBlock() {
        #expect(TerminalCapabilities.liveBlock(stdoutIsTerminal: true, quiet: false, environment: ["TERM": "xterm-256color"]))
        #expect(TerminalCapabilities.liveBlock(stdoutIsTerminal: true, quiet: false, environment: ["TERM": "xterm", "NO_COLOR": "1"]))
        #expect(!TerminalCapabilities.liveBlock(stdoutIsTerminal: true, quiet: false, environment: ["TERM": "dumb"]))
        #expect(!TerminalCapabilities.liveBlock(stdoutIsTerminal: true, quiet: false, environment: [:]))
        #expect(!TerminalCapabilities.liveBlock(stdoutIsTerminal: true, quiet: true, environment: ["TERM": "xterm"]))
        #expect(!TerminalCapabilities.liveBlock(stdoutIsTerminal: false, quiet: false, environment: ["TERM": "xterm"]))
    }

    // MARK: - The block on the screen

    @Test func anEventLineErasesTheBlockAndRedrawsItBelow() {
        var block = TerminalBlock()
        block.terminalDescriptors = [1, 2]
        #expect(block.show(["head", "row 1", "row 2"]) == "\u{1B}[?7lhead\nrow 1\nrow 2\n\u{1B}[?7h")
        let draw = "\u{1B}[?7lhead\nrow 1\nrow 2\n\u{1B}[?7h"
        let event = block.around("12:00:01 Alice joined\n", fd: 1)
        #expect(event.before == "" && event.after == "")
        #expect(event.text == "\r\u{1B}[3A\u{1B}[J" + "12:00:01 Alice joined\n" + draw)
        // A note on stderr: erase on stdout, the note on stderr, the block again on stdout.
        let note = block.around("Recording into …\n", fd: 2)
        #expect(note == ("\r\u{1B}[3A\u{1B}[J", "Recording into …\n", draw))
        // A new block of another height replaces the old one exactly.
        #expect(block.show(["head", "row 1"]) == "\r\u{1B}[3A\u{1B}[J\u{1B}[?7lhead\nrow 1\n\u{1B}[?7h")
        #expect(block.show([]) == "\r\u{1B}[2A\u{1B}[J")
        #expect(block.around("after\n", fd: 1) == ("", "after\n", ""))
    }

    @Test func stderrElsewhereIsNotTouched() {
        var block = TerminalBlock()
        block.terminalDescriptors = [1]
        _ = block.show(["head"])
        #expect(block.around("log line\n", fd: 2) == ("", "log line\n", ""))
    }

    // MARK: - Rows from the room and the media pipeline

    @Test func rowsComeFromTheRoomAndTheMediaStats() {
        var alice = ParticipantMediaStats(identity: "alice")
        alice.packets = 990
        alice.lost = 10
        alice.speaking = true
        alice.levelDBFS = -20
        let participants = [
            MeetingParticipant(identity: "alice", sid: "PA_1", name: "Alice Martin", tracks: [MeetingTrack(sid: "TR_a", kind: .audio)]),
            MeetingParticipant(identity: "bob", sid: "PA_2", name: "", tracks: [MeetingTrack(sid: "TR_b", kind: .audio, muted: true)]),
            MeetingParticipant(identity: "cam", sid: "PA_3", name: "Camera only", tracks: [MeetingTrack(sid: "TR_v", kind: .video)]),
        ]
        let rows = StatusReporter.rows(participants: participants, media: [alice], spokenSeconds: ["alice": 12.5])
        let expected: [TerminalView.Row] = [
            TerminalView.Row(name: "Alice Martin", speaking: true, levelDBFS: -20, muted: false, spokenSeconds: 12.5, loss: 0.01),
            TerminalView.Row(name: "bob", speaking: false, levelDBFS: -120, muted: true, spokenSeconds: 0, loss: nil),
            TerminalView.Row(name: "Camera only", muted: nil),
        ]
        #expect(rows == expected)
    }
}

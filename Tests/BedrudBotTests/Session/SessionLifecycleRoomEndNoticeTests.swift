@testable import BedrudBot
import BedrudCore
import Testing

/// A room-end notice on topic `system` (Bedrud v0.12 lkutil.go `SendSystemMessage`) ends the
/// session as `room_ended` with exit 10 (docs/CLI.md), the server's words in the detail.
@Suite struct SessionLifecycleRoomEndNoticeTests {
    typealias L = SessionLifecycle

    @Test func theNoticeEndsTheSessionWithTheServersText() {
        var rules = L.Rules()
        rules.minFreeBytes = 0  // no free-space samples in this transcript
        var l = L(rules: rules, recording: true)
        _ = l.handle(.started, at: 0)
        _ = l.handle(.people(1), at: 1)
        let detail = "the server ended the meeting (room_ended): The host ended the meeting for everyone"
        #expect(l.handle(.roomEndNotice(event: "room_ended", message: "The host ended the meeting for everyone"), at: 5)
                == [.leave(.roomEnded, detail: detail)])
        #expect(l.handle(.roomEnded(.left), at: 5.2) == [])
        #expect(l.ending == L.Ending(reason: .roomEnded, exitCode: .removed, detail: detail))
    }

    @Test func hostileTextIsMadeSafeAndBounded() {
        var l = L(rules: L.Rules(), recording: false)
        let actions = l.handle(.roomEndNotice(event: "room_deleted", message: "\u{1B}[2Jgone\n" + String(repeating: "x", count: 5000)), at: 1)
        guard case .leave(.roomEnded, let detail) = actions.last else { Issue.record("no leave: \(actions)"); return }
        #expect(!detail.contains("\u{1B}") && !detail.contains("\n"))
        #expect(detail.count < 400)
    }
}

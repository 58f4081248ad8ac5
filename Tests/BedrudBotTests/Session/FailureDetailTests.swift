import BedrudCore
import Testing
@testable import BedrudBot

/// The final line and exit code of a room that ended badly: each cause in its documented
/// class (docs/CLI.md): the network 7, the server's fault 9, a refusal 6 only when the
/// server said so; "could not join" for a first join, "re-established" after a loss.
@Suite struct FailureDetailTests {
    @Test func iceThatNeverConnectedOnAFirstJoin() {
        let reason = RoomDisconnectReason.network(.ice)
        #expect(reason.exitCode == .network)
        #expect(RoomEventFormatter.finalLine(reason, everConnected: false, connectError: nil, transportError: nil, serverProblem: nil)
                == "could not join the room (media connection (ICE/TURN) failed)")
        #expect(RoomEventFormatter.finalLine(reason, everConnected: false, connectError: nil,
                                             transportError: "ICE failed: no candidate pair succeeded", serverProblem: nil)
                == "could not join the room (media connection (ICE/TURN) failed): ICE failed: no candidate pair succeeded")
    }

    @Test func aFirstJoinThatTimedOut() {
        #expect(RoomEventFormatter.finalLine(.network(.timeout), everConnected: false,
                                             connectError: "connect to 127.0.0.1:9 timed out", transportError: nil, serverProblem: nil)
                == "could not join the room (timed out): connect to 127.0.0.1:9 timed out")
    }

    @Test func aLostConnectionThatCouldNotBeReestablished() {
        #expect(RoomEventFormatter.finalLine(.network(.refused), everConnected: true,
                                             connectError: "connection refused", transportError: nil, serverProblem: nil)
                == "the connection could not be re-established (last attempt: connection refused): connection refused")
    }

    @Test func theServersFaultIsAProtocolErrorWithWhatItSent() {
        let reason = RoomDisconnectReason.protocolError
        #expect(reason.exitCode == .server)
        #expect(RoomEventFormatter.finalLine(reason, everConnected: false, connectError: nil, transportError: nil,
                                             serverProblem: "an offer the bot cannot answer (no fingerprint)")
                == "the server broke the signalling protocol: the server sent an offer the bot cannot answer (no fingerprint)")
        #expect(SessionLifecycle.ending(reason, stop: nil).exitCode == .server)
    }

    @Test func remoteTextInTheLineIsSanitisedAndCut() {
        let line = RoomEventFormatter.finalLine(.protocolError, everConnected: false, connectError: nil, transportError: nil,
                                                serverProblem: "an offer the bot cannot answer (\u{1B}[2J" + String(repeating: "x", count: 5_000) + ")")
        #expect(!line.contains("\u{1B}"))
        #expect(line.count < 500)
    }

    /// LiveKit refusing the `/rtc` upgrade: each status in its class (docs/CLI.md), the line
    /// saying what the refusal means and then what the server said; never "room full?".
    @Test(arguments: [
        (400, ExitCode.rejected, "the media server refused the join request as given (HTTP 400)"),
        (403, .forbidden, "the server does not allow this join (HTTP 403)"),
        (404, .notFound, "the media server has no such room or route (HTTP 404)"),
        (429, .rejected, "the media server refused the join request as given (HTTP 429)"),
        (500, .server, "the media server failed (HTTP 500)"),
        (503, .server, "the media server failed (HTTP 503)"),
        (200, .server, "the media server answered the join with HTTP 200, not a WebSocket upgrade"),
    ])
    func aRefusedUpgradeEndsInItsClass(status: Int, code: ExitCode, head: String) {
        let reason = RoomDisconnectReason.refused(status: status)
        #expect(reason.exitCode == code)
        #expect(SessionLifecycle.ending(reason, stop: nil).exitCode == code)
        let said = "LiveKit at http://127.0.0.1:7880 refused the connection with HTTP \(status): why\u{1B}[2J."
        for everConnected in [false, true] {
            let line = RoomSession.finalLine(reason, everConnected: everConnected, connectError: said, transportError: nil, serverProblem: nil,
                                             otherwise: SessionLifecycle.ending(reason, stop: nil).detail)
            #expect(line == head + ": LiveKit at http://127.0.0.1:7880 refused the connection with HTTP \(status): why\\x1b[2J.")
        }
        #expect(RoomSession.finalLine(reason, everConnected: false, connectError: nil, transportError: nil, serverProblem: nil) == head)
    }

    @Test func theTokenRefusedIsAuthenticationAndTheRoomNotFoundIsNotFound() {
        #expect(ExitCode(refusedUpgrade: 401) == .auth)
        #expect(RoomDisconnectReason.notAllowed.exitCode == .auth)
        #expect(RoomDisconnectReason.roomNotFound.exitCode == .notFound)
    }

    @Test func onlyTheServersOwnRefusalIsForbidden() {
        // `leave` with JOIN_FAILURE on a first join: the server said no.
        #expect(RoomDisconnectReason.joinFailure.exitCode == .forbidden)
    }
}

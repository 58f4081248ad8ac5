import BedrudProtocol
import Testing
import TestSupport
@testable import BedrudCore

/// LiveKit's refusals of the `/rtc` WebSocket upgrade: each status classified as LiveKit
/// means it (livekit `pkg/service`: rtcservice.go, utils.go, auth.go), the join token never
/// echoed, and each ending a first join with its own reason — 5xx only after one retry.
@Suite struct SignalClientRefusalTests {
    static let endpoint = "http://127.0.0.1:7880"
    static let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib3QifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"

    @Test(arguments: [
        (400, "no room name", SignalConnectFailure.rejected(status: 400)),
        (401, "invalid authorization token", .unauthorized(status: 401)),
        (403, "no permissions to access the room", .forbidden),
        (404, "requested room does not exist", .roomNotFound),
        (404, "404 page not found", .rejected(status: 404)),
        (409, "conflict", .rejected(status: 409)),
        (429, "", .rejected(status: 429)),
        (500, "could not start the session", .rejected(status: 500)),
        (503, "node has exceeded its configured limit", .rejected(status: 503)),
        (200, "hello", .rejected(status: 200)),
    ])
    func eachStatusIsClassified(status: Int, body: String, expected: SignalConnectFailure) {
        let e = SignalClient.classify(status: status, body: body, endpoint: Self.endpoint, token: Self.token)
        #expect(e.failure == expected)
        #expect(e.description.contains("HTTP \(status)") || expected == .roomNotFound, "\(e.description)")
        #expect(body.isEmpty || e.description.contains(body), "the server's reason is kept: \(e.description)")
        #expect(e.description.hasPrefix("LiveKit at \(Self.endpoint) "))
    }

    @Test func theTokenALiveKit401QuotesIsCutOut() {
        // auth.go:98 passes the verifier's error text through whole.
        let body = "invalid authorization token: could not verify \(Self.token)"
        let e = SignalClient.classify(status: 401, body: body, endpoint: Self.endpoint, token: Self.token)
        #expect(e.failure == .unauthorized(status: 401))
        #expect(!e.description.contains(Self.token) && !e.description.contains("c2lnbmF0dXJl"))
        #expect(e.description == "LiveKit at \(Self.endpoint) refused the join token (HTTP 401: invalid authorization token: could not verify [token]).")
        // A token the server quotes cut at 200 characters is cut out before the cut.
        let long = String(repeating: "x", count: 190) + " " + Self.token
        #expect(!SignalClient.classify(status: 400, body: long, endpoint: Self.endpoint, token: Self.token).description.contains("eyJ"))
    }

    @Test func anyJWTShapedTextIsCutOutToo() {
        // Another token than ours (a proxy's, or ours re-encoded) is still a secret.
        #expect(SignalClient.redact("bad eyJa.eyJb.sig, and eyJc.eyJd.e2 too", token: "") == "bad [token], and [token] too")
        // Text that only looks a little like one stays.
        #expect(SignalClient.redact("see eyJ.x or host.example.com:7880 (eyJabc)", token: "") == "see eyJ.x or host.example.com:7880 (eyJabc)")
        #expect(SignalClient.redact("a secret-token-value here", token: "secret-token-value") == "a [token] here")
        #expect(SignalClient.redact("", token: Self.token) == "")
    }

    /// A first join refused with each status: the reason it ends with and how many attempts.
    @Test(arguments: [
        (SignalConnectFailure.rejected(status: 400), RoomDisconnectReason.refused(status: 400), false),
        (.unauthorized(status: 401), .notAllowed, false),
        (.forbidden, .refused(status: 403), false),
        (.roomNotFound, .roomNotFound, false),
        (.rejected(status: 404), .refused(status: 404), false),
        (.rejected(status: 429), .refused(status: 429), false),
        (.rejected(status: 500), .refused(status: 500), true),
        (.rejected(status: 503), .refused(status: 503), true),
        (.rejected(status: 200), .refused(status: 200), false),
    ])
    func aFirstJoinEndsWithTheRefusal(failure: SignalConnectFailure, reason: RoomDisconnectReason, retried: Bool) {
        var t = RoomTranscript()
        t.feed(.connect(token: "tok"))
        let first = t.feed(.signalConnectFailed(failure))
        guard retried else {
            #expect(first.events == [.disconnected(reason)], "final at once")
            return
        }
        // LiveKit failing: once more with the same token, then give up with the status.
        #expect(first.events.isEmpty && first.startedTimers == [.retry: .ms(1_300)])
        t.advance(to: 1_300)
        #expect(t.fireDueTimers().opened == [SignalConnectRequest(token: "tok", mode: .join)])
        #expect(t.feed(.signalConnectFailed(failure)).events == [.disconnected(reason)])
    }

    /// A joined room whose resume was refused with 403 and that holds the fresh token of
    /// its rejoin (the session's grants may have changed: Bedrud is asked for a new one).
    static func rejoiningOnAFreshToken() -> RoomTranscript {
        var t = RoomTranscript()
        t.joinRoom()
        t.feed(.signalClosed)
        t.fireDueTimers()
        #expect(t.feed(.signalConnectFailed(.forbidden)).events == [.reconnecting(.full)])
        t.advance(to: 1_300)
        #expect(t.fireDueTimers().effects == [.fetchJoinToken])
        t.feed(.joinTokenReceived("fresh"))
        return t
    }

    @Test func a403OnAResumeRejoinsAndOnTheFreshTokenEnds() {
        var t = Self.rejoiningOnAFreshToken()
        #expect(t.feed(.signalConnectFailed(.forbidden)).events == [.disconnected(.refused(status: 403))])
    }

    /// A rejoin's fresh token refused as given (400, any 4xx but 401/403/404) ends the run
    /// with the status, as a first join does; a 5xx (LiveKit failing) goes on rejoining.
    @Test(arguments: [(400, true), (429, true), (503, false)])
    func aRejoinRefusedOnItsFreshTokenEndsUnlessTheServerIsFailing(status: Int, ends: Bool) {
        var t = Self.rejoiningOnAFreshToken()
        let refused = t.feed(.signalConnectFailed(.rejected(status: status)))
        if ends {
            #expect(refused.events == [.disconnected(.refused(status: status))])
        } else {
            #expect(refused.events.isEmpty && !refused.startedTimers.isEmpty, "\(refused)")
        }
    }
}

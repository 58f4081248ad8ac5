@testable import BedrudBot
import BedrudRTC
import Testing

/// The ICE and DTLS stages of `smoke` as transcripts of the two sides' snapshots.
@Suite struct SmokeConnectivityTests {
    static let hint = " (is UDP to the media server open?)"
    static let mismatch = "DTLS peer certificate does not match the fingerprint in its SDP (expected sha-256 AA, got sha-256 BB); the connection was refused."
    static let pair = "127.0.0.1:5000 host/udp <-> 127.0.0.1:6000 host/udp"

    func ice(_ sides: [SmokeLink], timedOut: Bool = false) -> SmokeConnectivity.Verdict {
        SmokeConnectivity.ice(sides, timedOut: timedOut, timeoutSeconds: 10, hint: Self.hint)
    }

    /// CI saw this order: the listener's DTLS failed (wrong fingerprint) before the publisher
    /// had selected its pair, and the run failed at ICE (24) instead of DTLS (25).
    @Test func aDTLSFailureOnOneSideWaitsForTheOtherSidesPair() {
        var listener = SmokeLink(name: "listener", state: .failed, lastError: Self.mismatch)
        var publisher = SmokeLink(name: "publisher", state: .connecting)
        #expect(ice([listener, publisher]) == .wait)
        publisher.pair = Self.pair
        #expect(ice([listener, publisher]) == .pass("listener closed by DTLS, publisher host/udp ↔ host/udp"))
        #expect(SmokeConnectivity.pairs([listener, publisher]) == "listener (closed after a DTLS failure); publisher \(Self.pair)")

        publisher.state = .failed
        publisher.lastError = Self.mismatch
        publisher.pair = nil
        #expect(SmokeConnectivity.dtls([listener, publisher], timedOut: false, timeoutSeconds: 10)
            == .fail("the listener's connection failed: \(Self.mismatch)"))
        listener.ended = "the server closed the connection"
        #expect(ice([listener, publisher]) == .pass("listener closed by DTLS, publisher closed by DTLS"),
                "a side that reached DTLS and was then dropped still passed ICE")
    }

    @Test func aFailureBeforeAnyPairFailsICEWithTheHint() {
        let listener = SmokeLink(name: "listener", pair: Self.pair, state: .connecting)
        let publisher = SmokeLink(name: "publisher", state: .failed, lastError: "ICE failed: no candidate pair")
        #expect(ice([listener, publisher]) == .fail("the publisher's connection failed: ICE failed: no candidate pair" + Self.hint))

        let dropped = SmokeLink(name: "publisher", state: .connecting, ended: "the server closed the connection")
        #expect(ice([listener, dropped]) == .fail("the publisher was disconnected: the server closed the connection" + Self.hint))
    }

    @Test func noPairBeforeTheDeadlineNamesTheLastError() {
        let listener = SmokeLink(name: "listener", pair: Self.pair, state: .connecting)
        let publisher = SmokeLink(name: "publisher", state: .connecting, lastError: "no answer to STUN checks")
        #expect(ice([listener, publisher]) == .wait)
        #expect(ice([listener, publisher], timedOut: true)
            == .fail("no ICE candidate pair within 10 s" + Self.hint + ": no answer to STUN checks"))
    }

    @Test func dtlsPassesOnceBothSidesAreConnected() {
        var sides = [SmokeLink(name: "listener", pair: Self.pair, state: .connected, srtpProfile: "SRTP_AEAD_AES_128_GCM"),
                     SmokeLink(name: "publisher", pair: Self.pair, state: .connecting)]
        #expect(SmokeConnectivity.dtls(sides, timedOut: false, timeoutSeconds: 10) == .wait)
        #expect(SmokeConnectivity.dtls(sides, timedOut: true, timeoutSeconds: 10) == .fail("the DTLS handshake did not finish within 10 s"))
        sides[1].state = .connected
        #expect(SmokeConnectivity.dtls(sides, timedOut: false, timeoutSeconds: 10) == .pass("SRTP_AEAD_AES_128_GCM keys on both sides"))
    }
}

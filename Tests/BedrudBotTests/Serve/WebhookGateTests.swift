@testable import BedrudBot
import BedrudNet
import Testing

/// `WebhookGate`: Bedrud's signature (v0.12.0 queue/handler_dispatch_webhook.go: HMAC-SHA256
/// of the raw body, `sha256=<hex>`), the five-minute window, and replays.
@Suite struct WebhookGateTests {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    static let now = RFC3339.seconds("2026-12-06T10:00:00Z")!

    static func body(event: String = "participant.joined", at time: String = "2026-12-06T10:00:00Z") -> [UInt8] {
        Array("{\"data\":{\"roomId\":\"r1\",\"roomName\":\"standup\",\"userId\":\"u1\"},\"event\":\"\(event)\",\"timestamp\":\"\(time)\"}".utf8)
    }
    static func sign(_ body: [UInt8], _ key: [UInt8] = secret) -> String { "sha256=" + HMACSHA256.hex(key: key, message: body) }

    @Test func theHMACIsRFC4231s() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        #expect(HMACSHA256.hex(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func aSignedFreshEnvelopeIsAcceptedOnceThenItIsAReplay() {
        var g = WebhookGate()
        let b = Self.body()
        let expected = [Self.sign(b)]
        #expect(g.judge(body: b, signatureHeader: Self.sign(b), expected: expected, now: Self.now)
                == .accept(WebhookEnvelope(event: "participant.joined", timestamp: "2026-12-06T10:00:00Z",
                                           data: .init(roomId: "r1", roomName: "standup", userId: "u1"))))
        #expect(g.judge(body: b, signatureHeader: Self.sign(b), expected: expected, now: Self.now + 1) == .refuse(.replay))
        #expect(WebhookGate.Refusal.replay.status == 409)
    }

    @Test func aMissingWrongOrOtherSecretsSignatureIs401() {
        var g = WebhookGate()
        let b = Self.body()
        let expected = [Self.sign(b)]
        #expect(g.judge(body: b, signatureHeader: nil, expected: expected, now: Self.now) == .refuse(.signature))
        #expect(g.judge(body: b, signatureHeader: Self.sign(b, Array("other".utf8)), expected: expected, now: Self.now) == .refuse(.signature))
        #expect(g.judge(body: b, signatureHeader: Self.sign(b).uppercased(), expected: expected, now: Self.now) == .refuse(.signature))
        var tampered = b
        tampered[tampered.count - 3] ^= 1
        #expect(g.judge(body: tampered, signatureHeader: Self.sign(b), expected: [Self.sign(tampered)], now: Self.now) == .refuse(.signature),
                "the signature is over the raw body")
        #expect(WebhookGate.Refusal.signature.status == 401)
    }

    @Test func aTimestampMoreThanFiveMinutesOffIsStale() {
        var g = WebhookGate()
        for (t, ok) in [("2026-12-06T09:55:00Z", true), ("2026-12-06T09:54:59Z", false), ("2026-12-06T10:05:00Z", true), ("2026-12-06T10:05:01Z", false)] {
            let b = Self.body(at: t)
            let v = g.judge(body: b, signatureHeader: Self.sign(b), expected: [Self.sign(b)], now: Self.now)
            if ok { #expect(v != .refuse(.stale), "\(t)") } else { #expect(v == .refuse(.stale), "\(t)") }
        }
    }

    @Test func aSignedBodyThatIsNoEnvelopeIsMalformed() {
        var g = WebhookGate()
        for text in ["", "[]", "{\"event\":\"ping\"}", "{\"event\":\"ping\",\"timestamp\":\"yesterday\"}", "\u{FF}\u{FE}"] {
            let b = Array(text.utf8)
            #expect(g.judge(body: b, signatureHeader: Self.sign(b), expected: [Self.sign(b)], now: Self.now) == .refuse(.malformed), "\(text)")
        }
    }

    @Test func rfc3339ReadsGoesFormatsAndRefusesTheRest() {
        #expect(RFC3339.seconds("1970-01-01T00:00:00Z") == 0)
        #expect(RFC3339.seconds("2026-12-06T10:00:00Z") == 1_796_551_200)
        #expect(RFC3339.seconds("2026-12-06T11:00:00+01:00") == 1_796_551_200)
        #expect(RFC3339.seconds("2026-12-06T10:00:00.5Z") == 1_796_551_200.5)
        for bad in ["2026-12-06", "2026-13-06T10:00:00Z", "2026-12-06T10:00:00", "2026-12-06T10:00:00Zjunk", "x026-12-06T10:00:00Z"] {
            #expect(RFC3339.seconds(bad) == nil, "\(bad)")
        }
    }

    @Test func shardsAndListenAddressesParseAsWritten() {
        #expect(ServeShard("0/1") == ServeShard("0/1"))
        for bad in ["1/1", "-1/2", "0/0", "a/b", "1", "0/1001", "0/1/2"] { #expect(ServeShard(bad) == nil, "\(bad)") }
        // The bucket is FNV-1a: the same in every replica and every version.
        #expect(ServeShard.bucket("", of: 1000) == Int(0xcbf2_9ce4_8422_2325 as UInt64 % 1000))
        #expect(ListenAddress("127.0.0.1:8095") == ListenAddress("127.0.0.1:8095"))
        #expect(ListenAddress("[::1]:0")?.host == "::1")
        #expect(ListenAddress("[::1]:0")?.description == "[::1]:0")
        for bad in ["8095", "host", ":8095", "127.0.0.1:99999", "::1:8095", "a b:1", "[::1]8095"] { #expect(ListenAddress(bad) == nil, "\(bad)") }
    }
}

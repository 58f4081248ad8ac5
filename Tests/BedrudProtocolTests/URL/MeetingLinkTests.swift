import BedrudProtocol
import Foundation
import Testing

/// Every link shape Bedrud's apps accept (bedrud-api.md §5.10), plus bare room names.
@Suite struct MeetingLinkTests {
    static let accepted: [(String, String, String)] = [
        ("https://server.com/c/my-room", "https://server.com", "my-room"),
        ("https://server.com/m/team-standup", "https://server.com", "team-standup"),
        ("server.com/c/my-room", "https://server.com", "my-room"),
        ("example.org/m/standup", "https://example.org", "standup"),
        ("https://server.com:8080/c/my-room", "https://server.com:8080", "my-room"),
        ("server.com:8080/c/my-room", "https://server.com:8080", "my-room"),
        ("http://localhost/c/test-room", "http://localhost", "test-room"),
        ("http://localhost:3000/m/dev-room", "http://localhost:3000", "dev-room"),
        ("  https://server.com/c/my-room\n", "https://server.com", "my-room"),
        ("https://server.com/c/550e8400-e29b-41d4-a716-446655440000", "https://server.com", "550e8400-e29b-41d4-a716-446655440000"),
        ("https://server.com/c/room/extra", "https://server.com", "room"),
        ("https://meet.company.com/c/standup", "https://meet.company.com", "standup"),
        ("https://server.com/m/standup?x=1#y", "https://server.com", "standup"),
        ("http://[::1]:8090/m/v6", "http://[::1]:8090", "v6"),
    ]

    @Test(arguments: accepted)
    func acceptsLinks(input: String, server: String, room: String) throws {
        guard case .link(let s, let r) = try #require(MeetingTarget(input)) else {
            Issue.record("not a link: \(input)")
            return
        }
        #expect(s.origin == server)
        #expect(r == room)
    }

    @Test(arguments: ["", "https://server.com", "https://server.com/c/", "https://server.com/x/room", "https://server.com/room", "https:///c/room", "two words"])
    func rejects(_ input: String) {
        #expect(MeetingTarget(input) == nil)
    }

    @Test func bareNames() {
        #expect(MeetingTarget("standup") == .roomName("standup"))
        #expect(MeetingTarget(" weekly-sync ") == .roomName("weekly-sync"))
    }

    @Test func jwtClaims() throws {
        func b64(_ s: String) -> String {
            Data(s.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        let token = b64(#"{"alg":"HS256"}"#) + "." + b64(#"{"sub":"u1","exp":1000,"accesses":["user","superadmin"],"name":"Ré"}"#) + ".sig"
        let c = try #require(JWTClaims(token: token))
        #expect(c.subject == "u1" && c.expiresAt == 1000 && c.name == "Ré")
        #expect(c.accesses == ["user", "superadmin"])
        #expect(c.isExpired(now: 980))  // within the 30 s leeway
        #expect(!c.isExpired(now: 900))
        let noExp = b64("{}") + "." + b64(#"{"sub":"x"}"#) + ".s"
        #expect(try #require(JWTClaims(token: noExp)).isExpired(now: 0))
        #expect(JWTClaims(token: "not.a.jwt") == nil)
        #expect(JWTClaims(token: "abc") == nil)
    }
}

import BedrudProtocol
import Testing
@testable import BedrudRTC

@Suite("ICE candidates and servers")
struct ICECandidateTests {
    @Test("Candidate forms LiveKit, aiortc and libnice produce", arguments: [
        "candidate:1 1 UDP 2015363327 127.0.0.1 40000 typ host",
        "a=candidate:16572de626da4e5384a0ce2d0d93678a 1 udp 2130706431 127.0.0.1 54174 typ host",
        "candidate:842163049 1 udp 1677729535 203.0.113.7 50123 typ srflx raddr 10.0.0.2 rport 50123 generation 0 ufrag abcd network-id 1 network-cost 10",
        "candidate:3 1 TCP 1015021823 10.0.0.2 9 typ host tcptype active",
        "candidate:4 1 tcp 1518280447 2001:db8::1 7881 typ host tcptype passive",
        "candidate:5 1 udp 16777215 198.51.100.9 3478 typ relay raddr 0.0.0.0 rport 0",
    ])
    func valid(line: String) throws {
        let c = try ICECandidate(parsing: line)
        #expect(c.component == 1)
        let again = try ICECandidate(parsing: c.candidateString)
        #expect(again == c)
    }

    @Test("Fields are read")
    func fields() throws {
        let c = try ICECandidate(parsing: "candidate:842163049 1 udp 1677729535 203.0.113.7 50123 typ srflx raddr 10.0.0.2 rport 50123 generation 0 ufrag abcd")
        #expect(c.foundation == "842163049" && c.transport == .udp && c.priority == 1_677_729_535)
        #expect(c.address == "203.0.113.7" && c.port == 50123 && c.kind == .srflx)
        #expect(c.relatedAddress == "10.0.0.2" && c.relatedPort == 50123)
        #expect(c.extensions == ["generation": "0", "ufrag": "abcd"])
    }

    @Test("Bad candidates are refused", arguments: [
        "", "candidate:", "candidate:1 1 udp 1 127.0.0.1 1 typ", "candidate:1 1 sctp 1 127.0.0.1 1 typ host",
        "candidate:1 1 udp 1 abc.local 1 typ host", "candidate:1 1 udp 1 not-an-ip 1 typ host",
        "candidate:1 1 udp 99999999999 127.0.0.1 1 typ host", "candidate:1 1 udp 1 127.0.0.1 70000 typ host",
        "candidate:1 1 udp 1 127.0.0.1 1 typ weird", "candidate:1 1 udp 1 127.0.0.1 1 typ host generation",
        "candidate:1 1 tcp 1 127.0.0.1 1 typ host", "candidate:1 0 udp 1 127.0.0.1 1 typ host",
        "candidate:1 1 udp 1 127.0.0.1 1 typ srflx raddr nope rport 1", "candidate:!! 1 udp 1 127.0.0.1 1 typ host",
    ])
    func invalid(line: String) {
        #expect(throws: ICECandidateError.self) { try ICECandidate(parsing: line) }
    }

    @Test("mDNS candidates get their own error")
    func mdns() {
        do {
            _ = try ICECandidate(parsing: "candidate:1 1 udp 1 1f4712db-ea17-4bcf-a596-105139dfd8bf.local 5000 typ host")
            Issue.record("accepted an mDNS candidate")
        } catch {
            #expect(error.description.contains("mDNS"))
        }
    }

    @Test("LiveKit trickle JSON: null usernameFragment, end-of-candidates, and our own output")
    func json() throws {
        let server = try #require(ICECandidateInit(json: #"{"candidate":"candidate:1 1 udp 2130706431 203.0.113.7 50123 typ host","sdpMid":"0","sdpMLineIndex":0,"usernameFragment":null}"#))
        #expect(server.sdpMid == "0" && server.sdpMLineIndex == 0 && server.usernameFragment == nil && !server.isEndOfCandidates)
        let end = try #require(ICECandidateInit(json: #"{"candidate":"","sdpMid":"0"}"#))
        #expect(end.isEndOfCandidates)
        let ours = ICECandidateInit(candidate: "candidate:1 1 UDP 1 127.0.0.1 9 typ host", sdpMid: "0", sdpMLineIndex: 0, usernameFragment: "u/f")
        #expect(ours.json.contains(#""sdpMid":"0""#) && ours.json.contains(#""usernameFragment":"u/f""#) && ours.json.contains(#""sdpMLineIndex":0"#))
        #expect(ICECandidateInit(json: ours.json) == ours)
        for bad in ["", "[]", "{}", #"{"candidate":5}"#, "{\"candidate\":", String(repeating: "x", count: 5000)] {
            #expect(ICECandidateInit(json: bad) == nil)
        }
    }

    @Test("ICE server URLs (RFC 7064/7065) as LiveKit hands them out")
    func serverURLs() throws {
        let turn = try ICEServerURL(parsing: "turn:203.0.113.7:3478?transport=udp")
        #expect(turn.scheme == .turn && turn.host == "203.0.113.7" && turn.port == 3478 && turn.transport == .udp && turn.isTURN)
        let turns = try ICEServerURL(parsing: "turns:turn.example.com:443?transport=tcp")
        #expect(turns.scheme == .turns && turns.port == 443 && turns.transport == .tcp)
        let stun = try ICEServerURL(parsing: "stun:stun.l.google.com:19302")
        #expect(stun.scheme == .stun && stun.port == 19302 && !stun.isTURN)
        #expect(try ICEServerURL(parsing: "turn:[2001:db8::1]:3478").host == "2001:db8::1")
        #expect(try ICEServerURL(parsing: "turns:example.com").port == 5349)
        #expect(try ICEServerURL(parsing: "turn:example.com?transport=tcp").transport == .tcp)
        for bad in ["http://x", "turn:", "turn:host:0", "turn:host:99999", "turn:host?transport=sctp", "turn:[::1", "turn:a b:1", "turn:u@host:1"] {
            #expect(throws: ICEServerURLError.self) { try ICEServerURL(parsing: bad) }
        }
    }

    @Test("ICE servers never print their credential")
    func serverDescription() {
        let s = ICEServer(urls: ["turn:203.0.113.7:3478?transport=udp"], username: "user", credential: "s3cret-pass")
        #expect(!s.description.contains("s3cret-pass"))
        #expect(!"\(s)".contains("s3cret-pass"))
    }
}

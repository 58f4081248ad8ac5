import BedrudProtocol
import Testing

@Suite struct WebURLTests {
    @Test func parsesCommonShapes() throws {
        let u = try #require(WebURL("https://Meet.Example.com:8443/livekit?x=1#frag"))
        #expect(u.scheme == "https" && u.host == "meet.example.com" && u.port == 8443)
        #expect(u.path == "/livekit" && u.query == "x=1")
        #expect(u.origin == "https://meet.example.com:8443")
        let v6 = try #require(WebURL("http://[::1]:9000/api"))
        #expect(v6.host == "::1" && v6.authority == "[::1]:9000")
        #expect(WebURL("http://127.0.0.1")?.requestTarget == "/")
        #expect(WebURL("wss://h/rtc")?.port == 443)
    }

    @Test(arguments: ["", "ftp://x/", "http://", "http://user@host/", "http://h:0/", "http://h:99999/", "https:///c/room", "http://a b/", "just text"])
    func rejects(_ text: String) {
        #expect(WebURL(text) == nil)
    }

    @Test func resolvesRedirectTargets() throws {
        let base = try #require(WebURL("http://h:1/a/b?q"))
        #expect(base.resolving("/x")?.description == "http://h:1/x")
        #expect(base.resolving("c")?.description == "http://h:1/a/c")
        #expect(base.resolving("http://other/")?.host == "other")
        #expect(base.resolving("//h:1/z")?.path == "/z")
    }

    @Test func appendsPaths() throws {
        #expect(try #require(WebURL("https://h/livekit")).appendingPath("rtc").description == "https://h/livekit/rtc")
        #expect(try #require(WebURL("https://h/livekit/")).appendingPath("rtc").description == "https://h/livekit/rtc")
        #expect(try #require(WebURL("https://h")).appendingPath("rtc").description == "https://h/rtc")
    }

    @Test func redactsSecretsInQueries() {
        #expect(Redact.query("wss://h/rtc?access_token=abc.def&protocol=16") == "wss://h/rtc?access_token=********&protocol=16")
        #expect(Redact.query("no query") == "no query")
    }
}

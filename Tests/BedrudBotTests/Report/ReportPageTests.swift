import BedrudMedia
import BedrudProtocol
import Foundation
import Testing
import TestSupport
@testable import BedrudBot

@Suite struct ReportPageTests {
    static func input(events: String = ReportFixture.meeting, files: [ReportFile] = ReportFixture.files(), existing: Set<String> = ["attachments/cat.png"]) -> ReportInput {
        let summary = try? JSONDecoder().decode(SessionSummary.self, from: Data(ReportFixture.summaryJSON.utf8))
        let (ev, bad) = TranscriptLine.read(events)
        return ReportInput(summary: summary, events: ev, unreadableEventLines: bad, files: files, otherFiles: [("events.jsonl", 4000)],
                           leftoverParts: [], instance: "work", utcOffsetSeconds: 3600, existingPaths: existing)
    }

    static func count(_ needle: String, in s: String) -> Int { s.components(separatedBy: needle).count - 1 }

    @Test func headerSaysRoomTimesInLocalTimeAndHowItEnded() {
        let html = ReportPage.render(Self.input(), nonce: "n0nce")
        #expect(html.contains("<h1><bdi>standup</bdi></h1>"))
        #expect(html.contains("<dt>Started</dt><dd><time datetime=\"2026-11-29T14:00:00.000Z\">2026-11-29 15:00:00 UTC+01:00</time></dd>"))
        #expect(html.contains("<dt>Ended</dt><dd>2026-11-29 15:00:20 UTC+01:00</dd>"))
        #expect(html.contains("<dt>Duration</dt><dd>20.0 s</dd>"))
        #expect(html.contains("<dt>How it ended</dt><dd>signal: <bdi>stopped by SIGINT</bdi> (exit code 0)</dd>"))
        #expect(html.contains("<dt>Participants</dt><dd>3: <bdi>Alice</bdi>, <bdi>Bob</bdi>, <bdi>Carol</bdi></dd>"))
        #expect(html.contains("<dt>Instance</dt><dd><bdi>work</bdi></dd>"))
    }

    @Test func filesWithSizesAndVerifyResults() {
        let html = ReportPage.render(Self.input(), nonce: "n")
        #expect(html.contains("<tr><td><a href=\"room.opus\"><bdi>room.opus</bdi></a></td><td>120.0 kB</td><td>0:20</td><td><span class=\"ok\">✓ valid</span></td></tr>"))
        #expect(html.contains("<tr><td><a href=\"Bob.opus\"><bdi>Bob.opus</bdi></a></td><td>50.0 kB</td><td>0:15</td><td><span class=\"bad\">✗ page 7: bad CRC</span></td></tr>"))
        #expect(html.contains("1 audio file(s) failed verification"))
    }

    @Test func spansCarryTheirExactTimesForTheTimeline() {
        let html = ReportPage.render(Self.input(), nonce: "n")
        // x = 180 + ms / 20000 * 1000
        #expect(html.contains("<rect class=\"turn\" x=\"230\" y=\"137\" width=\"150\" height=\"10\" data-start=\"1000\" data-end=\"4000\">"))
        #expect(html.contains("<rect class=\"gap-reconnect\" x=\"580\" y=\"102\" width=\"150\" height=\"32\" data-start=\"8000\" data-end=\"11000\">"))
        #expect(html.contains("<rect class=\"mute\" x=\"430\" y=\"158\" width=\"400\" height=\"32\" data-start=\"5000\" data-end=\"13000\">"))
        #expect(Self.count("<rect class=\"gap-", in: html) - ReportTimeline.SpanKind.allCases.filter { $0.rawValue.hasPrefix("gap-") }.count == 1, "DTX is not drawn")
    }

    @Test func theLevelStripIsAStepAreaWithOneStepPerRun() {
        let l = AudioLevels(stepMs: 200, values: [0, 0, 63, 63, 63, 0])
        // 400–1000 ms of 1200: x 513.3–1013.3; the strip's base is 34 (above the turns), full scale 28 high.
        #expect(ReportPage.levelPath(l, start: 0, y: 0, d: 1200) == "M513.3 34L513.3 6H1013.3V34Z")
        // Starting 200 ms into the session, and silent: nothing.
        #expect(ReportPage.levelPath(AudioLevels(stepMs: 200, values: [0, 0]), start: 200, y: 0, d: 1200) == "")
    }

    @Test func playersUseRelativePathsAndTheirStartOffsets() {
        let html = ReportPage.render(Self.input(), nonce: "n")
        #expect(html.contains("<audio controls preload=\"metadata\" src=\"Alice.opus\" data-start=\"100\" data-file-duration-ms=\"19900\""))
        #expect(Self.count("<audio ", in: html) == 3)
    }

    @Test func chatIsReadableWithoutScriptAndOnlyLocalImagesAreShown() {
        let html = ReportPage.render(Self.input(), nonce: "n")
        #expect(html.contains("<strong><bdi>Carol</bdi></strong> <span class=\"msg\"><bdi>hello &lt;b&gt;all&lt;/b&gt;</bdi></span>"))
        #expect(html.contains("<img src=\"attachments/cat.png\" alt=\"image attachment attachments/cat.png\">"))
        #expect(html.contains("attachment (not saved): <bdi>https://example.com/x.pdf</bdi>"))
        // Nothing is loaded from elsewhere: no absolute URL in src or href.
        #expect(html.range(of: #"(src|href)="[a-z]+:"#, options: .regularExpression) == nil)
        #expect(html.range(of: #"(src|href)="//"#, options: .regularExpression) == nil)
        // Without the image file in the folder, the attachment is text.
        let without = ReportPage.render(Self.input(existing: []), nonce: "n")
        #expect(!without.contains("<img "))
    }

    @Test func aPollShowsItsOptionsAndWhoVotedAndAMessageItsReactions() {
        let events = ReportFixture.wire + [
            #"{"type":"reaction","offset_ms":6000,"participant":\#(ReportFixture.who("carol", "Carol")),"message_id":"before","emoji":"🎉"}"#,
            #"{"type":"poll_vote","offset_ms":6100,"participant":\#(ReportFixture.who("carol", "Carol")),"message_id":"old-poll","option_id":"o1","option":"Yes"}"#,
        ].joined(separator: "\n")
        let html = ReportPage.render(Self.input(events: events, files: [], existing: []), nonce: "n")
        #expect(html.contains("<li data-offset=\"4026\"><span class=\"when\">+0:04</span> <strong><bdi>Alice Doe</bdi></strong> <span class=\"msg\"><bdi>Grüße — the slide 👩‍👩‍👧</bdi></span>"
            + "<ul class=\"attachments\"><li>attachment (not saved): <bdi>attachment</bdi> <span class=\"mime\">image/png</span></li></ul>"
            + "<ul class=\"reactions\" aria-label=\"Reactions\"><li><bdi>👍</bdi> <bdi>Bob Chen</bdi></li></ul></li>"), "\(html)")
        #expect(html.contains("<li data-offset=\"4027\"><span class=\"when\">+0:04</span> <strong><bdi>Bob Chen</bdi></strong> "
            + "<div class=\"poll\">Poll: <bdi>Lunch at noon?</bdi><ul class=\"poll-options\"><li><bdi>Pizza</bdi>: no votes</li>"
            + "<li><bdi>Soup</bdi>: no votes</li><li><bdi>Ramen 🍜</bdi>: 1 vote (<bdi>Alice Doe</bdi>)</li></ul></div></li>"))
        #expect(html.contains("<strong><bdi>Carol</bdi></strong> <span class=\"msg\">reacted <bdi>🎉</bdi> to a message not in this recording</span></li>"))
        #expect(html.contains("<strong><bdi>Carol</bdi></strong> <span class=\"msg\">voted <bdi>Yes</bdi> in a poll not in this recording</span></li>"))
        #expect(html.contains("aria-label=\"reaction at +0:04: 👍 to Alice Doe: “Grüße — the slide 👩‍👩‍👧”\""))
        #expect(html.contains("<title>poll: Lunch at noon? (Pizza / Soup / Ramen 🍜)</title>"))
    }

    @Test func anEventTypeThePageDoesNotKnowIsListedGenerically() {
        let html = ReportPage.render(Self.input(), nonce: "n")
        #expect(html.contains("<tr><td>+0:17</td><td>hologram_beamed</td><td><bdi>Alice; colour: teal; track_sid</bdi></td></tr>") == false)
        #expect(html.contains("<tr><td>+0:17</td><td>hologram_beamed</td><td><bdi>Alice; colour: teal</bdi></td></tr>"))
    }

    @Test func summaryAndNetworkFigures() {
        let html = ReportPage.render(Self.input(), nonce: "n")
        #expect(html.contains("<td>900</td><td>2</td><td>0</td><td>1</td><td>reconnect 3.0 s</td>"))
        #expect(html.contains("<tr><th scope=\"row\"><bdi>Alice</bdi></th><td>1234</td><td>900</td><td>2</td><td>3.5 ms</td><td>2</td><td>1</td></tr>"))
        #expect(html.contains("<div><dt>Reconnects</dt><dd>1</dd></div>"))
    }

    @Test func theScriptRunsOnlyByNonceAndNothingElseMayLoad() {
        let html = ReportPage.render(Self.input(), nonce: "abc123")
        #expect(html.contains("script-src 'nonce-abc123'"))
        #expect(html.contains("default-src 'none'"))
        #expect(Self.count("<script nonce=\"abc123\">", in: html) == 1)
        #expect(Self.count("<script", in: html) == 2, "the script and the JSON data block")
    }

    static let hostile = "<img src=x onerror=alert(1)></script><script>alert(2)</script><!--\u{2028}\"'&"

    @Test func hostileTextIsShownAsTextEverywhere() {
        var events = ReportFixture.meeting.replacingOccurrences(of: "\"name\":\"Bob\"", with: "\"name\":\(JSONValue.quoted(Self.hostile))")
        events = events.replacingOccurrences(of: "\"room\":\"standup\"", with: "\"room\":\(JSONValue.quoted(Self.hostile))")
        events = events.replacingOccurrences(of: "hello <b>all</b>", with: Self.hostile.replacingOccurrences(of: "\"", with: "\\\""))
        var input = Self.input(events: events)
        input.summary?.room = Nullable(Self.hostile)
        input.summary?.message = Self.hostile
        input.files.append(ReportFile(name: "\"><img src=x onerror=alert(3)>.opus", bytes: 1, valid: true, durationMs: 1, identity: "u-bob"))
        let html = ReportPage.render(input, nonce: "n")
        #expect(!html.contains("<img src=x"))
        #expect(!html.contains("<script>alert"))
        #expect(Self.count("</script>", in: html) == 2)
        #expect(!html.contains("<!--"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;&lt;!--\u{2028}&quot;&#39;&amp;"))
        #expect(html.contains("src=\"%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%283%29%3E.opus\""))
    }

    @Test func escapingForScriptsAndURLs() {
        #expect(HTMLText.scriptJSON(#"{"a":"</script><!--\#u{2028}\#u{2029}&"}"#) == #"{"a":"\u003c/script\u003e\u003c!--\u2028\u2029\u0026"}"#)
        #expect(HTMLText.escape("a\u{1B}[31mb\u{85}c\td") == "a\u{FFFD}[31mb\u{FFFD}c\td")
        #expect(HTMLText.relativeURL("javascript:alert(1)") == "javascript%3Aalert%281%29")
        #expect(HTMLText.relativeURL("../secret") == nil)
        #expect(HTMLText.relativeURL("/etc/passwd") == nil)
        #expect(HTMLText.relativeURL("attachments/a b.png") == "attachments/a%20b.png")
    }

    /// A one-hour, ten-person meeting (synthetic, busy: a turn every 6 s each, chat every
    /// minute, LiveKit speaker updates every second) with a full level strip per file.
    @Test func anHourWithTenPeopleStaysUnderTwoMegabytes() throws {
        var lines: [String] = [#"{"type":"session_started","time":"2026-11-29T14:00:00.000Z","offset_ms":0,"room":"allhands"}"#]
        var rng = SeededGenerator(seed: 25)
        for p in 0..<10 {
            lines.append(#"{"type":"participant_joined","offset_ms":\#(p * 1000),"participant":{"identity":"user-\#(p)","name":"Person Number \#(p)"}}"#)
        }
        var t = 10_000
        while t < 3_600_000 {
            let p = Int(rng.next() % 10)
            let len = 500 + Int(rng.next() % 5000)
            lines.append(#"{"type":"speaking_turn","offset_ms":\#(t),"participant":{"identity":"user-\#(p)","name":"Person Number \#(p)"},"start_ms":\#(t),"end_ms":\#(t + len),"written_ms":\#(t + len + 400)}"#)
            t += 600
        }
        for s in stride(from: 0, to: 3_600_000, by: 1000) {
            lines.append(#"{"type":"speakers_changed","offset_ms":\#(s),"active":[],"started":["user-1"],"stopped":[]}"#)
        }
        for m in stride(from: 30_000, to: 3_600_000, by: 60_000) {
            lines.append(#"{"type":"chat","offset_ms":\#(m),"participant":{"identity":"user-3","name":"Person Number 3"},"message":"A chat message of a typical length, about sixty characters.","id":"x","sent_ms":0,"attachments":[]}"#)
        }
        lines.append(#"{"type":"session_ended","offset_ms":3600000,"end_reason":"duration","exit_code":0,"duration_ms":3600000}"#)
        let levels = AudioLevels(stepMs: 200, values: (0..<18_000).map { _ in UInt8(rng.next() % 64) })
        let files = [ReportFile(name: "room.opus", bytes: 20_000_000, valid: true, durationMs: 3_600_000, levels: levels)]
            + (0..<10).map { ReportFile(name: "Person Number \($0).opus", bytes: 10_000_000, valid: true, durationMs: 3_600_000, identity: "user-\($0)", levels: levels) }
        var input = Self.input(events: lines.joined(separator: "\n"), files: files)
        input.summary = nil
        let bytes = ReportPage.render(input, nonce: "n").utf8.count
        print("report.html of a synthetic 1 h, 10-person meeting: \(bytes) bytes (\(lines.count) events)")
        #expect(bytes < 2_000_000, "\(bytes) bytes")
    }
}

extension JSONValue {
    /// `s` as a JSON string literal.
    static func quoted(_ s: String) -> String {
        String(decoding: (try? JSONEncoder().encode(s)) ?? Data(), as: UTF8.self)
    }
}

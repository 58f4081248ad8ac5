@testable import BedrudBot
@testable import BedrudMedia
import BedrudProtocol
import Foundation
import Testing
import TestSupport

/// The bytes of `smoke --json` and `verify --json` (docs/SMOKE.md, docs/CLI.md) for runs and
/// files that use every key, against fixtures: a change to how they are written shows here
/// line by line.
@Suite struct SmokeReportTests {
    static func fixture(_ name: String) -> URL { Repo.root.appendingPathComponent("Tests/BedrudBotTests/Smoke/Fixtures/" + name) }

    static func expectFixture(_ text: String, _ name: String) throws {
        let data = Data((text + "\n").utf8)
        if ProcessInfo.processInfo.environment["BEDRUD_WRITE_GOLDEN"] == "1" { try data.write(to: fixture(name)) }
        let expected = try String(contentsOf: fixture(name), encoding: .utf8)
        #expect(text + "\n" == expected, "\(name):\n  now:    \(text)\n  before: \(expected)")
    }

    static func passed() -> SmokeRun {
        var run = SmokeRun(thresholds: SmokeThresholds(latencyMs: 250, lossPercent: 2.5, jitterMs: 30))
        for s in SmokeStage.allCases where s.index < SmokeStage.receive.index {
            _ = run.handle(.passed(s, seconds: 0.1234, measured: s == .ice ? "host/udp ↔ host/udp" : ""))
        }
        _ = run.handle(.measured(SmokeMedia(burstsSent: 5, latenciesMs: [80.04, 95.06, 70, 110.55, 90.1], packetsReceived: 300, packetsLost: 1, jitterMs: 2.567), seconds: 6))
        _ = run.handle(.chat(sent: "hi ✓", received: "hi ✓", seconds: 0.05))
        _ = run.handle(.passed(.leave, seconds: 2))
        return run
    }

    @Test func smokeJSONOfAPassedRunWithMedia() throws {
        let media = SmokeMedia(burstsSent: 5, latenciesMs: [80.04, 95.06, 70, 110.55, 90.1], packetsReceived: 300, packetsLost: 1, jitterMs: 2.567)
        let text = SmokeReport.json(Self.passed(), target: "http://127.0.0.1:1/m/smoke \u{2028}\"x\"", media: media,
                                    icePair: "host/udp 127.0.0.1 ↔ host/udp 127.0.0.1", onsetsMs: [1000, 2000.5])
        try Self.expectFixture(text, "smoke-passed.json")
    }

    @Test func smokeJSONOfAFailedRunWithoutMedia() throws {
        var run = SmokeRun(thresholds: SmokeThresholds())
        for s in SmokeStage.allCases where s.index < SmokeStage.ice.index { _ = run.handle(.passed(s, seconds: 1)) }
        _ = run.handle(.failed(.ice, seconds: 20, why: "no ICE candidate pair within 20 s"))
        _ = run.handle(.passed(.leave, seconds: 0))
        try Self.expectFixture(SmokeReport.json(run, target: "https://meet.example/m/x", media: nil, icePair: nil), "smoke-failed.json")
    }

    @Test func verifyJSONWithHeadersTagsAndGaps() throws {
        var r = OggOpusReport()
        r.head = OpusHead(channelCount: 2, preSkip: 312)
        r.tags = OpusTags(vendor: "bedrud-bot/1", comments: [("PARTICIPANT_IDENTITY", "u/1"), ("TITLE", "a\u{2028}b"), ("TITLE", "second")])
        r.pages = 52
        r.audioPackets = 250
        r.durationMillis = 5000
        r.gaps = [.init(startMillis: 1000, durationMillis: 412.5)]
        r.hasEOS = true
        try Self.expectFixture(MediaCommands.json(path: "/tmp/a b/Alice.opus", r), "verify-tags.json")
        var bad = OggOpusReport()
        bad.problems = ["not an Ogg file (it does not begin with the OggS capture pattern); verify checks Ogg Opus recordings such as *.opus"]
        try Self.expectFixture(MediaCommands.json(path: "x.txt", bad), "verify-not-ogg.json")
    }

    /// Every key of an object (nested ones too).
    static func keys(_ v: Any) -> Set<String> {
        if let o = v as? [String: Any] { return o.reduce(into: Set(o.keys)) { $0.formUnion(keys($1.value)) } }
        if let a = v as? [Any] { return a.reduce(into: Set<String>()) { $0.formUnion(keys($1)) } }
        return []
    }

    /// The `backticked` words of a doc after `start`, up to `end`.
    static func documented(_ doc: String, from start: String, to end: String) throws -> Set<String> {
        let text = try String(contentsOf: Repo.root.appendingPathComponent(doc), encoding: .utf8)
        let from = try #require(text.range(of: start))
        let part = text[from.upperBound...]
        let cut = part.range(of: end).map { part[..<$0.lowerBound] } ?? part
        // `stages[]` names the key `stages`.
        return Set(cut.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { $0.element.hasSuffix("[]") ? String($0.element.dropLast(2)) : String($0.element) })
    }

    /// The keys written are the keys docs/SMOKE.md and docs/CLI.md list (tags' own keys aside).
    @Test func everyKeyWrittenIsDocumented() throws {
        let smoke = try Self.documented("docs/SMOKE.md", from: "- `--json`: one object", to: "- `--junit")
        for name in ["smoke-passed.json", "smoke-failed.json"] {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixture(name)))
            #expect(Self.keys(object).subtracting(smoke).isEmpty, "\(name): not in docs/SMOKE.md: \(Self.keys(object).subtracting(smoke))")
        }
        // verify writes every key for every file (null where unknown): both ways, for a file
        // with all headers and for one with none.
        let verify = try Self.documented("docs/CLI.md", from: "| `verify FILE.opus... [--json]` |", to: "\n")
            .filter { !$0.hasPrefix("-") && $0 != "null" }  // `--json` and `null` are in the row, but are no keys
        for name in ["verify-tags.json", "verify-not-ogg.json"] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixture(name))) as? [String: Any])
            let written = Self.keys(object.filter { $0.key != "tags" }).union(object.keys.filter { $0 == "tags" })
            #expect(written.subtracting(verify).isEmpty, "\(name): not in docs/CLI.md: \(written.subtracting(verify))")
            let gapless: Set<String> = ((object["gaps"] as? [Any]) ?? []).isEmpty ? ["start_ms"] : []  // a gap's own key needs a gap
            #expect(verify.subtracting(written).subtracting(gapless).isEmpty, "\(name): documented, not written: \(verify.subtracting(written))")
        }
    }
}

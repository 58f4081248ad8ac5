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
}

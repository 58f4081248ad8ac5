import BedrudProtocol
@testable import BedrudBot
import BedrudBench
import BedrudMedia
import Foundation
import Testing

/// The decisions of `smoke` as transcripts: events in, actions and stage outcomes out.
@Suite struct SmokeRunTests {
    static let good = SmokeMedia(burstsSent: 5, latenciesMs: [80, 95, 70, 110, 90], packetsReceived: 300, packetsLost: 0, jitterMs: 2.5)

    func passAll(_ run: inout SmokeRun, upTo last: SmokeStage) -> [SmokeAction] {
        var actions: [SmokeAction] = []
        for s in SmokeStage.allCases where s.index <= last.index && s != .receive && s != .quality && s != .chat {
            actions = run.handle(.passed(s, seconds: 0.1, measured: ""))
        }
        return actions
    }

    @Test func aCleanRunPassesEveryStageInOrder() {
        var run = SmokeRun(thresholds: SmokeThresholds())
        #expect(SmokeRun.start == .run(.api))
        #expect(run.handle(.passed(.api, seconds: 0.01)) == [.run(.auth)])
        #expect(run.handle(.passed(.auth, seconds: 0.2)) == [.run(.token)])
        #expect(run.handle(.passed(.token, seconds: 0.1)) == [.run(.signalling)])
        #expect(run.handle(.passed(.signalling, seconds: 0.3)) == [.run(.ice)])
        #expect(run.handle(.passed(.ice, seconds: 0.3, measured: "host/udp ↔ host/udp")) == [.run(.dtls)])
        #expect(run.handle(.passed(.dtls, seconds: 0.1)) == [.run(.publish)])
        #expect(run.handle(.passed(.publish, seconds: 0.2)) == [.run(.receive)])
        #expect(run.handle(.measured(Self.good, seconds: 6)) == [.run(.chat)])
        #expect(run.handle(.chat(sent: "hi ✓", received: "hi ✓", seconds: 0.05)) == [.run(.leave)])
        #expect(run.handle(.passed(.leave, seconds: 0.2)) == [.finish(.success)])
        #expect(run.results.map(\.stage) == SmokeStage.allCases)
        #expect(run.results.allSatisfy { $0.outcome == .passed })
        let q = run.results.first { $0.stage == .quality }!
        #expect(q.measured == "latency 110 ms (median 90), loss 0.0 %, jitter 2.5 ms")
        #expect(q.threshold == "latency ≤ 500 ms, loss ≤ 5.0 %, jitter ≤ 30.0 ms")
        #expect(run.handle(.passed(.api, seconds: 0)) == [], "a finished run ignores late events")
    }

    @Test func aFailureSkipsToLeaveAndExitsWithThatStagesCode() {
        var run = SmokeRun(thresholds: SmokeThresholds())
        _ = passAll(&run, upTo: .signalling)
        #expect(run.handle(.failed(.ice, seconds: 20, why: "no ICE candidate pair within 20 s")) == [.run(.leave)])
        #expect(run.handle(.passed(.leave, seconds: 0.1)) == [.finish(.smokeICE)])
        #expect(run.results.map(\.stage) == SmokeStage.allCases)
        #expect(run.results.filter { $0.outcome == .skipped }.map(\.stage) == [.dtls, .publish, .receive, .quality, .chat])
        #expect(run.exitCode.rawValue == 24)
    }

    @Test func aTokenTheMediaServerRefusesFailsTheTokenStageAfterItPassed() {
        var run = SmokeRun(thresholds: SmokeThresholds())
        _ = passAll(&run, upTo: .token)
        #expect(run.handle(.failed(.token, seconds: 0, why: "the media server refused the join token")) == [.run(.leave)])
        #expect(run.handle(.passed(.leave, seconds: 0)) == [.finish(.smokeRoom)])
        let t = run.results.first { $0.stage == .token }!
        #expect(t.outcome == .failed && t.message == "the media server refused the join token")
        #expect(run.results.first { $0.stage == .signalling }!.outcome == .skipped)
    }

    @Test func eachStageHasItsOwnCodeFrom20To29() {
        let codes = SmokeStage.allCases.map(\.exitCode.rawValue)
        #expect(codes == [20, 21, 22, 23, 24, 25, 26, 26, 27, 28, 29])
    }

    @Test("Packets NACKs recovered count against the path: 2 missing + 8 recovered of 102 is 9.8 %, a quality failure")
    func recoveredPacketsAreThePathsLoss() {
        var run = SmokeRun(thresholds: SmokeThresholds())
        _ = passAll(&run, upTo: .publish)
        let loss = PacketLoss(received: 100, lost: 2, recovered: 8)
        let m = SmokeMedia(burstsSent: 5, latenciesMs: [80, 95, 70, 110, 90], packetsReceived: loss.arrivedFirstTime, packetsLost: loss.pathLost, jitterMs: 4)
        #expect(m.packetsReceived == 92 && m.packetsLost == 10)
        #expect(m.lossPercent == 100 * (10.0 / 102))
        #expect(run.handle(.measured(m, seconds: 6)) == [.run(.leave)])
        #expect(run.results.first { $0.stage == .quality }?.message == "loss 9.8 % > 5.0 %")
    }

    @Test func lossAboveTheThresholdFailsQualityNamingValueAndLimit() {
        var run = SmokeRun(thresholds: SmokeThresholds())
        _ = passAll(&run, upTo: .publish)
        let lossy = SmokeMedia(burstsSent: 5, latenciesMs: [80, 95, 70, 110, 90], packetsReceived: 210, packetsLost: 90, jitterMs: 4)
        #expect(run.handle(.measured(lossy, seconds: 6)) == [.run(.leave)])
        let q = run.results.first { $0.stage == .quality }!
        #expect(q.outcome == .failed)
        #expect(q.message == "loss 30.0 % > 5.0 %")
        #expect(run.results.first { $0.stage == .receive }!.outcome == .passed)
        _ = run.handle(.passed(.leave, seconds: 0))
        #expect(run.exitCode == .smokeQuality)
    }

    @Test func latencyJitterAndMissingBurstsAreEachNamed() {
        var run = SmokeRun(thresholds: SmokeThresholds(latencyMs: 100, lossPercent: 5, jitterMs: 10))
        _ = passAll(&run, upTo: .publish)
        _ = run.handle(.measured(SmokeMedia(burstsSent: 5, latenciesMs: [80, 150, 90], packetsReceived: 300, packetsLost: 0, jitterMs: 12.34), seconds: 6))
        #expect(run.results.first { $0.stage == .quality }!.message == "2 of 5 bursts not detected; latency 150 ms > 100 ms; jitter 12.3 ms > 10.0 ms")
    }

    @Test func noPacketsFailsReceiveNotQuality() {
        var run = SmokeRun(thresholds: SmokeThresholds())
        _ = passAll(&run, upTo: .publish)
        #expect(run.handle(.measured(SmokeMedia(burstsSent: 5, latenciesMs: [], packetsReceived: 0, packetsLost: 0, jitterMs: 0), seconds: 7)) == [.run(.leave)])
        #expect(run.results.first { $0.stage == .receive }!.message == "no audio reached the listener (0 packets; 5 bursts sent)")
        _ = run.handle(.passed(.leave, seconds: 0))
        #expect(run.results.first { $0.stage == .quality }!.outcome == .skipped)
        #expect(run.exitCode == .smokeMedia)
    }

    @Test func aChangedChatMessageFailsTheDataStage() {
        var run = SmokeRun(thresholds: SmokeThresholds())
        _ = passAll(&run, upTo: .publish)
        _ = run.handle(.measured(Self.good, seconds: 6))
        #expect(run.handle(.chat(sent: "äöü", received: "aou", seconds: 1)) == [.run(.leave)])
        #expect(run.handle(.failed(.leave, seconds: 3, why: "the listener ended with 'kicked'")) == [.finish(.smokeData)])
    }

    /// The thresholds a smoke run starts from are the table's `smoke.max_*` rows, and
    /// `--thresholds` help names them as it takes them.
    @Test func defaultThresholdsAreTheTables() {
        #expect(SmokeThresholds() == SmokeThresholds(latencyMs: 500, lossPercent: 5, jitterMs: 30))
        #expect(SmokeThresholds(lossPercent: 1) == SmokeThresholds(latencyMs: 500, lossPercent: 1, jitterMs: 30))
        #expect(SmokeThresholds.defaultsText == "latency=500ms,loss=5%,jitter=30ms")
    }

    @Test func thresholdsParse() throws {
        var t = SmokeThresholds()
        try t.apply("latency=0.3s,loss=1%,jitter=20ms")
        #expect(t == SmokeThresholds(latencyMs: 300, lossPercent: 1, jitterMs: 20))
        try t.apply("loss=2.5")
        #expect(t.lossPercent == 2.5)
        #expect(throws: SmokeThresholdError.self) { try t.apply("speed=3") }
        #expect(throws: SmokeThresholdError.self) { try t.apply("loss=150%") }
    }

    @Test func junitNamesTheFailureAndEscapesServerText() {
        var run = SmokeRun(thresholds: SmokeThresholds())
        _ = passAll(&run, upTo: .api)
        _ = run.handle(.failed(.auth, seconds: 0.2, why: "server said <b>\u{1B}[31mno</b> & \"bye\""))
        _ = run.handle(.passed(.leave, seconds: 0))
        let x = SmokeReport.junit(run, target: "https://h/m/r")
        #expect(x.contains("failures=\"1\""))
        #expect(x.contains("<failure type=\"auth\" message=\"server said &lt;b&gt;\u{FFFD}[31mno&lt;/b&gt; &amp; &quot;bye&quot;\">exit code 21:"))
        #expect(x.components(separatedBy: "<skipped").count - 1 == 8)
        let human = SmokeReport.human(run, target: "r").joined(separator: "\n")
        #expect(!human.contains("\u{1B}"))
        #expect(human.contains("FAILED at auth (two identities) (exit 21"))
    }

    @Test func pairKinds() {
        #expect(SmokePair.kind("127.0.0.1:5000 host/udp <-> 127.0.0.1:6000 host/udp") == "host/udp ↔ host/udp")
        #expect(SmokePair.kind("10.0.0.2:5000 relay/udp <-> 1.2.3.4:3478 srflx/tcp") == "relay/udp ↔ srflx/tcp")
    }

    /// The signal and the detector together: the encoded signal, fed as if it arrived
    /// 40 ms after each packet's send deadline, yields one onset per burst at ~40 ms.
    @Test func theDetectorFindsEveryBurstOnset() throws {
        let signal = SmokeSignal(seconds: 6)
        #expect(signal.bursts == 5)
        let packets = MediaBenchmark.encode(signal.pcm(), bitrate: 32_000)
        let d = try #require(ToneBurstDetector(capacitySamples: signal.totalSamples, expectedBursts: signal.bursts))
        let start: UInt64 = 1_000_000_000
        for (i, p) in packets.enumerated() {
            let due = start + UInt64(i) * 20_000_000 + 40_000_000
            p.withUnsafeBytes { d.feed($0, arrivalNanos: due) }
        }
        #expect(d.onsets.count == 5)
        for (k, onset) in d.onsets.enumerated() {
            let offset = Int64(onset - start)
            #expect(signal.burst(before: offset) == k)
            let latency = Double(offset - signal.burstOffsetNanos(k)) / 1e6
            #expect(latency >= 40 && latency <= 80, "burst \(k): \(latency) ms")
        }
        #expect(d.samples == signal.totalSamples)
    }
}

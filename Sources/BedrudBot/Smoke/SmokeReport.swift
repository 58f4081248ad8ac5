import BedrudProtocol
import Dispatch
import FoundationEssentials
import Glibc

/// The three renderings of a finished ``SmokeRun``: the terminal summary, one JSON
/// object (`--json`) and a JUnit XML file (`--junit`). Pure text functions.
public enum SmokeReport {
    /// One line per stage: ✓/✗/–, title, time, measured value vs threshold, failure text.
    /// Server-supplied text is passed through ``TerminalText/sanitize(_:)``.
    public static func human(_ run: SmokeRun, target: String) -> [String] {
        var lines = ["Smoke test of \(TerminalText.sanitize(target)):"]
        for r in run.results {
            let mark = r.outcome == .passed ? "✓" : r.outcome == .failed ? "✗" : "–"
            var line = "  \(mark) \(r.stage.title.padded(toLength: 24)) \(time(r))"
            if !r.measured.isEmpty { line += "  \(TerminalText.sanitize(r.measured))" }
            if !r.threshold.isEmpty { line += "  (\(r.threshold))" }
            lines.append(line)
            if r.outcome == .failed { lines.append("      \(TerminalText.sanitize(r.message))") }
        }
        if let f = run.firstFailure {
            lines.append("FAILED at \(f.stage.title) (exit \(f.stage.exitCode.rawValue): \(f.stage.exitCode.meaning)); see docs/SMOKE.md.")
        } else {
            lines.append("PASSED: all \(run.results.count) stages.")
        }
        return lines
    }

    static func time(_ r: SmokeStageResult) -> String {
        r.outcome == .skipped ? "      " : String(cFormat: "%5.2fs", r.seconds)
    }

    /// `smoke --json`: one object, keys in camelCase as docs/SMOKE.md lists them; `null`
    /// where a value is unknown (no failed stage, no ICE pair, no media measured).
    struct JSON: Encodable, Equatable {
        struct Thresholds: Encodable, Equatable {
            var latencyMs: Double
            var lossPercent: Double
            var jitterMs: Double
        }
        /// One stage; `measured`, `threshold` and `message` only when not empty.
        struct Stage: Encodable, Equatable {
            var stage: String
            var outcome: String
            var seconds: Double
            var measured: String?
            var threshold: String?
            var message: String?
        }
        struct Media: Encodable, Equatable {
            var burstsSent: Int
            var burstsDetected: Int
            var latenciesMs: [Double]
            var latencyMaxMs: Nullable<Double>
            var onsetsMs: [Double]
            var packetsReceived: Int
            var packetsLost: Int
            var lossPercent: Double
            var jitterMs: Double
        }
        var target: String
        var passed: Bool
        var exitCode: Int
        var failedStage: Nullable<String>
        var thresholds: Thresholds
        var icePair: Nullable<String>
        var stages: [Stage]
        var media: Nullable<Media>
    }

    static func jsonValue(_ run: SmokeRun, target: String, media: SmokeMedia?, icePair: String?, onsetsMs: [Double] = []) -> JSON {
        let nonEmpty = { (s: String) in s.isEmpty ? nil : s }
        return JSON(
            target: target, passed: run.firstFailure == nil, exitCode: Int(run.exitCode.rawValue),
            failedStage: Nullable(run.firstFailure?.stage.rawValue),
            thresholds: .init(latencyMs: run.thresholds.latencyMs, lossPercent: run.thresholds.lossPercent, jitterMs: run.thresholds.jitterMs),
            icePair: Nullable(icePair),
            stages: run.results.map {
                .init(stage: $0.stage.rawValue, outcome: $0.outcome.rawValue, seconds: ($0.seconds * 1000).rounded() / 1000,
                      measured: nonEmpty($0.measured), threshold: nonEmpty($0.threshold), message: nonEmpty($0.message))
            },
            media: Nullable(media.map { m in
                .init(burstsSent: m.burstsSent, burstsDetected: m.latenciesMs.count, latenciesMs: m.latenciesMs.map { ($0 * 10).rounded() / 10 },
                      latencyMaxMs: Nullable(m.latenciesMs.max().map { ($0 * 10).rounded() / 10 }), onsetsMs: onsetsMs,
                      packetsReceived: m.packetsReceived, packetsLost: m.packetsLost,
                      lossPercent: (m.lossPercent * 100).rounded() / 100, jitterMs: (m.jitterMs * 100).rounded() / 100)
            }))
    }

    /// `{"target", "passed", "exitCode", "failedStage", "thresholds", "stages": [...], "media": {...}}`
    /// on one line, through ``JSONOutput``.
    public static func json(_ run: SmokeRun, target: String, media: SmokeMedia?, icePair: String?, onsetsMs: [Double] = []) -> String {
        (try? JSONOutput.string(jsonValue(run, target: target, media: media, icePair: icePair, onsetsMs: onsetsMs), pretty: false)) ?? "{}"
    }

    /// One `<testsuite name="bedrud-bot smoke">` with a `<testcase>` per stage: failures
    /// carry the measured value and the threshold; skipped stages are `<skipped/>`.
    public static func junit(_ run: SmokeRun, target: String) -> String {
        let failures = run.results.filter { $0.outcome == .failed }.count
        let skipped = run.results.filter { $0.outcome == .skipped }.count
        let total = run.results.reduce(0) { $0 + $1.seconds }
        var x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        x += "<testsuites name=\"bedrud-bot smoke\" tests=\"\(run.results.count)\" failures=\"\(failures)\" time=\"\(secs(total))\">\n"
        x += "  <testsuite name=\"bedrud-bot smoke \(xml(target))\" tests=\"\(run.results.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\" time=\"\(secs(total))\">\n"
        for r in run.results {
            x += "    <testcase classname=\"smoke\" name=\"\(r.stage.rawValue): \(xml(r.stage.title))\" time=\"\(secs(r.seconds))\">"
            switch r.outcome {
            case .passed:
                if !r.measured.isEmpty { x += "\n      <system-out>\(xml(r.measured))\(r.threshold.isEmpty ? "" : " (\(xml(r.threshold)))")</system-out>\n    " }
            case .failed:
                var text = r.message
                if !r.measured.isEmpty { text += "; measured: \(r.measured)" }
                if !r.threshold.isEmpty { text += "; threshold: \(r.threshold)" }
                x += "\n      <failure type=\"\(r.stage.rawValue)\" message=\"\(xml(text))\">exit code \(r.stage.exitCode.rawValue): \(xml(r.stage.exitCode.meaning))</failure>\n    "
            case .skipped:
                x += "<skipped message=\"an earlier stage failed\"/>"
            }
            x += "</testcase>\n"
        }
        x += "  </testsuite>\n</testsuites>\n"
        return x
    }

    static func secs(_ s: Double) -> String { String(cFormat: "%.3f", s) }

    /// XML attribute and text escaping: the report's escaper (control characters, which
    /// XML 1.0 does not allow, become U+FFFD).
    static func xml(_ s: String) -> String { HTMLText.escape(s) }
}

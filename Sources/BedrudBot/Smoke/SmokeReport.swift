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

    /// `{"target", "passed", "exitCode", "failedStage", "thresholds", "stages": [...], "media": {...}}`.
    public static func json(_ run: SmokeRun, target: String, media: SmokeMedia?, icePair: String?, onsetsMs: [Double] = []) -> String {
        var o: [String: Any] = [
            "target": target, "passed": run.firstFailure == nil, "exitCode": Int(run.exitCode.rawValue),
            "thresholds": ["latencyMs": run.thresholds.latencyMs, "lossPercent": run.thresholds.lossPercent, "jitterMs": run.thresholds.jitterMs],
            "stages": run.results.map { r -> [String: Any] in
                var s: [String: Any] = ["stage": r.stage.rawValue, "outcome": r.outcome.rawValue, "seconds": (r.seconds * 1000).rounded() / 1000]
                if !r.measured.isEmpty { s["measured"] = r.measured }
                if !r.threshold.isEmpty { s["threshold"] = r.threshold }
                if !r.message.isEmpty { s["message"] = r.message }
                return s
            },
        ]
        o["failedStage"] = run.firstFailure?.stage.rawValue ?? JSONNull()
        o["icePair"] = icePair ?? JSONNull()
        if let m = media {
            var mj: [String: Any] = ["burstsSent": m.burstsSent, "burstsDetected": m.latenciesMs.count, "latenciesMs": m.latenciesMs.map { ($0 * 10).rounded() / 10 },
                                     "packetsReceived": m.packetsReceived, "packetsLost": m.packetsLost,
                                     "lossPercent": (m.lossPercent * 100).rounded() / 100, "jitterMs": (m.jitterMs * 100).rounded() / 100]
            mj["onsetsMs"] = onsetsMs
            mj["latencyMaxMs"] = m.latenciesMs.max().map { ($0 * 10).rounded() / 10 } ?? JSONNull()
            o["media"] = mj
        } else {
            o["media"] = JSONNull()
        }
        return JSONWriter.serialize(o) ?? "{}"
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

    /// XML attribute/text escaping; control characters (not allowed in XML 1.0) become U+FFFD.
    static func xml(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(u)
            default:
                if u.value < 0x20 || (0x7F...0x9F).contains(u.value) || u.value == 0xFFFE || u.value == 0xFFFF { out += "\u{FFFD}" } else { out.unicodeScalars.append(u) }
            }
        }
        return out
    }
}

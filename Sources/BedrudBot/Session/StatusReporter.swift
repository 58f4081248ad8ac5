import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRTC
import Foundation
import Synchronization

/// The live view of a run: on a terminal, one status line on standard error that is
/// redrawn every second (elapsed time, who is here, who speaks, bytes written); with
/// `--stats`, a table of per-track network figures every few seconds.
final class StatusReporter: Sendable {
    private let console: Console
    private let showStats: Bool
    private let interval: Int
    private let drawn = Mutex<Bool>(false)
    private let startedAt = Date()

    init(console: Console, showStats: Bool, interval: Double) {
        self.console = console
        self.showStats = showStats
        self.interval = max(1, Int(interval))
    }

    var usesStatusLine: Bool { console.stderrIsTerminal && !console.jsonLogs && Logging.isEnabled(.info) }

    func tick(_ n: Int, room: RoomManager, pipeline: MediaPipeline, transport: WebRTCTransport, run: RoomRun) async {
        let media = pipeline.stats
        if usesStatusLine {
            let elapsed = ConfigValues.formatDuration(Date().timeIntervalSince(startedAt).rounded())
            let speaking = media.participants.filter(\.speaking).map(\.identity)
            let names = run.presentNames
            let bytes = Double(media.pageBytesWritten) / 1_048_576
            var line = "● \(elapsed)  \(names.count) here"
            if !speaking.isEmpty { line += "  speaking: \(speaking.count)" }
            line += String(format: "  %.1f MB", bytes)
            drawn.withLock { $0 = true }
            console.errRaw("\r\u{1B}[K" + line)
        }
        if showStats, n % interval == 0, let s = await transport.stats() {
            var out = "stats: \(s.state) \(s.srtpProfile.map { "\($0)" } ?? "") pair \(s.selectedPair ?? "-")\n"
            for t in s.tracks {
                out += String(format: "  ssrc %10u %-16@ %6d pkts %6.1f pkt/s lost %4d jitter %5.1f ms nacked %d recovered %d\n",
                              t.ssrc, TerminalText.sanitize(t.trackSID ?? "?") as NSString, Int(t.packetsReceived), t.packetsPerSecond, Int(t.packetsLost), t.jitterMs,
                              Int(t.nackedPackets), Int(t.recoveredPackets))
            }
            clear()
            if console.jsonLogs {
                for line in out.split(separator: "\n") { console.log(level: .info, category: "stats", message: String(line)) }
            } else {
                console.errRaw(TerminalText.sanitize(out, keepingLineBreaks: true))
            }
        }
    }

    private func clear() {
        if drawn.withLock({ d in let was = d; d = false; return was }) { console.errRaw("\r\u{1B}[K") }
    }

    func finish() { clear() }
}

#if canImport(Glibc)
import Glibc
#endif
import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRTC
import BedrudRuntime
import FoundationEssentials
import Dispatch
import Synchronization

/// The live view of a run, fed once a second by the run's ticker. When stdout is a
/// terminal that can move its cursor (``TerminalCapabilities``), it keeps the block of
/// ``TerminalView`` at the bottom (``Console/showBlock(_:)``); with `--stats`, a table of
/// per-track network figures, named by person, every few seconds.
final class StatusReporter: Sendable {
    private let console: Console
    private let showStats: Bool
    private let interval: Int
    /// Whether the block of ``TerminalView`` is drawn (stdout a capable terminal, text
    /// output, one room).
    let live: Bool
    private let color: Bool
    /// Seconds each identity has spoken, sampled per tick, and when the last tick was.
    private let spoken = Mutex<(seconds: [String: Double], lastNanos: UInt64)>(([:], 0))
    private let startedNanos = MonotonicClock.nanos()
    /// Set by ``finish()``: a tick still in flight then draws nothing, so the block, once
    /// removed, stays removed.
    private let finished = Mutex<Bool>(false)

    /// `json`: stdout carries JSON lines (`join --json`), so no block is drawn there; nor
    /// with JSON logs on stderr.
    init(console: Console, showStats: Bool, interval: Double, json: Bool = false,
         environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.console = console
        self.showStats = showStats
        self.interval = max(1, Int(interval))
        // Several rooms in one process (labelled consoles) would fight over one block: none.
        live = !json && !console.jsonLogs && console.label == nil
            && TerminalCapabilities.liveBlock(stdoutIsTerminal: isatty(1) != 0, quiet: console.quiet, environment: environment)
        color = TerminalCapabilities.color(environment: environment)
    }

    func tick(_ n: Int, room: RoomManager, pipeline: MediaPipeline, transport: WebRTCTransport, run: RoomRun) async {
        let wantStats = showStats && n % interval == 0
        // Nothing to show (a cron or CI run): no hop to the room or the network thread.
        guard live || wantStats else { return }
        let media = pipeline.stats
        let participants = await room.current.participants
        if live {
            let now = MonotonicClock.nanos()
            let seconds = spoken.withLock { s -> [String: Double] in
                let dt = s.lastNanos == 0 ? 0 : Double(now &- s.lastNanos) / 1e9
                s.lastNanos = now
                for p in media.participants where p.speaking { s.seconds[p.identity, default: 0] += dt }
                return s.seconds
            }
            let record = run.options.record
            let state = TerminalView.State(
                elapsedSeconds: Double(now &- startedNanos) / 1e9,
                rows: Self.rows(participants: participants, media: media.participants, spokenSeconds: seconds),
                bytesWritten: record ? media.pageBytesWritten : nil,
                freeDiskBytes: record ? Self.freeBytes(run.options.outputDir) : nil)
            let size = TerminalCapabilities.size() ?? (80, 24)
            let lines = TerminalView.render(state, style: .init(width: size.columns, height: size.rows, color: color))
            finished.withLock { done in if !done { console.showBlock(lines) } }
        }
        if wantStats, let s = await transport.stats() {
            let table = Self.statsTable(s, participants: participants)
            if console.jsonLogs {
                for line in table.split(separator: "\n") { console.log(level: .info, category: "stats", message: String(line)) }
            } else {
                console.err(table)
            }
        }
    }

    func finish() {
        finished.withLock { done in
            done = true
            if live { console.showBlock([]) }
        }
    }

    // MARK: - Pure parts

    /// One row per remote participant, in the room's order.
    static func rows(participants: [MeetingParticipant], media: [ParticipantMediaStats], spokenSeconds: [String: Double]) -> [TerminalView.Row] {
        let byIdentity = Dictionary(media.map { ($0.identity, $0) }, uniquingKeysWith: { a, _ in a })
        return participants.filter { !$0.isLocal }.map { p in
            let m = byIdentity[p.identity]
            return TerminalView.Row(
                name: p.name.isEmpty ? p.identity : p.name,
                speaking: m?.speaking ?? false,
                levelDBFS: m?.levelDBFS ?? -120,
                muted: p.tracks.first { $0.kind == .audio }.map(\.muted),
                spokenSeconds: spokenSeconds[p.identity] ?? 0,
                loss: PacketLoss(received: m?.packets ?? 0, lost: m?.lost ?? 0).residualRatio)
        }
    }

    /// The `--stats` table: each track under the name of the person who sends it.
    static func statsTable(_ s: PeerConnectionStats, participants: [MeetingParticipant]) -> String {
        var owner: [String: String] = [:]
        for p in participants {
            for t in p.tracks { owner[t.sid] = p.name.isEmpty ? p.identity : p.name }
        }
        var out = "stats: \(s.state) \(s.srtpProfile.map { "\($0)" } ?? "") pair \(s.selectedPair ?? "-")"
        for t in s.tracks {
            let who = t.trackSID.flatMap { owner[$0] } ?? "ssrc \(t.ssrc)"
            let name = TerminalView.fit(TerminalText.sanitize(who), columns: 20, pad: " ")
            let sid = TerminalText.sanitize(t.trackSID ?? "?")
            out += "\n  " + name + " " + sid + String(repeating: " ", count: max(0, 16 - sid.utf16.count))
                + String(cFormat: " %6ld pkts %6.1f pkt/s lost %4ld jitter %5.1f ms nacked %ld recovered %ld",
                         Int(t.packetsReceived), t.packetsPerSecond, Int(t.packetsLost), t.jitterMs, Int(t.nackedPackets), Int(t.recoveredPackets))
        }
        return out
    }

    static func freeBytes(_ path: String) -> Int64? {
        var st = statvfs()
        guard statvfs(path, &st) == 0 else { return nil }
        return Int64(st.f_bavail) * Int64(st.f_frsize)
    }
}

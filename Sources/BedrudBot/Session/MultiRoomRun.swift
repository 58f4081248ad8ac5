#if canImport(Glibc)
import Glibc
#endif
import BedrudCore
import BedrudMedia
import BedrudProtocol
import FoundationEssentials
import Synchronization

/// `join ROOM ROOM… [--record]`: several rooms in one process. Each room is a
/// ``RoomRun`` of its own — its own token, connection, session folder, summary and exit
/// code — on media threads they share (one ``MediaThreadPool``). A thin shell around
/// ``RoomsOutcome``, which decides where a signal goes and the process's exit code.
///
/// - A failing room (not found, refused token, kicked, network) never stops the others.
/// - SIGINT/SIGTERM stop every room cleanly (each leaves and finishes its files); a second
///   signal exits at once with 130, as with one room. SIGHUP rotates every recording room.
/// - Every line of a room starts with `[room] ` (`--json`: each line has `session_room`).
///
/// Thread contract: `run` once, from a task; signals arrive on the watcher's queue.
final class MultiRoomRun: Sendable {
    let ctx: BotContext
    let targets: [String]
    let labels: [String]
    let options: RoomRunOptions
    let console: Console
    let dryRun: Bool
    private let outcome: Mutex<RoomsOutcome>
    private let links: [String: RoomSignalLink]
    private let runStartUnixNanos = Int64(Date().timeIntervalSince1970 * 1e9)
    private let runStartMonotonic = MonotonicClock.nanos()

    /// Media threads for the rooms of one process: one per core, at most one per room.
    static func mediaThreads(rooms: Int) -> Int { max(1, min(rooms, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))) }

    init(ctx: BotContext, targets: [String], options: RoomRunOptions, console: Console, dryRun: Bool) {
        self.ctx = ctx
        self.targets = targets
        labels = RoomsOutcome.labels(targets.map { MeetingTarget($0).map(Self.roomName) ?? $0 })
        self.options = options
        self.console = console
        self.dryRun = dryRun
        outcome = Mutex(RoomsOutcome(labels: labels))
        links = Dictionary(uniqueKeysWithValues: labels.map { ($0, RoomSignalLink()) })
    }

    static func roomName(_ target: MeetingTarget) -> String {
        switch target {
        case .roomName(let r): r
        case .link(_, let r): r
        }
    }

    func run() async throws -> ExitCode {
        let onSignal: @Sendable (Int32) -> Void = { [self] sig in feed(.signal(sig)) }
        let onHangup: @Sendable () -> Void = { [self] in feed(.hangup) }
        let watcher = SignalWatcher(onSignal: onSignal, onHangup: options.record ? onHangup : nil)
        defer { watcher.cancel() }
        // A room's run attaching is ready for signals; one that came before reaches it then.
        for (label, link) in links { link.whenAttached { [self] in feed(.ready(label)) } }
        let pool = dryRun ? nil : MediaThreadPool(threads: Self.mediaThreads(rooms: targets.count))
        defer { pool?.shutdown() }
        let plans = sharedAuth(try targets.map { target in
            var plan = try JoinPlan.make(ctx, target: target)
            plan.entryRules = options.entry
            return plan
        })
        await withTaskGroup(of: Void.self) { group in
            for (i, plan) in plans.enumerated() {
                let label = labels[i]
                group.addTask { [self] in
                    let end = await runRoom(plan, label: label, pool: pool)
                    feed(.finished(label, end))
                }
            }
        }
        for link in links.values { link.whenAttached {} }  // the links' closures hold this run
        let (code, line) = outcome.withLock { ($0.exitCode, $0.finalLine) }
        if options.json {
            let offset = Int64((MonotonicClock.nanos() &- runStartMonotonic) / 1_000_000)
            console.json(Self.runEndedLine(outcome.withLock { $0 }, startUnixNanos: runStartUnixNanos, offsetMs: offset))
        }
        if code != .success { throw CommandFailure(code, line) }
        console.note(line + ".")
        return code
    }

    /// One room from token to summary; its failure is its own result, never thrown.
    private func runRoom(_ plan: JoinPlan, label: String, pool: MediaThreadPool?) async -> RoomsOutcome.RoomEnd {
        let roomConsole = console.labelled(label)
        var run: RoomRun?
        do {
            let (join, line) = try await JoinCommand.requestToken(plan, console: roomConsole)
            if dryRun {
                roomConsole.out(line)
                return .init(code: .success, endReason: nil, detail: "dry run", folder: nil)
            }
            roomConsole.note(line)
            var o = options
            o.pool = pool
            o.signalLink = links[label]
            let r = RoomRun(plan: plan, join: join, options: o, console: roomConsole)
            run = r
            let code = try await r.run()
            let ended = r.ended.withLock { $0 }
            return .init(code: code, endReason: ended.reason, detail: ended.detail, folder: ended.folder)
        } catch {
            let code = ErrorReporting.exitCode(for: error)
            let message = ErrorReporting.message(for: error)
            roomConsole.error(message)
            let ended = run?.ended.withLock { $0 }
            // A room that never started a session still gets its last line on stdout.
            if options.json && run == nil {
                roomConsole.json(Self.notStartedLine(label: label, code: code, detail: message, unixNanos: Int64(Date().timeIntervalSince1970 * 1e9)))
            }
            return .init(code: code, endReason: ended?.reason ?? (run == nil ? nil : .error), detail: message, folder: ended?.folder)
        }
    }

    /// One auth manager per configured instance: rooms on the same server share its login
    /// and token refreshes (one credentials file). Throwaway guests (links to other servers)
    /// keep their own.
    private func sharedAuth(_ plans: [JoinPlan]) -> [JoinPlan] {
        var byInstance: [String: AuthManager] = [:]
        return plans.map { p in
            guard !p.isThrowawayGuest else { return p }
            var q = p
            if let auth = byInstance[p.instance.name] { q.auth = auth } else { byInstance[p.instance.name] = p.auth }
            return q
        }
    }

    // MARK: - The outcome shell

    private func feed(_ input: RoomsOutcome.Input) {
        let actions = outcome.withLock { $0.handle(input) }
        for action in actions {
            switch action {
            case .stop(let label, let sig): links[label]?.signal(sig)
            case .rotate(let label): links[label]?.hangup()
            case .finish: break  // `run` reports once the task group is done
            }
        }
    }

    // MARK: - JSON lines

    /// `session_ended` for a room whose session never started (its token was refused):
    /// every room has one on stdout.
    static func notStartedLine(label: String, code: ExitCode, detail: String, unixNanos: Int64) -> String {
        TranscriptWriter.text(TranscriptLine(
            event: .sessionEnded(.init(reason: "error", endReason: EndReason.error.rawValue, exitCode: Int(code.rawValue), detail: BoundedText(detail), durationMs: 0)),
            time: TranscriptWriter.iso(unixNanos), offsetMs: 0, sessionRoom: label))
    }

    /// The last line of `join --json` with several rooms: the whole run.
    /// `offsetMs`: since the run started (`startUnixNanos`).
    static func runEndedLine(_ o: RoomsOutcome, startUnixNanos: Int64, offsetMs offset: Int64) -> String {
        let rooms = o.labels.map { label -> TranscriptEvent.RunEnded.Room in
            let e = o.ends[label]
            return .init(sessionRoom: label, exitCode: Int((e?.code ?? .failure).rawValue), endReason: Nullable(e?.endReason?.rawValue),
                         detail: BoundedText(e?.detail ?? ""), folder: Nullable(e?.folder))
        }
        return TranscriptWriter.text(TranscriptLine(
            event: .runEnded(.init(exitCode: Int(o.exitCode.rawValue), detail: BoundedText(o.finalLine), durationMs: offset, rooms: rooms)),
            time: TranscriptWriter.iso(startUnixNanos + offset * 1_000_000), offsetMs: offset))
    }
}

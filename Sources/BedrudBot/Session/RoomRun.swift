import BedrudCore
import BedrudMedia
import BedrudNet
import BedrudProtocol
import BedrudRTC
import BedrudRuntime
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// One joined room with media: the RoomManager (signalling), the WebRTC transport, the
/// media pipeline, and — when recording — the session folder with the per-participant and
/// mixed Ogg Opus files, `events.jsonl`, `transcript.vtt` and `summary.json`.
///
/// A thin shell around ``SessionLifecycle``, which decides when to leave and why (the
/// duration, the alone timeout, --wait-for-participants, a signal, low disk space, the
/// room ending): this class feeds it what happens and carries out its actions (timers,
/// free-space samples, leaving), then finishes the files and reports as ``RoomRunPlan``
/// orders, and ends as ``RoomRunEnding`` decides. Its options are ``RoomRunOptions``.
final class RoomRun: Sendable {
    let plan: JoinPlan
    let join: JoinRoomResponse
    let options: RoomRunOptions
    /// What the run decides from its options (``RoomRunPlan``).
    let decisions: RoomRunPlan
    let console: Console
    /// The lifecycle value and the run's bookkeeping, updated by the run's event tasks.
    private let book: Mutex<Book>
    private let timers = Mutex<[SessionLifecycle.Timer: Task<Void, Never>]>([:])
    /// Set by the first leave action: the room is left once.
    private let leaving = Atomic<Bool>(false)
    /// The session's own lines: with several rooms in one process they say which room.
    private var logger: Logger { Logger("session", room: console.label) }
    /// The session folder and the end reason, once known (read by ``MultiRoomRun``).
    let ended = Mutex<(folder: String?, reason: EndReason?, detail: String)>((nil, nil, ""))
    /// What the finished run received and wrote (read by ``ServeRun`` for /metrics).
    let totals = Mutex<(packets: Int, lost: Int, bytes: Int)>((0, 0, 0))

    struct Book: Sendable {
        var lifecycle: SessionLifecycle
        /// Who is in the room and their names: the one place that knows.
        var bridge: RoomMediaBridge
        var media = SessionSummary.MediaLog()
        var chatCount = 0
        /// The bot started a new meeting for the rejoin under way (``meetingRestarted()``).
        var restartPending = false
    }

    /// Where the actions go: set by `run` before the first input.
    private struct Effects: Sendable {
        var leave: @Sendable () -> Void
        var freeBytes: @Sendable () -> Int64?
        var rotate: @Sendable (RotationCause) -> Void = { _ in }
    }
    private let effects = Mutex<Effects?>(nil)

    init(plan: JoinPlan, join: JoinRoomResponse, options: RoomRunOptions, console: Console) {
        self.plan = plan
        self.join = join
        self.options = options
        decisions = RoomRunPlan(options)
        self.console = console
        book = Mutex(Book(lifecycle: SessionLifecycle(rules: options.rules, recording: options.record), bridge: RoomMediaBridge(bots: options.bots)))
    }

    // MARK: - The lifecycle shell

    /// Feeds one input to the lifecycle and carries out what it asks.
    func feed(_ input: SessionLifecycle.Input) {
        let now = Double(MonotonicClock.nanos()) / 1e9
        let actions = book.withLock { $0.lifecycle.handle(input, at: now) }
        for action in actions { perform(action) }
    }

    private func perform(_ action: SessionLifecycle.Action) {
        switch action {
        case .arm(let timer, let seconds):
            let task = Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                guard !Task.isCancelled else { return }
                self?.feed(.timerFired(timer))
            }
            timers.withLock { $0.updateValue(task, forKey: timer)?.cancel() }
        case .cancel(let timer):
            timers.withLock { $0.removeValue(forKey: timer)?.cancel() }
        case .checkDisk:
            if let free = effects.withLock({ $0 })?.freeBytes() { feed(.diskFree(bytes: free)) }
        case .leave(let reason, let detail):
            // Said once, at the end ("Left the room: …", or the error line of a failure).
            logger.debug("stopping (\(reason.rawValue)): \(detail)")
            effects.withLock { $0 }?.leave()
        case .rotate(let cause):
            logger.debug("rotating the files (\(cause.rawValue))")
            effects.withLock { $0 }?.rotate(cause)
        }
    }

    /// The meeting ended during an outage and the bot started a new one as the room's
    /// owner (``JoinPlan/rejoinToken(onRecreated:)``): said once, and the files go on in
    /// new numbered segments, so one file never joins two meetings.
    ///
    /// The rotation waits for the rejoin (`reconnected`): by then whoever left with the old
    /// meeting has been reported gone, and whoever is already back continues in their
    /// next numbered file, with the outage as its `reconnect` gap.
    func meetingRestarted() {
        console.note("The meeting in '\(join.room.name)' ended during the outage; started a new one as the room's owner.")
        book.withLock { $0.restartPending = true }
    }

    /// Free bytes for unprivileged writers on the file system of `path`.
    static func freeBytes(_ path: String) -> Int64? {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return nil }
        return Int64(s.f_bavail) * Int64(s.f_frsize)
    }

    /// Joins, follows the room until it ends, finishes the media and the session's files,
    /// runs `on_finish`, and ends with the exit code ``RoomRunEnding`` decides (a failure
    /// is thrown as a ``CommandFailure``).
    func run() async throws -> ExitCode {
        let startUnixNanos = Int64(Date().timeIntervalSince1970 * 1e9)
        let folder = try openFolder(startUnixNanos: startUnixNanos)
        defer { folder?.release() }
        ended.withLock { $0.folder = folder?.path }
        let reserve = folder.map { DiskReserve(folder: $0.path) }  // room to finish the files on a full disk
        defer { reserve?.release() }
        let parts = try assemble(folder: folder, startUnixNanos: startUnixNanos)
        let onHangup: @Sendable () -> Void = { [weak self] in self?.feed(.hangup) }
        let watcher = RoomSignals.watch(options.signalLink, onSignal: { [weak self] sig in self?.feed(.signal(sig)) },
                                        onHangup: options.record ? onHangup : nil)
        defer { watcher.cancel() }

        // Free space is checked here, before joining: a disk that is already low never joins.
        feed(.started)
        let stoppedEarly = book.withLock { $0.lifecycle.isStopping }
        // A run stopped before joining never connects, so its room never has events.
        let roomEvents = stoppedEarly ? nil : Task { await self.consumeRoomEvents(parts.session, pipeline: parts.pipeline, transcript: parts.transcript) }
        let mediaEvents = Task { await self.consumeMediaEvents(pipeline: parts.pipeline, transcript: parts.transcript) }
        let ticker = startTicker(parts)

        let reason: RoomDisconnectReason = stoppedEarly ? .left : await attend(parts.session)
        feed(.roomEnded(reason))
        ticker.cancel()
        parts.status.finish()
        await roomEvents?.value

        // Finish the media: files end now, are closed and renamed (with the reserve's room
        // if the disk is full).
        reserve?.release()
        let rtcStats = await finishMedia(parts, watcher: watcher, mediaEvents: mediaEvents)
        var ending = RoomRunEnding(room: reason, lifecycle: book.withLock { $0.lifecycle.ending })
        ending.finalLine(await parts.session.finalLine(reason, otherwise: ending.lifecycleWords))
        ending.diskFull(parts.disk.finalMessage(pipeline: parts.pipeline))
        record(ending, parts)
        if let folder, let transcript = parts.transcript {
            await finishFolder(folder, transcript: transcript, parts: parts, rtc: rtcStats, ending: &ending)
        }
        if let failure = ending.failure { throw failure }
        console.note(ending.leftLine)
        return ending.code
    }

    // MARK: - The steps of a run

    /// What one run has made: the media pipeline and its files, the connection and the
    /// session over it, the live view and the disk watch.
    private struct Parts: Sendable {
        let startUnixNanos: Int64
        let folder: SessionFolder?
        let pipeline: MediaPipeline
        let transcript: TranscriptWriter?
        let router: MediaRouter
        let transport: WebRTCTransport
        let session: RoomSession
        let status: StatusReporter
        let disk: DiskFullWatch
    }

    /// The session folder of a recording (nil without `--record`).
    private func openFolder(startUnixNanos: Int64) throws -> SessionFolder? {
        guard options.record else { return nil }
        let base = RecordingLayout.directory(outputDir: options.outputDir, template: options.pathTemplate, room: join.room.name,
                                             instance: plan.instance.name, startUnixSeconds: Double(startUnixNanos) / 1e9)
        return try SessionFolder.create(base: base, directoryMode: options.directoryMode, fileMode: options.fileMode)
    }

    /// Makes the pipeline, the transcript, the connection and the session; writes the
    /// transcript's first event and points the lifecycle's actions at them.
    private func assemble(folder: SessionFolder?, startUnixNanos: Int64) throws -> Parts {
        let directory = folder?.path
        let status = StatusReporter(console: console, showStats: options.showStats, interval: options.statsIntervalSeconds, json: options.json)
        let pc = decisions.pipeline(room: join.room.name, startUnixNanos: startUnixNanos, liveView: status.live, logRoom: console.label)
        if !pc.decode { logger.debug("not decoding the audio: no recording, no --json, no live view") }
        let sinks: RecordingSinkFactory & Sendable = folder ?? DiscardingSinkFactory()
        let pipeline = MediaPipeline(config: pc, sinks: sinks, pool: options.pool)
        let transcript = try TranscriptWriter.make(directory: directory, json: options.json ? console : nil, startUnixNanos: startUnixNanos,
                                                   startMonotonicNanos: pipeline.startNanos, mode: options.fileMode)
        let router = MediaRouter(pipeline: pipeline, filter: options.filter, logRoom: console.label)
        // A recording that tells the room opens the publisher connection for its one chat.
        let transport = RoomSession.makeTransport(livekitHost: join.livekitHost, publishData: options.announces, router: router, logRoom: console.label)
        var roomOptions = RoomManagerOptions()
        roomOptions.state.maxOutageMs = Int64(options.maxOutage * 1000)
        roomOptions.logRoom = console.label
        let restarted: @Sendable () -> Void = { [weak self] in self?.meetingRestarted() }
        let session = RoomSession(plan: plan, join: join, transport: transport, options: roomOptions, onRecreated: restarted)
        router.room = session.room

        let claims = JWTClaims(token: join.token)
        transcript?.write(.sessionStarted(.init(
            room: BoundedText(join.room.name), server: plan.instance.server, livekitHost: BoundedText(join.livekitHost),
            botIdentity: BoundedText(claims?.subject ?? ""), botName: BoundedText(claims?.name ?? ""), version: BedrudBotVersion.string,
            note: "Chat sent before the bot joined is not stored by Bedrud or LiveKit and cannot be captured.")))
        if let directory { console.note("Recording into \(directory)") }

        let room = session.room
        effects.withLock {
            $0 = Effects(
                leave: { [self] in
                    guard leaving.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
                    Task { await room.leave() }
                },
                freeBytes: { directory.flatMap(Self.freeBytes) },
                rotate: { cause in pipeline.send(.rotate(cause)) })
        }
        return Parts(startUnixNanos: startUnixNanos, folder: folder, pipeline: pipeline, transcript: transcript, router: router,
                     transport: transport, session: session, status: status, disk: DiskFullWatch(directory: directory ?? ""))
    }

    /// Once a second: the size `--split-size` samples, failed writes, the live view.
    private func startTicker(_ parts: Parts) -> Task<Void, Never> {
        let sizedFolder = options.rules.splitBytes > 0 ? parts.folder : nil
        return Task {
            var tick = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                tick += 1
                if let sizedFolder { self.feed(.segmentBytes(sizedFolder.largestCurrentSegmentBytes)) }
                if let why = parts.disk.check(pipeline: parts.pipeline, transcript: parts.transcript) {
                    self.feed(.writeFailed(noSpace: parts.disk.noSpace, detail: why))
                }
                await parts.status.tick(tick, room: parts.session.room, pipeline: parts.pipeline, transport: parts.transport, run: self)
            }
        }
    }

    /// Connects and stays until the room ends for the bot; how it ended.
    private func attend(_ session: RoomSession) async -> RoomDisconnectReason {
        await session.connect()
        return await session.room.waitUntilFinished() ?? .left
    }

    /// Stops the pipeline (the files end now, are closed and renamed), drains its events
    /// and closes the connection; the connection's last figures.
    private func finishMedia(_ parts: Parts, watcher: any SignalSubscription, mediaEvents: Task<Void, Never>) async -> PeerConnectionStats? {
        parts.pipeline.retryWritesNow()
        await parts.pipeline.stop()
        watcher.filesFinished()
        await mediaEvents.value
        let rtcStats = await parts.transport.stats()
        await parts.transport.shutdown()
        return rtcStats
    }

    /// Keeps how the run ended and what it received (read by ``MultiRoomRun`` and
    /// ``ServeRun``), and ends the transcript with it.
    private func record(_ ending: RoomRunEnding, _ parts: Parts) {
        ended.withLock { ($0.reason, $0.detail) = (ending.lifecycle.reason, ending.message) }
        let media = parts.pipeline.stats
        totals.withLock {
            $0 = (media.participants.reduce(0) { $0 + $1.packets }, media.participants.reduce(0) { $0 + $1.lost }, media.pageBytesWritten)
        }
        parts.transcript?.write(.sessionEnded(.init(reason: ending.room.description, endReason: ending.lifecycle.reason.rawValue,
                                                    exitCode: Int(ending.code.rawValue), detail: BoundedText(ending.message),
                                                    durationMs: parts.transcript?.offsetNow() ?? 0)))
    }

    /// Finishes a recording's folder step by step, as ``RoomRunPlan/finishing``
    /// orders; a session file that cannot be written turns a success into a failure.
    private func finishFolder(_ folder: SessionFolder, transcript: TranscriptWriter, parts: Parts, rtc: PeerConnectionStats?,
                              ending: inout RoomRunEnding) async {
        transcript.sync()
        let durationMs = transcript.offsetNow()
        let media = parts.pipeline.stats
        var summary: SessionSummary?
        for step in decisions.finishing {
            switch step {
            case .writeTranscript:
                do {
                    try folder.writeFinished("transcript.vtt", transcript.vtt())
                } catch {
                    logger.error("\(error)")
                    ending.sessionFileFailed("\(error)")
                }
            case .writeSummary(let pending):
                var s = makeSummary(directory: folder.path, sinks: folder, media: media, rtc: rtc, ending: ending.lifecycle, code: ending.code,
                                    message: ending.message, startUnixNanos: parts.startUnixNanos, durationMs: durationMs, router: parts.router,
                                    stats: await parts.session.room.current.stats)
                s.storage = parts.disk.summary(pipeline: parts.pipeline, transcript: transcript)
                if let pending { s.onFinish = Nullable(.init(command: pending, exitCode: Nullable(nil), signal: Nullable(nil), timedOut: false, durationMs: 0)) }
                summary = s
                do {
                    try folder.writeFinished("summary.json", s.json())
                } catch {
                    logger.error("\(error)")
                    ending.sessionFileFailed("\(error)")
                }
            case .writeReport:
                await SessionReport.writeOffPool(folder: folder.path, instance: plan.instance.name, levels: media.levels)
            case .listFiles:
                console.note(Self.filesLine(directory: folder.path))
            case .releaseFolder:
                folder.release()
            case .runOnFinish(let command):
                if let summary { await runOnFinish(command, folder: folder.path, code: ending.code, summary: summary) }
            }
        }
    }

    /// Runs `on_finish` with the finished folder, logs a failure and records the result
    /// in summary.json (replaced atomically; the copy the command read says `exit_code` null).
    private func runOnFinish(_ command: String, folder: String, code: ExitCode, summary: SessionSummary) async {
        logger.debug("on_finish: running \(TerminalText.quoted(command, limit: 200))")
        let r = await FinishHook.run(command, folder: folder, exitCode: code.rawValue, timeout: options.onFinishTimeout,
                                     environment: ProcessInfo.processInfo.environment)
        if let e = r.spawnError {
            logger.error("on_finish could not be started: \(e)")
        } else if r.timedOut {
            logger.error("on_finish did not finish within \(ConfigValues.formatDuration(options.onFinishTimeout)) and was stopped")
        } else if let c = r.exitCode, c != 0 {
            logger.error("on_finish failed with exit code \(c)")
        } else if let s = r.signal {
            logger.error("on_finish was killed by signal \(s)")
        }
        var s = summary
        s.onFinish = Nullable(.init(command: command, exitCode: Nullable(r.exitCode.map(Int.init)), signal: Nullable(r.signal.map(Int.init)),
                                    timedOut: r.timedOut, durationMs: r.durationMs))
        do {
            try Self.replaceFile(folder + "/summary.json", s.json(), mode: options.fileMode)
        } catch {
            logger.error("\(error)")
        }
    }

    /// Writes `text` to `path` through `path.part` and renames it over the old file
    /// (``AtomicFile``); every failing step is reported.
    static func replaceFile(_ path: String, _ text: String, mode: mode_t) throws {
        do throws(AtomicFile.Failure) {
            try AtomicFile.write(text.utf8, to: path, through: path + ".part", mode: mode, replacing: true)
        } catch {
            throw CommandFailure(.failure, error.description)
        }
    }

    // MARK: - Events

    private func consumeRoomEvents(_ session: RoomSession, pipeline: MediaPipeline, transcript: TranscriptWriter?) async {
        var formatter = RoomEventFormatter()
        for await event in session.events {
            if let line = formatter.text(event), !options.json { console.event(JoinCommand.stamp(Date()) + " " + line) }
            if case .roomJoined = event {
                await session.room.send(BotRecognition.markerRequest)
                if options.announces, let text = options.announce { Task { await self.announce(text, session: session) } }
            }
            handle(event, pipeline: pipeline)
            if let transcript { TranscriptEvents.write(event, to: transcript, formatter: formatter) }
        }
    }

    /// Posts the recording notice as an ordinary chat, as the web client sends one: said
    /// on stderr when it went out, warned when the data channel did not open.
    private func announce(_ text: String, session: RoomSession) async {
        guard await session.waitForDataChannel(timeout: 15) else {
            logger.warning("could not tell the room it is recorded: the data channel did not open")
            return
        }
        guard let who = session.joined else { return }
        let sent = await ChatPost.send(text, as: who, over: session)
        if sent { console.note("Told the room it is being recorded (record.announce).") } else {
            logger.warning("could not tell the room it is recorded: the chat could not be sent")
        }
    }

    /// Feeds one room event to the media bridge (who is present, what the pipeline is told)
    /// and the number of people it counts to the lifecycle (whether anyone keeps the bot
    /// company), and counts what the summary reports.
    private func handle(_ event: RoomEvent, pipeline: MediaPipeline) {
        let (controls, people) = book.withLock { b in (b.bridge.handle(event), b.bridge.people.count) }
        for control in controls { pipeline.send(control) }
        switch event {
        case .participantJoined, .participantRejoined, .participantUpdated, .participantLeft:
            feed(.people(people))
        case .reconnected:
            let restarted = book.withLock { b in
                defer { b.restartPending = false }
                return b.restartPending
            }
            if restarted { feed(.meetingRestarted) }
        case .chatReceived:
            book.withLock { $0.chatCount += 1 }
        case .systemMessage(let m, _) where m.event.endsRoom:
            feed(.roomEndNotice(event: m.event.name, message: m.message))
        default:
            break
        }
    }

    private func consumeMediaEvents(pipeline: MediaPipeline, transcript: TranscriptWriter?) async {
        for await event in pipeline.events {
            book.withLock { $0.media.handle(event) }
            guard let transcript else { continue }
            let name = { (identity: String) in self.book.withLock { $0.bridge.name(of: identity) } }
            TranscriptEvents.write(event, to: transcript, name: name)
            if case .warning(let text) = event { logger.warning(text) }
        }
    }

    // MARK: - Outputs

    static func filesLine(directory: String) -> String {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory).sorted()) ?? []
        return "Files in \(directory): " + files.joined(separator: ", ")
    }

    private func makeSummary(directory: String, sinks: SessionFolder, media: MediaStats, rtc: PeerConnectionStats?, ending: SessionLifecycle.Ending,
                             code: ExitCode, message: String, startUnixNanos: Int64, durationMs: Int64, router: MediaRouter,
                             stats: RoomStateStats) -> SessionSummary {
        let b = book.withLock { $0 }
        return SessionSummary(SessionSummary.Facts(
            room: join.room.name, server: plan.instance.server, startUnixNanos: startUnixNanos, durationMs: durationMs,
            endReason: ending.reason, exitCode: Int(code.rawValue), message: message, names: b.bridge.names, media: media, log: b.media,
            madePaths: sinks.madePaths, folderFiles: (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [],
            reconnects: stats.outages, reconnectAttempts: stats.reconnectAttempts, chatMessages: b.chatCount, chat: stats.chat,
            network: rtc.map { SessionSummary.Network($0, identities: router.identitiesBySid, flappingReconnects: stats.flappingReconnects) }))
    }
}

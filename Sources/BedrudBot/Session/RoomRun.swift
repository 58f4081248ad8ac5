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

/// What a `join` run should do once in the room.
struct RoomRunOptions: Sendable {
    // Defaults are the table's (``Settings/Record``); `join` reads each through the config.
    var record = false
    var outputDir = "recordings"
    var pathTemplate = Settings.Record.pathTemplate.builtIn
    var mix = Settings.Record.mix.builtIn
    var mixChannels = Settings.Record.mixChannels.builtIn
    var mixCoder = Settings.Record.mixCoder.builtIn
    var mixBitrate = Settings.Record.mixBitrate.builtIn
    var mixComplexity = Settings.Record.mixComplexity.builtIn
    var mixPassthrough = Settings.Record.mixPassthrough.builtIn
    var jitterWaitMillis = Settings.Record.jitterWait.builtIn
    var fileJitterWaitMillis = Settings.Record.fileJitterWait.builtIn
    var duration: Double?
    var aloneTimeout = Settings.Record.aloneTimeout.builtIn
    /// Seconds a lost connection is retried (record.max_outage); 0 = the resume schedule only.
    var maxOutage = Settings.Record.maxOutage.builtIn
    var showStats = false
    /// `--json`: room events as JSON lines on stdout (the objects of events.jsonl) instead of text.
    var json = false
    var statsIntervalSeconds: Double = 5
    /// Permissions of recorded files and of the folders made for them (meetings are private).
    var fileMode = Settings.Record.fileMode.builtIn
    var directoryMode = Settings.Record.dirMode.builtIn
    /// Other participants that are bots, not people (see ``BotRecognition``).
    var bots = BotRecognition()
    /// Leave with exit 14 when no person came within this many seconds.
    var waitForParticipants: Double?
    /// Stop with exit 15 below this much free space (`record.min_free`); 0 = no check.
    var minFreeBytes = Settings.Record.minFree.builtIn
    var diskCheckInterval: Double = 2
    /// `on_finish`: run with the finished folder.
    var onFinish: String?
    var onFinishTimeout = Settings.Record.onFinishTimeout.builtIn
    /// `--include` / `--exclude`: who is recorded.
    var filter = ParticipantFilter()
    /// `record.align = session`: every per-participant file starts at the session's start.
    var alignToSession = Settings.Record.alignToSession.builtIn
    /// `--split` / `--split-size`: rotate the files every so many seconds / at so many bytes.
    var split: Double?
    var splitBytes = Settings.Record.splitSize.builtIn
    /// Several rooms in one process (``MultiRoomRun``): the shared media threads, and the
    /// link the process's signals come through (nil: a thread and a watcher of its own).
    var pool: MediaThreadPool?
    var signalLink: RoomSignalLink?
    /// Ended meetings, missing rooms, rooms that forbid recording (``RoomEntry``).
    var entry = RoomEntry.Rules()
    /// With `record`: the chat posted once the bot is in the room (`record.announce`);
    /// nil posts nothing.
    var announce: String? = Settings.Record.announce.builtIn
    /// Whether this run posts the notice: only a recording tells the room.
    var announces: Bool { record && announce != nil }
}

/// One joined room with media: the RoomManager (signalling), the WebRTC transport, the
/// media pipeline, and — when recording — the session folder with the per-participant and
/// mixed Ogg Opus files, `events.jsonl`, `transcript.vtt` and `summary.json`.
///
/// A thin shell around ``SessionLifecycle``, which decides when to leave and why (the
/// duration, the alone timeout, --wait-for-participants, a signal, low disk space, the
/// room ending): this class feeds it what happens and carries out its actions (timers,
/// free-space samples, leaving), then finishes the files and reports.
final class RoomRun: Sendable {
    let plan: JoinPlan
    let join: JoinRoomResponse
    let options: RoomRunOptions
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
        self.console = console
        var rules = SessionLifecycle.Rules()
        rules.duration = options.duration
        rules.aloneTimeout = options.aloneTimeout
        rules.waitForParticipants = options.waitForParticipants
        rules.minFreeBytes = options.minFreeBytes
        rules.diskCheckInterval = options.diskCheckInterval
        rules.split = options.split
        rules.splitBytes = options.splitBytes
        book = Mutex(Book(lifecycle: SessionLifecycle(rules: rules, recording: options.record), bridge: RoomMediaBridge(bots: options.bots)))
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

    func run() async throws -> ExitCode {
        let startUnixNanos = Int64(Date().timeIntervalSince1970 * 1e9)
        var folder: SessionFolder?
        if options.record {
            let base = RecordingLayout.directory(outputDir: options.outputDir, template: options.pathTemplate, room: join.room.name,
                                                 instance: plan.instance.name, startUnixSeconds: Double(startUnixNanos) / 1e9)
            folder = try SessionFolder.create(base: base, directoryMode: options.directoryMode, fileMode: options.fileMode)
        }
        defer { folder?.release() }
        let directory = folder?.path
        ended.withLock { $0.folder = directory }
        let reserve = directory.map { DiskReserve(folder: $0) }  // room to finish the files on a full disk
        defer { reserve?.release() }
        let disk = DiskFullWatch(directory: directory ?? "")
        let status = StatusReporter(console: console, showStats: options.showStats, interval: options.statsIntervalSeconds, json: options.json)
        var pc = MediaPipelineConfig()
        pc.decode = Self.decodes(record: options.record, json: options.json, liveView: status.live)
        if !pc.decode { logger.debug("not decoding the audio: no recording, no --json, no live view") }
        pc.room = join.room.name
        pc.sessionStartUnixNanos = startUnixNanos
        pc.mix = options.record && options.mix
        pc.mixChannels = options.mixChannels
        pc.mixCoder = options.mixCoder
        pc.mixBitrate = options.mixBitrate
        pc.mixComplexity = options.mixComplexity
        pc.mixPassthrough = options.mixPassthrough
        pc.jitterWaitMillis = options.jitterWaitMillis
        pc.fileJitterWaitMillis = options.fileJitterWaitMillis
        pc.alignToSession = options.alignToSession
        // With several rooms in one process the lower layers' lines say which room (nil: one room).
        pc.logRoom = console.label
        let sinks: RecordingSinkFactory & Sendable = folder ?? DiscardingSinkFactory()
        let pipeline = MediaPipeline(config: pc, sinks: sinks, pool: options.pool)
        let transcript = try TranscriptWriter.make(directory: directory, json: options.json ? console : nil, startUnixNanos: startUnixNanos,
                                                   startMonotonicNanos: pipeline.startNanos, mode: options.fileMode)
        let router = MediaRouter(pipeline: pipeline, filter: options.filter, logRoom: console.label)
        // A recording that tells the room opens the publisher connection for its one chat.
        let transport = RoomSession.makeTransport(livekitHost: join.livekitHost, publishData: options.announces, router: router, logRoom: console.label)
        let plan = self.plan
        var roomOptions = RoomManagerOptions()
        roomOptions.state.maxOutageMs = Int64(options.maxOutage * 1000)
        roomOptions.logRoom = console.label
        let restarted: @Sendable () -> Void = { [weak self] in self?.meetingRestarted() }
        let session = RoomSession(plan: plan, join: join, transport: transport, options: roomOptions, onRecreated: restarted)
        let room = session.room
        router.room = room

        let claims = JWTClaims(token: join.token)
        transcript?.write(.sessionStarted(.init(
            room: BoundedText(join.room.name), server: plan.instance.server, livekitHost: BoundedText(join.livekitHost),
            botIdentity: BoundedText(claims?.subject ?? ""), botName: BoundedText(claims?.name ?? ""), version: BedrudBotVersion.string,
            note: "Chat sent before the bot joined is not stored by Bedrud or LiveKit and cannot be captured.")))
        if let directory { console.note("Recording into \(directory)") }

        effects.withLock {
            $0 = Effects(
                leave: { [self] in
                    guard leaving.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
                    Task { await room.leave() }
                },
                freeBytes: { directory.flatMap(Self.freeBytes) },
                rotate: { cause in pipeline.send(.rotate(cause)) })
        }
        let onHangup: @Sendable () -> Void = { [weak self] in self?.feed(.hangup) }
        let hangup = options.record ? onHangup : nil
        let watcher = RoomSignals.watch(options.signalLink, onSignal: { [weak self] sig in self?.feed(.signal(sig)) }, onHangup: hangup)
        defer { watcher.cancel() }

        // Free space is checked here, before joining: a disk that is already low never joins.
        feed(.started)
        let stoppedEarly = book.withLock { $0.lifecycle.isStopping }

        // A run stopped before joining never connects, so its room never has events.
        let roomEvents = stoppedEarly ? nil : Task { await self.consumeRoomEvents(session, pipeline: pipeline, transcript: transcript) }
        let mediaEvents = Task { await self.consumeMediaEvents(pipeline: pipeline, transcript: transcript) }
        let sizedFolder = options.splitBytes > 0 ? folder : nil  // --split-size samples it
        let ticker = Task {
            var tick = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                tick += 1
                if let sizedFolder { self.feed(.segmentBytes(sizedFolder.largestCurrentSegmentBytes)) }
                if let why = disk.check(pipeline: pipeline, transcript: transcript) {
                    self.feed(.writeFailed(noSpace: disk.noSpace, detail: why))
                }
                await status.tick(tick, room: room, pipeline: pipeline, transport: transport, run: self)
            }
        }

        let reason: RoomDisconnectReason
        if stoppedEarly {
            reason = .left
        } else {
            await session.connect()
            reason = await room.waitUntilFinished() ?? .left
        }
        feed(.roomEnded(reason))
        ticker.cancel()
        status.finish()
        await roomEvents?.value

        // Finish the media: files end now, are closed and renamed (with the reserve's room
        // if the disk is full).
        reserve?.release()
        pipeline.retryWritesNow()
        await pipeline.stop()
        watcher.filesFinished()
        await mediaEvents.value
        let rtcStats = await transport.stats()
        await transport.shutdown()
        let ending = book.withLock { $0.lifecycle.ending } ?? SessionLifecycle.ending(reason, stop: nil)
        var code = ending.exitCode
        // The lifecycle's words where it stopped the run; the room's where the room ended it.
        var message = await session.finalLine(reason, otherwise: reason == .notAllowed || ending.reason != .left ? ending.detail : "left the room")
        // A full disk: the line also says whether every file could be finished.
        if let full = disk.finalMessage(pipeline: pipeline) { message = full }
        ended.withLock { ($0.reason, $0.detail) = (ending.reason, message) }
        let media = pipeline.stats
        totals.withLock {
            $0 = (media.participants.reduce(0) { $0 + $1.packets }, media.participants.reduce(0) { $0 + $1.lost }, media.pageBytesWritten)
        }
        transcript?.write(.sessionEnded(.init(reason: reason.description, endReason: ending.reason.rawValue, exitCode: Int(code.rawValue),
                                              detail: BoundedText(message), durationMs: transcript?.offsetNow() ?? 0)))
        if let folder, let transcript {
            transcript.sync()
            let durationMs = transcript.offsetNow()
            do {
                try folder.writeFinished("transcript.vtt", transcript.vtt())
            } catch {
                // The session's files are not all finished: not a success.
                logger.error("\(error)")
                if code == .success { (code, message) = (.diskLow, "\(error)") }
            }
            var summary = makeSummary(directory: folder.path, sinks: folder, media: media, rtc: rtcStats, ending: ending, code: code,
                                      message: message, startUnixNanos: startUnixNanos, durationMs: durationMs, router: router,
                                      stats: await room.current.stats)
            summary.storage = disk.summary(pipeline: pipeline, transcript: transcript)
            if let command = options.onFinish { summary.onFinish = Nullable(.init(command: command, exitCode: Nullable(nil), signal: Nullable(nil), timedOut: false, durationMs: 0)) }
            do {
                try folder.writeFinished("summary.json", summary.json())
            } catch {
                logger.error("\(error)")
                if code == .success { (code, message) = (.diskLow, "\(error)") }
            }
            await SessionReport.writeOffPool(folder: folder.path, instance: plan.instance.name, levels: media.levels)
            console.note(Self.filesLine(directory: folder.path))
            folder.release()
            if let command = options.onFinish {
                await runOnFinish(command, folder: folder.path, code: code, summary: summary)
            }
        }
        if code != .success { throw CommandFailure(code, message) }
        console.note("Left the room: \(message).")
        return code
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

    /// Whether the run decodes what it receives. Decoding feeds the mix, the speech detector
    /// (`speaking_turn` events and `speaking_ms`) and the live view's meters; a run with
    /// none of them (`join` without `--record` or `--json`, its stdout not a live terminal)
    /// only keeps the connection, and decoding every track would be all of its CPU.
    static func decodes(record: Bool, json: Bool, liveView: Bool) -> Bool { record || json || liveView }

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

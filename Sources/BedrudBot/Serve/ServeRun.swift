#if canImport(Glibc)
import Glibc
#endif
import BedrudCore
import BedrudMedia
import BedrudListener
import BedrudNet
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Synchronization

/// What `serve` is told by its flags and the `[serve]` section.
struct ServeOptions: Sendable {
    var listen = Settings.Serve.listen.builtIn
    /// The webhook secret's file; nil: `$CREDENTIALS_DIRECTORY/webhook-secret`.
    var secretFile: String?
    var policy = ServeState.Policy()
    /// Seconds between reconciles; 0 = webhooks alone.
    var reconcileInterval = Settings.Serve.reconcileInterval.builtIn
}

/// `bedrud-bot serve`: the thin shell around ``ServeState``. It listens for Bedrud's
/// webhooks (``HTTPListener``), reconciles against the active rooms, and runs one
/// ``RoomRun`` per meeting on media threads they share, exactly as `join --record` runs
/// one; each meeting gets its own session folder, report and `on_finish`.
///
/// Thread contract: `run` once, from a task. The listener's handler runs on the
/// library's thread and only hands work over; signals arrive on the watcher's queue.
final class ServeRun: Sendable {
    let ctx: BotContext
    let record: RoomRunOptions
    let console: Console
    private let state: Mutex<ServeState>
    private let metrics = Mutex(ServeMetrics())
    private let gate = Mutex(WebhookGate())
    private let secrets: Mutex<[[UInt8]]>
    private let serve: Mutex<ServeOptions>
    /// Each meeting's link for stopping it, and its task.
    private let meetings = Mutex<[String: (link: RoomSignalLink, task: Task<Void, Never>?)]>([:])
    private let stopped = AsyncStream<Void>.makeStream()
    private let logger = Logger("serve")
    /// Whether the account may use the admin API (rooms list, room settings).
    private let superadmin = Atomic<Bool>(false)

    init(ctx: BotContext, record: RoomRunOptions, serve: ServeOptions, secret: String, console: Console) {
        self.ctx = ctx
        self.record = record
        self.console = console
        self.serve = Mutex(serve)
        secrets = Mutex([Array(secret.utf8)])
        state = Mutex(ServeState(policy: serve.policy))
    }

    // MARK: - The run

    func run() async throws -> ExitCode {
        let inst = try ctx.instance()
        let auth = try ctx.authManager(for: inst)
        // Logged in before anything listens: a service that cannot log in says so at once.
        _ = try await auth.validAccessToken()
        let me: User
        if let u = await auth.currentUser { me = u } else { me = try await auth.me() }
        feed(.loggedIn(userID: me.id))
        let superadmin = me.accesses.contains("superadmin")
        self.superadmin.store(superadmin, ordering: .relaxed)

        let pool = MediaThreadPool(threads: MultiRoomRun.mediaThreads(rooms: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        defer { pool.shutdown() }
        let options = serve.withLock { $0 }
        let listener: HTTPListener
        do {
            listener = try HTTPListener(host: options.listen.host, port: options.listen.port) { [self] in answer($0) }
        } catch {
            throw CommandFailure(.network, "cannot listen on \(options.listen): \(error)")
        }
        listenerRef.withLock { $0 = listener }
        defer { listenerRef.withLock { $0 = nil } }
        console.note("Listening on http://\(listener.address): POST /bedrud/webhook, GET /healthz, /readyz, /metrics; "
                     + "recording rooms \(options.policy.rooms.joined(separator: ", ")) (shard \(options.policy.shard)) on \(inst.server) as \(me.email.isEmpty ? me.id : me.email).")
        // For tests and supervisors that asked for port 0: the port, alone on a line.
        if let portFile = ctx.invocation.environment["BEDRUD_BOT_SERVE_PORT_FILE"] {
            try? SecureFiles.writePrivate(Data("\(listener.port)\n".utf8), to: portFile)
        }

        let watcher = SignalWatcher(onSignal: { [self] _ in feed(.stop) }, onHangup: { [self] in reload() })
        defer { watcher.cancel() }

        let start: @Sendable (ServeState.Meeting) -> Void = { [self] m in startMeeting(m, instance: inst, auth: auth, pool: pool) }
        startRecording.withLock { $0 = start }
        let reconciler = Task { [self] in await reconcileLoop(auth: auth, superadmin: superadmin, interval: options.reconcileInterval) }
        let disk = Task { [self] in
            while !Task.isCancelled {
                let free = RoomRun.freeBytes(record.outputDir)
                metrics.withLock { $0.freeDiskBytes = free }
                try? await Task.sleep(for: .seconds(10))
            }
        }

        for await _ in stopped.stream { break }
        // SIGTERM: stop taking requests, finish every recording, then leave.
        listener.stop()
        reconciler.cancel()
        disk.cancel()
        let tasks = meetings.withLock { m in m.values.compactMap(\.task) }
        for t in tasks { await t.value }
        console.note("Stopped: every recording is finished.")
        return .success
    }

    /// Bodies the listener refused before the handler saw them.
    private let listenerRef = Mutex<HTTPListener?>(nil)
    private func refusedTooLarge() -> Int { listenerRef.withLock { $0 }?.refusedTooLarge.load(ordering: .relaxed) ?? 0 }

    private let startRecording = Mutex<(@Sendable (ServeState.Meeting) -> Void)?>(nil)

    // MARK: - Decisions in, actions out

    func feed(_ input: ServeState.Input) {
        let now = Double(MonotonicClock.nanos()) / 1e9
        let actions = state.withLock { $0.handle(input, at: now) }
        for action in actions {
            switch action {
            case .record(let m):
                startRecording.withLock { $0 }?(m)
            case .finish(let id):
                console.note("Bedrud says room \(TerminalText.quoted(id)) was deleted: finishing its recording.")
                meetings.withLock { $0[id] }?.link.signal(SIGTERM)
            case .finishAll:
                let links = meetings.withLock { $0.values.map(\.link) }
                for l in links { l.signal(SIGTERM) }
                stopped.continuation.yield()
            case .note(let text):
                console.note(TerminalText.sanitize(text))
            }
        }
    }

    // MARK: - One meeting

    private func startMeeting(_ m: ServeState.Meeting, instance: ResolvedInstance, auth: AuthManager, pool: MediaThreadPool) {
        let link = RoomSignalLink()
        let label = TerminalText.sanitize(String(m.roomName.prefix(64)))
        let roomConsole = console.labelled(label)
        // A stop that came before the run attached reaches it once it does.
        link.whenAttached { [self] in if state.withLock({ $0.stopping }) { link.signal(SIGTERM) } }
        meetings.withLock { $0[m.roomID] = (link, nil) }
        let task = Task { [self] in
            let result = await recordMeeting(m, instance: instance, auth: auth, pool: pool, link: link, console: roomConsole)
            meetings.withLock { _ = $0.removeValue(forKey: m.roomID) }
            feed(.recordingEnded(roomID: m.roomID, result))
        }
        meetings.withLock { if $0[m.roomID] != nil { $0[m.roomID]?.task = task } }
    }

    private func recordMeeting(_ m: ServeState.Meeting, instance: ResolvedInstance, auth: AuthManager, pool: MediaThreadPool,
                               link: RoomSignalLink, console roomConsole: Console) async -> ServeState.Result {
        roomConsole.note("Recording the meeting in '\(TerminalText.sanitize(m.roomName))' (announced by \(m.cause == .webhook ? "a webhook" : "the reconcile")).")
        var plan = JoinPlan(instance: instance, roomName: m.roomName, auth: auth, isThrowawayGuest: false)
        var entry = record.entry
        entry.record = true
        entry.recreate = false  // a meeting that ended is over: serve never starts one
        entry.waitForRoom = nil
        plan.entryRules = entry
        var run: RoomRun?
        do {
            // A superadmin looks before it joins: a room whose owner does not allow
            // recording is not even asked for a token (a join would add the bot to it).
            if m.cause == .webhook, superadmin.load(ordering: .relaxed),
               let room = try? await AdminAPI(auth: auth).room(id: m.roomID, name: m.roomName), room.settings?.recordingsAllowed == false {
                roomConsole.note("Not recording '\(TerminalText.sanitize(m.roomName))': its owner does not allow recording (recordingsAllowed is off).")
                return .refused(reason: "not_allowed")
            }
            let (join, line) = try await JoinCommand.requestToken(plan, console: roomConsole)
            roomConsole.note(line)
            var o = record
            o.pool = pool
            o.signalLink = link
            let r = RoomRun(plan: plan, join: join, options: o, console: roomConsole)
            run = r
            _ = try await r.run()
            count(r)
            return .finished(reason: r.ended.withLock { $0.reason?.rawValue } ?? "left")
        } catch {
            let code = ErrorReporting.exitCode(for: error)
            roomConsole.error(ErrorReporting.message(for: error))
            if let r = run { count(r) }
            let reason = run?.ended.withLock { $0.reason?.rawValue } ?? "\(code)"
            switch code {
            case .removed: return .removed(reason: reason)
            case .forbidden, .notFound: return .refused(reason: "\(code)")
            case .nobodyCame, .success: return .finished(reason: reason)
            default: return .failed(reason: reason)
            }
        }
    }

    private func count(_ r: RoomRun) {
        let t = r.totals.withLock { $0 }
        metrics.withLock {
            $0.packetsReceived += Int64(t.packets)
            $0.packetsLost += Int64(t.lost)
            $0.bytesWritten += Int64(t.bytes)
        }
    }

    // MARK: - Reconcile

    private func reconcileLoop(auth: AuthManager, superadmin: Bool, interval: Double) async {
        guard interval > 0 else {
            console.note("serve.reconcile_interval is 0: relying on webhooks alone; a webhook that is lost loses its meeting.")
            metrics.withLock { $0.ready = true }
            return
        }
        guard superadmin else {
            console.note("The account is not a superadmin: relying on webhooks alone (a meeting whose webhook is lost, or that started while serve was down, is not recorded).")
            metrics.withLock { $0.ready = true }
            return
        }
        let admin = AdminAPI(auth: auth)
        var failing = false
        while !Task.isCancelled {
            do {
                let rooms = try await admin.activeRooms()
                feed(.reconciled(rooms))
                metrics.withLock { $0.ready = true }
                if failing { console.note("Reconcile works again.") }
                failing = false
            } catch is CancellationError {
                return
            } catch {
                metrics.withLock { $0.reconcileErrors += 1 }
                if let e = error as? APIError, e.status == 403 {
                    console.warning("The account lost its superadmin access: relying on webhooks alone.")
                    metrics.withLock { $0.ready = true }
                    return
                }
                // Said when it starts failing and when it recovers, not every interval.
                if !failing { console.warning("reconcile failed (trying again every \(ConfigValues.formatDuration(interval))): \(ErrorReporting.message(for: error))") }
                failing = true
            }
            try? await Task.sleep(for: .milliseconds(Int64(interval * 1000)))
        }
    }

    // MARK: - SIGHUP

    /// Re-reads the config's `[serve]` policy and the secret (a rotated secret). A file
    /// that cannot be read keeps what was in force, and says why.
    private func reload() {
        do {
            let config = try ctx.invocation.configuration()
            let fresh = try ServeCommand.serveOptions(ctx.invocation, config)
            let secret = try ServeCommand.readSecret(fresh, environment: ctx.invocation.environment)
            secrets.withLock { $0 = [Array(secret.utf8)] }
            serve.withLock { $0.policy = fresh.policy }
            state.withLock { $0.policy = fresh.policy }
            console.note("Reloaded the configuration and the webhook secret (SIGHUP).")
        } catch {
            console.error("SIGHUP: kept the running configuration: \(ErrorReporting.message(for: error))")
        }
    }

    // MARK: - The port

    /// Answers one request on the listener's thread: quickly, handing webhooks over.
    func answer(_ request: HTTPServerRequest) -> HTTPServerResponse {
        switch request.path {
        case "/bedrud/webhook":
            guard request.method == "POST" else {
                metrics.withLock { $0.requests["method", default: 0] += 1 }
                return HTTPServerResponse(status: 405, text: "use POST", headers: [("Allow", "POST")])
            }
            let expected = secrets.withLock { $0 }.map { "sha256=" + HMACSHA256.hex(key: $0, message: request.body) }
            let now = Date().timeIntervalSince1970
            let verdict = gate.withLock { $0.judge(body: request.body, signatureHeader: request.header("X-Bedrud-Signature"), expected: expected, now: now) }
            switch verdict {
            case .accept(let envelope):
                metrics.withLock { $0.requests["accepted", default: 0] += 1 }
                Task { [self] in feed(.webhook(envelope)) }
                return HTTPServerResponse(status: 200, contentType: "application/json", body: Array("{\"status\":\"ok\"}\n".utf8))
            case .refuse(let why):
                metrics.withLock { $0.requests[why.rawValue, default: 0] += 1 }
                if why == .signature { logger.debug("refused a webhook request: bad or missing signature") }
                return HTTPServerResponse(status: why.status, text: why == .signature ? "" : why.rawValue)
            }
        case "/healthz", "/readyz", "/metrics":
            guard request.method == "GET" || request.method == "HEAD" else {
                return HTTPServerResponse(status: 405, text: "use GET", headers: [("Allow", "GET, HEAD")])
            }
            if request.path == "/healthz" { return HTTPServerResponse(status: 200, text: "ok") }
            let m = metrics.withLock { $0 }
            if request.path == "/readyz" {
                return m.ready ? HTTPServerResponse(status: 200, text: "ready") : HTTPServerResponse(status: 503, text: "not ready: the first reconcile has not finished")
            }
            let s = state.withLock { $0 }
            var shown = m
            shown.requests["too_large"] = refusedTooLarge()
            return HTTPServerResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(shown.text(s).utf8))
        default:
            return HTTPServerResponse(status: 404, text: "not found")
        }
    }
}

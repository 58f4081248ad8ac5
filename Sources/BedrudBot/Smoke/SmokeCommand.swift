import BedrudCore
import BedrudMedia
import BedrudNet
import BedrudProtocol
import BedrudRTC
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// `bedrud-bot smoke ROOM|LINK`: the end-to-end test of a Bedrud deployment. One process,
/// two participants (publisher and listener, separate identities); each stage is timed and
/// decided by ``SmokeRun``; this file is only the I/O around it (docs/SMOKE.md).
enum SmokeCommand {
    static let spec = CommandSpec(
        "smoke", summary: "test a Bedrud deployment end to end (for CI)",
        discussion: """
            Joins ROOM (a room name or meeting link) twice, as a publisher and a listener with
            separate identities, and checks and times each stage: the API answers; auth; join
            tokens; signalling on both sides; ICE (the winning pair: host/srflx/relay, UDP/TCP);
            DTLS; publishing a test signal (1 kHz bursts, one per second after 1 s of
            silence); receiving and decoding it on the other side (latency of every burst,
            loss, jitter against thresholds); a chat message arriving intact; both leaving.

            Identities: for a room name or a link to a configured instance, the publisher is
            that instance's account (or its guest_name) and the listener a fresh guest; for a
            link to any other server both are guests (the room must allow guests). Bedrud
            keeps one refresh token per user: logging the same account in elsewhere ends the
            other session, so give a smoke test its own account, not a recording bot's.

            Prints a summary (✓/✗, time, measured value against threshold); --json prints one
            object instead; --junit FILE writes one testcase per stage. Exits 0 when every
            stage passed, else the code of the first failed stage (20–29, see below and
            docs/SMOKE.md).

            Examples:
              bedrud-bot smoke https://meet.example.com/m/smoke --junit smoke.xml
              bedrud-bot smoke ci-room --thresholds latency=300ms,loss=1%,jitter=20ms --json
              bedrud-bot smoke ci-room --turn-only --keep listener.wav
            """,
        arguments: [ArgumentSpec("ROOM|LINK", help: "room name or meeting link")],
        options: [
            Options.duration.spec,
            Options.thresholds.spec,
            Options.turnOnly.spec,
            Options.keep.spec,
            Options.json.spec,
            Options.junit.spec,
            Options.timeout.spec,
            Options.guestName.spec,
        ] + OptionGroups.linkTLS,
        action: run)

    /// Declared once: the spec lists them and the command reads them through these.
    enum Options {
        static let duration = ValueOption("duration", value: "DURATION", help: "Length of the test signal (default 6s: 5 bursts; 3s–60s).")
        static let thresholds = ValueOption("thresholds", value: "LIST", help: "latency=500ms,loss=5%,jitter=30ms (the defaults); any subset.")
        static let turnOnly = Flag("turn-only", help: "Use relay (TURN) candidates only, to test the TURN server.")
        static let keep = ValueOption("keep", value: "FILE", help: "Keep the listener's decoded recording of the signal as a WAV file.")
        static let json = Flag("json", help: "Print the result as one JSON object on stdout.")
        static let junit = ValueOption("junit", value: "FILE", help: "Write a JUnit XML report: one testcase per stage.")
        static let timeout = ValueOption("timeout", value: "DURATION", help: "Limit for each network stage (default \(ConfigValues.formatDuration(defaultTimeout))).")
        static let defaultTimeout: Double = 20
        static let guestName = ValueOption("guest-name", value: "NAME", help: "Display-name prefix of the guests (default: \(defaultGuestName)).")
        static let defaultGuestName = "bedrud-smoke"
    }

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        var thresholds = SmokeThresholds()
        let configured = ["latency": Settings.Smoke.maxLatency, "loss": Settings.Smoke.maxLoss, "jitter": Settings.Smoke.maxJitter]
        for (key, setting) in configured.sorted(by: { $0.key < $1.key }) {
            let value = try ctx.config.value(setting)
            do { try thresholds.apply("\(key)=\(value)") } catch { throw ConfigError("smoke.max_\(key): \(error.description)") }
        }
        if let t = inv[Options.thresholds] {
            do { try thresholds.apply(t) } catch { throw CommandFailure(.usage, error.description) }
        }
        let seconds = try inv.duration(Options.duration) ?? 6
        guard seconds >= 3, seconds <= 60 else { throw CommandFailure(.usage, "--duration must be 3s–60s") }
        let timeout = try inv.duration(Options.timeout) ?? Options.defaultTimeout
        guard timeout > 0 else { throw CommandFailure(.usage, "--timeout must be longer than 0") }
        let target = inv.positionals[0]
        let guest = inv[Options.guestName] ?? Options.defaultGuestName
        let plan = try JoinPlan.make(ctx, target: target)

        let shell = SmokeShell(ctx: ctx, plan: plan, guestPrefix: guest, thresholds: thresholds,
                               signal: SmokeSignal(seconds: seconds), timeout: timeout, turnOnly: inv[Options.turnOnly])
        let run = await shell.execute()

        if let keep = inv[Options.keep], let pcm = shell.keptPCM {
            do { try WAVFile.write(pcm, to: keep) } catch { inv.console.warning("could not write --keep \(keep): \(error)") }
        }
        if let junit = inv[Options.junit] {
            do { try SmokeReport.junit(run, target: target).write(toFile: junit, atomically: true, encoding: .utf8) } catch {
                inv.console.err("bedrud-bot: could not write --junit \(junit): \(error)")
            }
        }
        if inv[Options.json] {
            inv.console.out(SmokeReport.json(run, target: target, media: shell.media, icePair: shell.icePair, onsetsMs: shell.onsetsMs))
        } else {
            for line in SmokeReport.human(run, target: target) { inv.console.out(line) }
        }
        return run.exitCode
    }
}

/// One side of the smoke test: its login, and its room session once connecting.
final class SmokeSide: Sendable {
    let name: String
    let plan: JoinPlan
    let transport: WebRTCTransport
    private let sessionBox = Mutex<RoomSession?>(nil)
    var session: RoomSession? { sessionBox.withLock { $0 } }

    init(name: String, plan: JoinPlan, transport: WebRTCTransport) {
        self.name = name
        self.plan = plan
        self.transport = transport
    }

    func connect(_ join: JoinRoomResponse) async {
        let session = RoomSession(plan: plan, join: join, transport: transport)
        sessionBox.withLock { $0 = session }
        await session.connect()
    }

    /// Why the side's room ended, if it has.
    var ended: RoomDisconnectReason? { session?.ended }

    func leave() async -> RoomDisconnectReason? { await session?.end() }
}

/// The listener's router: the first audio track it is offered goes into one ring, read
/// by a ``ToneBurstDetector`` on its own thread.
final class SmokeReceiver: TrackRouter, @unchecked Sendable {
    // @unchecked: `detector` is touched only by the consumer thread until `stop` has joined it.
    let ring = PacketRing(capacity: 1024)
    let wake = WakeSignal()
    private let ssrcBox = Mutex<UInt32?>(nil)
    private let stopping = Atomic<Bool>(false)
    let detector: ToneBurstDetector
    private var started = false
    private let done = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let finished = Atomic<Bool>(false)

    init?(signal: SmokeSignal) {
        guard let d = ToneBurstDetector(capacitySamples: signal.totalSamples + 5 * 48_000, expectedBursts: signal.bursts) else { return nil }
        detector = d
        ring.attach(wake: wake)
    }

    var ssrc: UInt32? { ssrcBox.withLock { $0 } }

    func route(added: [RemoteTrack], removed: [RemoteTrack]) -> [UInt32: PacketRing] {
        for t in added where t.kind == "audio" {
            let mine = ssrcBox.withLock { s -> Bool in
                guard s == nil else { return false }
                s = t.ssrc
                return true
            }
            if mine { return [t.ssrc: ring] }
        }
        return [:]
    }

    func start() {
        started = true
        OSThread.start(name: "bedrud-smoke-rx") { [self] in
            while true {
                while ring.pop({ h, payload in
                    if h.kind == .rtp { detector.feed(payload, arrivalNanos: h.arrivalNanos) }
                }) {}
                if stopping.load(ordering: .acquiring) { break }
                wake.park(untilNanos: MonotonicClock.nanos() + 50_000_000) { !ring.isEmpty || stopping.load(ordering: .relaxed) }
            }
            finished.store(true, ordering: .releasing)
            done.withLock { $0?.resume(); $0 = nil }
        }
    }

    /// Stops the consumer and waits for it; the detector may be read after.
    func stop() async {
        guard started else { return }
        stopping.store(true, ordering: .releasing)
        wake.notify()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = done.withLock { d -> Bool in
                if finished.load(ordering: .acquiring) { return true }
                d = c
                return false
            }
            if now { c.resume() }
        }
    }
}

/// Runs the stages in the order ``SmokeRun`` asks, feeding it what happened.
final class SmokeShell: @unchecked Sendable {
    // @unchecked: used by one task at a time (the command's), results read after execute().
    let ctx: BotContext
    let plan: JoinPlan
    let guestPrefix: String
    let signal: SmokeSignal
    let timeout: Double
    let turnOnly: Bool
    var run: SmokeRun
    private(set) var media: SmokeMedia?
    private(set) var icePair: String?
    /// Every onset the detector found, ms after the signal's first sample was due.
    private(set) var onsetsMs: [Double] = []
    private(set) var keptPCM: [Float]?
    private var publisher: SmokeSide?
    private var listener: SmokeSide?
    private var receiver: SmokeReceiver?
    private var joins: [JoinRoomResponse] = []
    private var chatSent = ""
    private var secondPlan: JoinPlan?

    init(ctx: BotContext, plan: JoinPlan, guestPrefix: String, thresholds: SmokeThresholds, signal: SmokeSignal, timeout: Double, turnOnly: Bool) {
        self.ctx = ctx
        self.plan = plan
        self.guestPrefix = guestPrefix
        self.signal = signal
        self.timeout = timeout
        self.turnOnly = turnOnly
        run = SmokeRun(thresholds: thresholds)
    }

    func execute() async -> SmokeRun {
        var action = SmokeRun.start
        var turns = 0
        while case .run(let stage) = action, turns < 2 * SmokeStage.allCases.count {
            turns += 1
            let t0 = MonotonicClock.nanos()
            let event = await perform(stage, since: t0)
            guard let next = run.handle(event).first else { break }
            action = next
        }
        return run
    }

    static func elapsed(_ t0: UInt64) -> Double { Double(MonotonicClock.nanos() &- t0) / 1e9 }

    /// What an error from the API says, sanitised.
    static func why(_ error: any Error) -> String { TerminalText.sanitize(ErrorReporting.message(for: error)) }

    func perform(_ stage: SmokeStage, since t0: UInt64) async -> SmokeEvent {
        func pass(_ m: String = "") -> SmokeEvent { .passed(stage, seconds: Self.elapsed(t0), measured: m) }
        func fail(_ why: String) -> SmokeEvent { .failed(stage, seconds: Self.elapsed(t0), why: why) }
        do {
            switch stage {
            case .api:
                let settings = try await ServerProbe.check(try ctx.apiClient(for: plan.instance))
                _ = settings
                return pass("\(plan.instance.server) answers as Bedrud")
            case .auth:
                let second = try listenerPlan()
                _ = try await plan.auth.validAccessToken()
                _ = try await second.auth.validAccessToken()
                secondPlan = second
                return pass(plan.isThrowawayGuest || plan.instance.email == nil ? "two guests" : "account + guest")
            case .token:
                joins = [try await plan.requestToken(), try await secondPlan!.requestToken()]
                return pass("room '\(TerminalText.sanitize(joins[0].room.name))'")
            case .signalling:
                return await signalling(pass: pass, fail: fail)
            case .ice:
                return await connectivity(ice: true, pass: pass, fail: fail)
            case .dtls:
                return await connectivity(ice: false, pass: pass, fail: fail)
            case .publish:
                return try await publish(pass: pass, fail: fail)
            case .receive, .quality:
                return await receive(since: t0)
            case .chat:
                return await chat(since: t0)
            case .leave:
                return await leave(pass: pass, fail: fail)
            }
        } catch {
            let missing = (error as? APIError).map { $0.code == .notFound || $0.code == .gone } ?? ((error as? CommandFailure)?.code == .notFound)
            if stage == .token, missing {
                return fail("no such room '\(TerminalText.sanitize(plan.roomName))' (\(Self.why(error)))")
            }
            return fail(Self.why(error))
        }
    }

    func listenerPlan() throws -> JoinPlan {
        let inst = plan.instance
        let api = try ctx.apiClient(for: inst)
        let auth = AuthManager(instanceKey: inst.name + "-smoke-listener", api: api, store: MemoryCredentialStore(),
                               fallbackLogin: .guest(name: guestPrefix + " listener"), now: { Date().timeIntervalSince1970 })
        return JoinPlan(instance: inst, roomName: plan.roomName, auth: auth, isThrowawayGuest: true)
    }

    func transport(router: (any TrackRouter)?, publish: Bool) -> WebRTCTransport {
        let host = joins.first?.livekitHost ?? plan.instance.server
        return RoomSession.makeTransport(livekitHost: host, timeout: timeout, publishData: publish, router: router, relayOnly: turnOnly)
    }

    func signalling(pass: (String) -> SmokeEvent, fail: (String) -> SmokeEvent) async -> SmokeEvent {
        guard let receiver = SmokeReceiver(signal: signal) else { return fail("could not create an Opus decoder") }
        self.receiver = receiver
        let l = SmokeSide(name: "listener", plan: secondPlan!, transport: transport(router: receiver, publish: false))
        let p = SmokeSide(name: "publisher", plan: plan, transport: transport(router: nil, publish: true))
        listener = l
        publisher = p
        if turnOnly { ctx.console.note("--turn-only: relay candidates only") }
        await l.connect(joins[1])
        await p.connect(joins[0])
        let deadline = MonotonicClock.nanos() + UInt64(timeout * 1e9)
        for side in [l, p] {
            let left = Double(deadline &- min(deadline, MonotonicClock.nanos())) / 1e9
            _ = await side.session?.waitUntilJoined(timeout: left)
        }
        for side in [l, p] {
            if let ended = side.ended {
                let line = await side.session?.finalLine(ended) ?? RoomEventFormatter.explain(ended)
                // "could not join" either way: the line says so itself for a lost first join.
                let text = line.hasPrefix("could not join") ? "the \(side.name) \(line)" : "the \(side.name) could not join: \(line)"
                if ended == .notAllowed || ended == .roomNotFound {
                    // The media server refused the token Bedrud issued: the token stage's fault.
                    return .failed(.token, seconds: 0, why: "the media server refused the join token: \(text)")
                }
                return fail(text)
            }
        }
        if l.session?.joined == nil || p.session?.joined == nil {
            var why = ""
            for side in [l, p] where side.session?.joined == nil {
                if let e = await side.session?.room.lastConnectError { why += "; the \(side.name): \(TerminalText.sanitize(e))" }
            }
            return fail("no join response on both sides within \(Int(timeout)) s" + why)
        }
        receiver.start()
        return pass("both joined")
    }

    /// Decides the ICE or DTLS stage from both connections' statistics, again at each of
    /// their state changes (and the rooms' ends) and at the deadline; never on a timer tick.
    func connectivity(ice: Bool, pass: (String) -> SmokeEvent, fail: (String) -> SmokeEvent) async -> SmokeEvent {
        let l = listener!, p = publisher!
        let deadline = MonotonicClock.nanos() &+ UInt64(timeout * 1e9)
        let hint = turnOnly ? " (relay only: is TURN reachable, is its secret right?)" : " (is UDP to the media server open?)"
        func link(_ side: SmokeSide, _ stats: PeerConnectionStats?) -> SmokeLink {
            SmokeLink(name: side.name, pair: stats?.selectedPair, state: stats?.state, srtpProfile: stats?.srtpProfile.map { "\($0)" },
                      lastError: side.transport.lastError.map { TerminalText.sanitize($0) },
                      ended: side.ended.map { RoomEventFormatter.explain($0) })
        }
        while true {
            // The change counts first: a change after them wakes the wait below at once.
            let seen = (l.transport.connectionChanges, p.transport.connectionChanges)
            let sides = [link(l, await l.transport.stats()), link(p, await p.transport.publisherStats())]
            let now = MonotonicClock.nanos()
            let timedOut = now >= deadline
            let verdict = ice ? SmokeConnectivity.ice(sides, timedOut: timedOut, timeoutSeconds: Int(timeout), hint: hint)
                : SmokeConnectivity.dtls(sides, timedOut: timedOut, timeoutSeconds: Int(timeout))
            switch verdict {
            case .wait:
                let left = Double(deadline &- now) / 1e9
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { _ = await l.transport.waitForConnectionChange(after: seen.0, timeoutSeconds: left) }
                    group.addTask { _ = await p.transport.waitForConnectionChange(after: seen.1, timeoutSeconds: left) }
                    await group.next()
                    group.cancelAll()
                }
            case .pass(let measured):
                if ice { icePair = SmokeConnectivity.pairs(sides) }
                return pass(measured)
            case .fail(let why): return fail(why)
            }
        }
    }

    func publish(pass: (String) -> SmokeEvent, fail: (String) -> SmokeEvent) async throws -> SmokeEvent {
        let p = publisher!
        guard let session = p.session else { return fail("no room") }
        guard await session.waitForDataChannel(timeout: timeout) else {
            return fail("the publisher's data channel did not open" + (p.transport.lastError.map { ": \(TerminalText.sanitize($0))" } ?? ""))
        }
        // The same paced producer `play` uses, fed the test signal encoded in 20 ms frames.
        let pcm = signal.pcm()
        let source: PlaySource
        do { source = try PlaySource(.pcm(samples: pcm, channels: 1), loop: false, bitrate: 32_000) } catch {
            return fail("the test signal could not be encoded: \(error)")
        }
        let packets = (pcm.count + 959) / 960
        let ring = PacketRing(capacity: 64)
        let start: UInt64
        do {
            start = try await session.publishAudio(name: "smoke signal", stereo: false, dtx: false, ring: ring, timeout: timeout).startNanos
        } catch {
            switch error {
            case .refused(let why): return fail("the server refused to publish the track: \(why)")
            case .notPublished: return fail("the server did not publish the track (no track_published)")
            case .transport(let why): return fail(TerminalText.sanitize(why))
            }
        }
        signalStart = start
        producer = Task { await PlayProducer(source: source, ring: ring, limitSamples: nil).run(startNanos: start) }
        return pass("\(packets) packets, \(signal.bursts) bursts")
    }

    private var signalStart: UInt64 = 0
    private var producer: Task<Void, Never>?

    func receive(since t0: UInt64) async -> SmokeEvent {
        await producer?.value
        // Let the last burst's packets arrive (latency up to the threshold, plus a margin).
        try? await Task.sleep(for: .milliseconds(Int(min(2000, run.thresholds.latencyMs + 500))))
        guard let receiver else { return .failed(.receive, seconds: 0, why: "no receiver") }
        await receiver.stop()
        let d = receiver.detector
        var latencies: [Double] = []
        var seen = Set<Int>()
        onsetsMs = d.onsets.map { (Double(Int64(bitPattern: $0 &- signalStart)) / 1e6 * 10).rounded() / 10 }
        // Bursts due before the listener's first packet fell into the subscription's
        // set-up (the 1 s lead-in is for that); they are not counted as sent.
        let first = d.firstArrivalNanos
        let counted = (0..<signal.bursts).filter { first == 0 || signalStart &+ UInt64(signal.burstOffsetNanos($0)) >= first }
        // The sender may put a packet on the wire a little before its deadline (its timer's
        // slack): an onset up to one frame early belongs to the burst due then, latency 0.
        let early: Int64 = 20_000_000
        for onset in d.onsets where onset > signalStart {
            let offset = Int64(onset - signalStart)
            guard let k = signal.burst(before: offset + early), counted.contains(k), !seen.contains(k) else { continue }
            seen.insert(k)
            latencies.append(Double(max(0, offset - signal.burstOffsetNanos(k))) / 1e6)
        }
        let stats = await listener!.transport.stats()
        let track = stats?.tracks.first { $0.ssrc == receiver.ssrc }
        let loss = track?.loss ?? PacketLoss(received: d.packets, lost: 0)
        let m = SmokeMedia(burstsSent: counted.count, latenciesMs: latencies, packetsReceived: loss.arrivedFirstTime, packetsLost: loss.pathLost, jitterMs: track?.jitterMs ?? 0)
        media = m
        keptPCM = Array(d.pcm.prefix(d.samples))
        return .measured(m, seconds: Self.elapsed(t0))
    }

    func chat(since t0: UInt64) async -> SmokeEvent {
        let p = publisher!, l = listener!
        let who = p.session?.joined ?? ("", "")
        let text = "bedrud-bot smoke \(UUID().uuidString.lowercased()) ✓ äöü"
        chatSent = text
        let chat = BedrudChatPayload(id: UUID().uuidString.lowercased(), timestampMs: Int64(Date().timeIntervalSince1970 * 1000),
                                     senderName: who.name.isEmpty ? who.identity : who.name, senderIdentity: who.identity, message: text, attachments: [])
        guard await p.session?.sendData(SayCommand.packet(chat, sequence: 1).protobufBytes()) == true else {
            return .chat(sent: text, received: nil, seconds: Self.elapsed(t0))
        }
        let got = await l.session?.waitForChat(timeout: timeout)
        return .chat(sent: text, received: got, seconds: Self.elapsed(t0))
    }

    func leave(pass: (String) -> SmokeEvent, fail: (String) -> SmokeEvent) async -> SmokeEvent {
        producer?.cancel()
        await receiver?.stop()
        var problems: [String] = []
        for side in [publisher, listener].compactMap({ $0 }) {
            let r = await side.leave()
            if let r, r != .left { problems.append("the \(side.name) ended with '\(RoomEventFormatter.explain(r))'") }
        }
        if problems.isEmpty { return pass("both left") }
        // After a failed stage the server may already have dropped a side (a failed ICE or
        // DTLS ends in its timeout): that stage is the failure, leaving is only reported.
        if run.firstFailure != nil { return pass("after the failure: " + problems.joined(separator: "; ")) }
        return fail(problems.joined(separator: "; "))
    }
}

/// The kind of an ICE pair from its description ("ip:port host/udp <-> ip:port host/udp").
enum SmokePair {
    static func kind(_ description: String) -> String {
        let sides = description.split(separator: " <-> ", omittingEmptySubsequences: false).map { $0.split(separator: " ").last.map(String.init) ?? "?" }
        return sides.joined(separator: " ↔ ")
    }
}

/// A 16-bit mono 48 kHz WAV file (``WAVAudio/pcm16(_:sampleRate:channels:)``).
enum WAVFile {
    static func write(_ pcm: [Float], to path: String) throws {
        try Data(WAVAudio.pcm16(pcm.lazy.map { Int16(max(-1, min(1, $0)) * 32767) })).write(to: URL(fileURLWithPath: path))
    }
}

import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRTC
import FoundationEssentials

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

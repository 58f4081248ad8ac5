import BedrudNet
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Glibc
import Synchronization

/// Thrown by a ``RoomManager``'s token provider to end the room with `reason` instead of
/// retrying; `description` is the one line that says why.
public struct JoinTokenRefusal: Error, Sendable, CustomStringConvertible {
    public let reason: RoomDisconnectReason
    public let description: String

    public init(_ reason: RoomDisconnectReason, _ description: String) {
        self.reason = reason
        self.description = description
    }
}

/// Options of a ``RoomManager``.
public struct RoomManagerOptions: Sendable {
    /// False for a signalling-only session (no peer connection): connected at `join`.
    /// LiveKit removes a participant whose media never connects after 60 s.
    public var waitForTransport = true
    /// Room events kept for a slow consumer before the oldest are dropped (and counted).
    public var eventBufferSize = 4096
    public var signalConnectTimeout: Double = 15
    /// The room of this session's log lines when one process records several (``Logger/room``).
    public var logRoom: String?
    /// The state machine's tunables (retry schedule, timeouts); tests shorten them.
    public var state = RoomState.Configuration()

    public init() {}
}

/// The room, headless: the iOS app's RoomManager without UI.
///
/// An actor that owns the pure ``RoomState`` and performs what it asks: opens and closes
/// the signalling WebSocket (``SignalClient``), runs its timers, asks Bedrud for a fresh
/// LiveKit token for a full rejoin, and drives the WebRTC layer through the narrow
/// ``RoomTransport`` interface. Everything that happens is published in order on
/// `events`. One owner for every signal message, as the protocol requires.
public actor RoomManager {
    public nonisolated let events: AsyncStream<RoomEvent>
    private let eventSink: AsyncStream<RoomEvent>.Continuation
    private var state: RoomState
    private let signal: SignalClient
    private let tokenProvider: @Sendable () async throws -> String
    private let transport: (any RoomTransport)?
    private let logger: Logger

    // Signalling socket of the current generation and its ordered outbox.
    private var socketGeneration = 0
    private var outbox: AsyncStream<[UInt8]>.Continuation?
    private var socketTasks: [Task<Void, Never>] = []

    private var timers: [RoomTimer: Task<Void, Never>] = [:]
    private var tokenTask: Task<Void, Never>?

    // The WebRTC layer: one ordered command queue, events tagged with a generation.
    private var transportGeneration = 0
    private var transportCommands: AsyncStream<@Sendable () async -> Void>.Continuation?
    private var transportWorker: Task<Void, Never>?
    private var warnedNoTransport = false
    private var transportEventSink: AsyncStream<TransportEvent>.Continuation?

    private var finishedReason: RoomDisconnectReason?
    private var finishWaiters: [UUID: CheckedContinuation<RoomDisconnectReason?, Never>] = [:]
    /// Room events dropped because the consumer was too slow.
    public private(set) var droppedEvents = 0
    /// Requests dropped because the socket's writer fell ``queueLimit`` behind (the state
    /// machine holds requests while reconnecting; this is the queue to an open socket).
    public private(set) var droppedRequests = 0
    /// Calls on the transport dropped because its worker fell ``queueLimit`` behind.
    public private(set) var droppedTransportCommands = 0
    /// The bound of the outbox and of the transport's command queue: far above what a
    /// healthy session queues (a few per negotiation), low enough to bound a stuck one.
    static let queueLimit = 1024
    /// Drains the current transport generation's events into the state machine.
    private var transportEventTask: Task<Void, Never>?
    /// Who publishes each remote track, for ``trackOwner(participantSid:trackSid:)``.
    private nonisolated let owners = Mutex(TrackOwners())

    /// - Parameters:
    ///   - livekitHost: Bedrud's `livekitHost` from the join answer.
    ///   - tokenProvider: asks Bedrud for a fresh LiveKit token (`/room/refresh-token`), for full
    ///     rejoins. A ``JoinTokenRefusal`` it throws ends the room with that reason; an
    ///     ``APIError`` 410/403/404/401 ends it as room ended / forbidden / not found / not
    ///     allowed; anything else is retried.
    ///   - transport: the WebRTC layer, or nil for signalling only.
    public init(
        livekitHost: String, tls: TLSConfiguration, clientVersion: String, options: RoomManagerOptions = RoomManagerOptions(),
        transport: (any RoomTransport)?, tokenProvider: @escaping @Sendable () async throws -> String
    ) {
        var configuration = options.state
        configuration.waitForTransport = options.waitForTransport && transport != nil
        state = RoomState(configuration: configuration)
        signal = SignalClient(livekitHost: livekitHost, tls: tls, connectTimeout: options.signalConnectTimeout,
                              clientInfo: SignalURL.ClientInfo(version: clientVersion, osVersion: Self.osVersion()), logRoom: options.logRoom)
        logger = Logger("room", room: options.logRoom)
        self.transport = transport
        self.tokenProvider = tokenProvider
        (events, eventSink) = AsyncStream<RoomEvent>.makeStream(bufferingPolicy: .bufferingNewest(max(64, options.eventBufferSize)))
    }

    static func osVersion() -> String {
        var u = utsname()
        uname(&u)
        return withUnsafeBytes(of: &u.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    // MARK: - Public API

    /// Starts joining with a LiveKit token from Bedrud's `/room/join`.
    public func connect(token: String) {
        startTransportWorker()
        apply(.connect(token: token))
    }

    /// Leaves gracefully (sends `leave`, closes the socket and the peer connections) and
    /// returns why the room ended — `left`, unless it had ended already.
    @discardableResult
    public func leave(timeout: Double = 3) async -> RoomDisconnectReason {
        if let r = finishedReason { return r }
        apply(.leave)
        return await waitUntilFinished(timeout: timeout) ?? .left
    }

    /// Sends a request (subscription, track settings, …); held while reconnecting.
    public func send(_ request: LiveKit.SignalRequest) { apply(.sendRequest(request)) }

    /// Waits until the room ends and returns why; nil if `timeout` passes first.
    public func waitUntilFinished(timeout: Double? = nil) async -> RoomDisconnectReason? {
        if let r = finishedReason { return r }
        let id = UUID()
        var timer: Task<Void, Never>?
        if let timeout {
            timer = Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                if !Task.isCancelled { await self?.giveUp(id) }
            }
        }
        defer { timer?.cancel() }
        return await withCheckedContinuation { finishWaiters[id] = $0 }
    }

    private func giveUp(_ id: UUID) {
        finishWaiters.removeValue(forKey: id)?.resume(returning: nil)
    }

    /// The room as the state machine sees it now (participants, tracks, connection state).
    public var current: RoomState { state }

    /// The participant who publishes a remote track (by the participant sid of its msid,
    /// else its track sid), from any thread and without waiting for the actor: the
    /// WebRTC layer asks while it applies an offer. Every participant update applied
    /// before that offer arrived is in it (``TrackOwners``).
    public nonisolated func trackOwner(participantSid: String?, trackSid: String?) -> TrackOwner? {
        owners.withLock { $0.owner(participantSid: participantSid, trackSid: trackSid) }
    }

    /// Participants, sessions and tracks ``trackOwner(participantSid:trackSid:)`` knows.
    public nonisolated var trackOwnerCount: (participants: Int, sessions: Int, tracks: Int) { owners.withLock { $0.count } }

    // MARK: - Driving the state machine

    private static func now() -> RoomInstant { .ms(Int64(MonotonicClock.nanos() / 1_000_000)) }

    private func apply(_ input: RoomInput) {
        let actions = state.handle(input, at: Self.now())
        for action in actions { perform(action) }
    }

    private func perform(_ action: RoomAction) {
        switch action {
        case .openSignal(let request): openSignal(request)
        case .closeSignal: closeSignal()
        case .send(let request):
            if let outbox {
                if case .dropped = outbox.yield(request.protobufBytes()) {
                    droppedRequests += 1
                    if droppedRequestLog.allows(nowMs: Self.now().milliseconds).write {
                        logger.warning("dropped requests: the signalling writer is \(Self.queueLimit) requests behind (\(droppedRequests) dropped so far)")
                    }
                }
            } else {
                logger.debug("dropped a request with no open socket")
            }
        case .fetchJoinToken: fetchJoinToken()
        case .startTimer(let kind, let deadline, let jitter): startTimer(kind, deadline: deadline, jitterMs: jitter)
        case .cancelTimer(let kind):
            timers.removeValue(forKey: kind)?.cancel()
        case .createTransports(let configuration): createTransports(configuration)
        case .updateICEServers(let servers):
            enqueueTransport { t, _ in await t.updateICEServers(servers) }
        case .closeTransports:
            transportGeneration += 1
            enqueueTransport { t, _ in await t.close() }
        case .applyRemoteOffer(let offer, let target): applyRemoteOffer(offer, target: target)
        case .applyRemoteAnswer(let answer, let target):
            let g = transportGeneration
            enqueueTransport { [weak self] t, _ in
                do { try await t.applyRemoteAnswer(answer, target: target) } catch { await self?.transportInput(.negotiationFailed(target), generation: g) }
            }
        case .addRemoteCandidate(let candidate, let target):
            enqueueTransport { t, _ in await t.addRemoteCandidate(candidate, target: target) }
        case .restartICE(let target):
            enqueueTransport { t, _ in await t.restartICE(target) }
        case .setLocalTrackMuted:
            break  // the sender acts on the .localTrackMutedByServer event emitted with it (PlayCommand)
        case .emit(let event): emit(event)
        }
    }

    private func emit(_ event: RoomEvent) {
        // Before the actions after it (an offer's) run: its owner is known when it is routed.
        owners.withLock { $0.apply(event) }
        if case .dropped = eventSink.yield(event) { droppedEvents += 1 }
        if case .disconnected(let reason) = event { finish(reason) }
    }

    private func finish(_ reason: RoomDisconnectReason) {
        guard finishedReason == nil else { return }
        finishedReason = reason
        logger.info("room ended: \(reason)")
        for (_, t) in timers { t.cancel() }
        timers.removeAll()
        tokenTask?.cancel()
        closeSignal()
        transportGeneration += 1
        enqueueTransport { t, _ in await t.close() }
        transportCommands?.finish()
        transportEventSink?.finish()
        eventSink.finish()
        let waiters = finishWaiters
        finishWaiters = [:]
        for (_, w) in waiters { w.resume(returning: reason) }
    }

    // MARK: - Signalling socket

    private func openSignal(_ request: SignalConnectRequest) {
        closeSignal()
        socketGeneration += 1
        let generation = socketGeneration
        let (outStream, outContinuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingOldest(Self.queueLimit))
        outbox = outContinuation
        let client = signal
        let task = Task { [weak self] in
            let ws: WebSocketClient
            do {
                ws = try await client.open(request)
            } catch let error as SignalClient.ConnectError {
                await self?.signalFailed(error, generation: generation)
                return
            } catch {
                return
            }
            await self?.signalOpened(ws, outbox: outStream, generation: generation)
        }
        socketTasks.append(task)
    }

    private func signalFailed(_ error: SignalClient.ConnectError, generation: Int) {
        guard generation == socketGeneration else { return }
        logger.warning("signalling connection failed: \(error.description)")
        lastConnectError = error.description
        apply(.signalConnectFailed(error.failure))
    }

    /// The last signalling connection error, for a final message.
    public private(set) var lastConnectError: String?

    private func signalOpened(_ ws: WebSocketClient, outbox outStream: AsyncStream<[UInt8]>, generation: Int) {
        guard generation == socketGeneration else {
            Task { await ws.close(timeout: 0.2) }
            return
        }
        // Writer: sends queued requests in order; when the outbox is finished (closeSignal)
        // it closes the socket after the last one.
        let writer = Task {
            for await bytes in outStream {
                do { try await ws.send(data: bytes) } catch { break }
            }
            await ws.close(code: 1000, reason: "", timeout: 0.5)
        }
        let reader = Task { [weak self] in
            do {
                for try await message in ws.messages {
                    switch message {
                    case .data(let bytes): await self?.signalInput(.signalData(bytes), generation: generation)
                    case .text(let text): await self?.signalText(text, generation: generation)
                    case .close, .ping, .pong: break
                    }
                }
            } catch {
                await self?.logSignalEnd(error, generation: generation)
            }
            await self?.signalInput(.signalClosed, generation: generation)
        }
        socketTasks = [writer, reader]
        apply(.signalConnected)
    }

    private func logSignalEnd(_ error: any Error, generation: Int) {
        guard generation == socketGeneration else { return }
        logger.info("signalling connection lost: \(error)")
    }

    private func signalInput(_ input: RoomInput, generation: Int) {
        guard generation == socketGeneration, finishedReason == nil else { return }
        let undecodableBefore = state.stats.undecodableSignalMessages
        apply(input)
        if case .signalData(let bytes) = input, state.stats.undecodableSignalMessages > undecodableBefore {
            noteUndecodable(bytes)
        }
    }

    /// LiveKit speaks binary protobuf only: a text message is dropped, and until the
    /// join it is what a join that then times out is said to have run into.
    private func signalText(_ text: String, generation: Int) {
        guard generation == socketGeneration, finishedReason == nil else { return }
        let shown = TerminalText.quoted(String(text.prefix(120)), limit: 120)
        if !state.everConnected {
            lastConnectError = "the server sent a text message instead of LiveKit's protobuf: '\(shown)'"
        }
        textMessages += 1
        let (write, _) = undecodableLog.allows(nowMs: Self.now().milliseconds)
        if write { logger.info("dropped a signalling message sent as text, not LiveKit protobuf: '\(shown)' (\(textMessages) so far)") }
    }
    private var textMessages = 0

    /// Undecodable messages get a few lines, then one per 10 s with the running count.
    private var undecodableLog = LogBudget()

    private func noteUndecodable(_ bytes: [UInt8]) {
        let total = state.stats.undecodableSignalMessages
        guard undecodableLog.allows(nowMs: Self.now().milliseconds).write else { return }
        let head = bytes.prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
        logger.info("dropped a signalling message that is not LiveKit protobuf (\(bytes.count) bytes, starting \(head)); \(total) so far")
    }

    private func closeSignal() {
        socketGeneration += 1  // late events of the old socket are ignored from now on
        outbox?.finish()
        outbox = nil
    }

    // MARK: - Timers and tokens

    private func startTimer(_ kind: RoomTimer, deadline: RoomInstant, jitterMs: Int64) {
        timers[kind]?.cancel()
        let delay = max(0, deadline.milliseconds - Self.now().milliseconds) + (jitterMs > 0 ? Int64.random(in: 0...jitterMs) : 0)
        timers[kind] = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(delay))
            guard !Task.isCancelled else { return }
            await self?.timerFired(kind)
        }
    }

    private func timerFired(_ kind: RoomTimer) {
        guard finishedReason == nil else { return }
        timers.removeValue(forKey: kind)
        apply(.timerFired(kind))
    }

    private func fetchJoinToken() {
        tokenTask?.cancel()
        let provider = tokenProvider
        tokenTask = Task { [weak self] in
            do {
                let token = try await provider()
                await self?.tokenResult(.joinTokenReceived(token))
            } catch let e as JoinTokenRefusal {
                await self?.tokenRefused(e.description, reason: e.reason)
            } catch let e as APIError {
                if let reason = Self.refusalReason(e) {
                    await self?.tokenRefused(e.description, reason: reason)
                } else {
                    await self?.tokenFailed(e.description, permanent: false)
                }
            } catch let e as AccountProblem {
                await self?.tokenRefused(e.description, reason: .notAllowed)
            } catch {
                await self?.tokenFailed("\(error)", permanent: false)
            }
        }
    }

    /// How a refused token request ends the room; nil for a failure worth retrying.
    static func refusalReason(_ e: APIError) -> RoomDisconnectReason? {
        switch e.code {
        case .gone: .roomEnded
        case .forbidden: .forbidden
        case .notFound: .roomNotFound
        case .unauthorized, .notLoggedIn: .notAllowed
        default: nil
        }
    }

    private func tokenRefused(_ why: String, reason: RoomDisconnectReason) {
        guard finishedReason == nil else { return }
        logger.warning("Bedrud refused a fresh join token: \(why)")
        lastConnectError = why
        apply(.joinTokenRefused(reason))
    }

    private func tokenResult(_ input: RoomInput) {
        guard finishedReason == nil else { return }
        apply(input)
    }

    private func tokenFailed(_ why: String, permanent: Bool) {
        guard finishedReason == nil else { return }
        logger.warning("could not get a fresh join token from Bedrud: \(why)")
        lastConnectError = why
        apply(.joinTokenFailed(permanent: permanent))
    }

    // MARK: - WebRTC layer

    private func startTransportWorker() {
        guard transportWorker == nil else { return }
        let (stream, continuation) = AsyncStream<@Sendable () async -> Void>.makeStream(bufferingPolicy: .bufferingOldest(Self.queueLimit))
        transportCommands = continuation
        transportWorker = Task {
            for await command in stream { await command() }
        }
    }

    /// Lines a server can trigger in a loop: a few each, then one per 10 s.
    private var droppedCallLog = LogBudget()
    private var droppedRequestLog = LogBudget()
    private var offerFailureLog = LogBudget()

    /// Queues a call on the transport; calls run one at a time, in order.
    private func enqueueTransport(_ body: @escaping @Sendable (any RoomTransport, Int) async -> Void) {
        guard let transport else { return }
        let g = transportGeneration
        if case .dropped = transportCommands?.yield({ await body(transport, g) }) {
            droppedTransportCommands += 1
            // A server can cause this in a loop (a flood of trickles): a few lines, then one per 10 s.
            let (write, _) = droppedCallLog.allows(nowMs: Self.now().milliseconds)
            if write { logger.warning("dropped WebRTC calls: the transport is \(Self.queueLimit) calls behind (\(droppedTransportCommands) dropped so far)") }
        }
    }

    private func createTransports(_ configuration: TransportConfiguration) {
        guard transport != nil else { return }
        transportGeneration += 1
        let g = transportGeneration
        // Events must reach the state machine in the order the transport reports them:
        // one stream per transport generation, drained by one task.
        let (stream, sink) = AsyncStream<TransportEvent>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        transportEventSink?.finish()
        transportEventSink = sink
        transportEventTask = Task { [weak self] in
            for await event in stream { await self?.transportEvent(event, generation: g) }
        }
        enqueueTransport { [weak self] t, _ in
            do {
                try await t.create(configuration) { event in sink.yield(event) }
            } catch {
                await self?.transportFailed("\(error)", generation: g, target: configuration.primary)
            }
        }
    }

    private func transportFailed(_ why: String, generation: Int, target: LiveKit.SignalTarget) {
        logger.warning("WebRTC setup failed: \(why)")
        transportInput(.transportStateChanged(target, .failed), generation: generation)
    }

    private func applyRemoteOffer(_ offer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) {
        guard transport != nil else {
            if !warnedNoTransport {
                warnedNoTransport = true
                logger.info("signalling only: the server's media offers are not answered (LiveKit drops such a participant after 60 s)")
            }
            return
        }
        let g = transportGeneration
        enqueueTransport { [weak self] t, _ in
            do {
                let answer = try await t.applyRemoteOffer(offer, target: target)
                await self?.transportInput(.answerCreated(sdp: answer, offerID: offer.id), generation: g)
            } catch {
                await self?.offerFailed("\(error)", generation: g, target: target)
            }
        }
    }

    private func offerFailed(_ why: String, generation: Int, target: LiveKit.SignalTarget) {
        guard generation == transportGeneration, finishedReason == nil else { return }
        let (write, leftOut) = offerFailureLog.allows(nowMs: Self.now().milliseconds)
        if write { logger.warning("could not answer the server's offer: \(why.prefix(300))" + (leftOut > 0 ? " (\(leftOut) more like it not shown)" : "")) }
        apply(.offerUnanswerable(target, reason: why))
    }

    private func transportEvent(_ event: TransportEvent, generation: Int) {
        switch event {
        case .stateChanged(let target, let s): transportInput(.transportStateChanged(target, s), generation: generation)
        case .localCandidate(let c, let target): transportInput(.localCandidate(c, target), generation: generation)
        case .dataChannelOpened(let info): transportInput(.dataChannelOpened(info), generation: generation)
        case .dataReceived(let bytes, let reliable): transportInput(.dataReceived(bytes, reliable: reliable), generation: generation)
        case .offerCreated(let sdp): transportInput(.offerCreated(sdp: sdp), generation: generation)
        }
    }

    private func transportInput(_ input: RoomInput, generation: Int) {
        guard generation == transportGeneration, finishedReason == nil else { return }
        apply(input)
    }
}

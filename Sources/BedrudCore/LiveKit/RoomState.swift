import BedrudProtocol

// MARK: - Contract
//
// RoomState is the room's state machine as a pure value: no sockets, no clocks, no
// tasks. Its owner (the RoomManager actor) feeds it every input in the order things
// happened, with the time on its monotonic clock, and performs the returned actions in
// order:
//
//     let actions = state.handle(input, at: .ms(clock.milliseconds))
//
// Inputs (RoomInput):
//   connect(token:) / leave / sendRequest(_)            from the owner
//   signalConnected / signalConnectFailed(_) /           from the SignalClient (WebSocket);
//     signalData(bytes) / signalMessage(_) / signalClosed   only for the socket of the last openSignal
//   joinTokenReceived(_) / joinTokenFailed(permanent:)   answers to fetchJoinToken (Bedrud API);
//     joinTokenRefused(reason)                             a refusal that ends the room with `reason`
//   transportStateChanged / answerCreated / offerCreated / from the PeerConnections; none after
//     negotiationFailed / localCandidate /                 closeTransports for the closed ones
//     dataChannelOpened / dataReceived
//   timerFired(_)                                        when a timer the owner started expires
//
// Actions (RoomAction), performed in order:
//   openSignal / closeSignal / send                      the WebSocket (binary frames only)
//   fetchJoinToken                                       POST /api/room/refresh-token for a fresh token
//   startTimer(kind, deadline, jitterMs) / cancelTimer   the owner runs the timers: one per kind,
//                                                        a new start replaces the old deadline;
//                                                        a late or stale fire is harmless
//   createTransports / updateICEServers / closeTransports /
//   applyRemoteOffer / applyRemoteAnswer / addRemoteCandidate /
//   restartICE / setLocalTrackMuted                      the WebRTC layer
//   emit(RoomEvent)                                      publish to observers (recorder, transcript)
//
// Rules it implements (livekit-protocol.md):
//   §1.6 first message: join (or leave = join failed) on a fresh join; reconnect (or
//        leave STATE_MISMATCH = resume refused ⇒ full rejoin) on a resume.
//   §1.9 keepalive: ping + ping_req every ping_interval; any message resets liveness;
//        nothing for ping_timeout ⇒ the signal is dead ⇒ resume.
//   §5   reconnect: resume (reconnect=1&sid) first, full rejoin (fresh token from
//        Bedrud, new SID, new PCs) when resume is refused, disabled or fails; the JS
//        SDK's schedule 0, 300, 1200, 2700, 4800, 7000×5 ms, up to 1 s jitter from the
//        third attempt, 0 after a server-requested leave. When the table is used up,
//        full rejoins continue with a doubling delay capped at `rejoinBackoffMaxMs`
//        (plus jitter) until `maxOutageMs` after the connection was lost; then
//        disconnected(network(cause)) with the cause the last attempt ran into.
//   §5.4 leave: `action` when the server speaks protocol >= 13 (or sends a non-zero
//        action), else `can_reconnect` (true ⇒ full rejoin).
//   §5.7 refresh_token: the newest token is used for every resume and rejoin.
//   §6, §7 room model: participants keyed by identity; stale versions ignored; a new SID
//        for a known identity is a rejoin; tracks diffed from each full update;
//        speakers_changed deltas; every server offer answered with its id; reliable data
//        deduplicated by (participant_sid, sequence).
//
// Threading: a value type; the owner keeps it in one place (an actor) and calls
// `handle` serially. It never blocks and allocates only for the messages it handles.

/// The room's state machine. See the contract above.
public struct RoomState: Sendable {
    /// Tunables; the defaults are the JS SDK's and the LiveKit server's.
    public struct Configuration: Sendable, Equatable {
        /// Announced in the signal URL (`protocol=`); decides how `leave` is read.
        public var announcedProtocol: Int32 = LiveKit.clientProtocol
        /// When true, "connected" waits for the primary peer connection. A signalling-only
        /// client (no WebRTC) sets false and is connected at `join`.
        public var waitForTransport = true
        /// Delay before reconnect attempt n (1-based) is element n-1; the count is the
        /// number of attempts.
        public var reconnectDelaysMs: [Int64] = [0, 300, 1200, 2700, 4800, 7000, 7000, 7000, 7000, 7000]
        /// Attempts from this one on get up to `maxJitterMs` of random extra delay.
        public var jitterFromAttempt = 3
        public var maxJitterMs: Int64 = 1000
        /// Longest outage a reconnect episode rides out (resume, then full rejoins), from
        /// the moment the connection was lost; 0 gives up when `reconnectDelaysMs` is used up.
        public var maxOutageMs: Int64 = 600_000
        /// Beyond `reconnectDelaysMs`, each full rejoin waits twice the previous delay, at
        /// most this long (plus jitter).
        public var rejoinBackoffMaxMs: Int64 = 15_000
        /// Attempts for the first join (JS: one retry) on retryable failures.
        public var joinAttempts = 2
        public var signalHandshakeTimeoutMs: Int64 = 15_000
        public var firstMessageTimeoutMs: Int64 = 5_000
        public var transportTimeoutMs: Int64 = 15_000
        /// How long a failed primary transport waits for the signal channel (a `leave`
        /// racing the server's DTLS close) before a reconnect starts; 0 reconnects at once.
        public var transportFailureGraceMs: Int64 = 1_500
        public var tokenFetchTimeoutMs: Int64 = 30_000
        /// Requests held while the signal connection is not ready; the oldest is dropped beyond.
        public var maxQueuedRequests = 256
        /// Reliable-data senders remembered for deduplication (bounded memory).
        public var maxDedupSenders = 4096
        /// False (a recorder): every remote video track (camera, screen share) is turned
        /// off at the SFU with `UpdateTrackSettings{disabled: true}` as soon as it is
        /// known, so the server forwards audio only. See docs/ARCHITECTURE.md, *Audio only*.
        public var receiveVideo = false
        /// After a resume the server's re-offer normally connects ICE within a second; a
        /// resume whose primary connection is not up after this long falls back to a full
        /// rejoin (the first join keeps `transportTimeoutMs`).
        public var resumeTransportTimeoutMs: Int64 = 4_000
        /// A connection that drops again sooner than this after a reconnect completed is
        /// flapping: the new episode keeps the old outage deadline and its first attempt
        /// waits `flapBackoffBaseMs` doubled per consecutive flap (at most
        /// `rejoinBackoffMaxMs`).
        public var stableConnectionMs: Int64 = 10_000
        public var flapBackoffBaseMs: Int64 = 1_000
        /// Remote participants the room holds; more are dropped (and counted) until some leave.
        public var maxParticipants = 5_000
        /// Tracks held per participant; the rest of a larger list is dropped (and counted).
        public var maxTracksPerParticipant = 64
        /// Bytes of a participant's `metadata`, and of its `attributes` (keys and values
        /// together), held; a larger one is dropped (and counted). LiveKit's own defaults
        /// (`limit.max_metadata_size`, `max_attributes_size`: 64000).
        public var maxMetadataBytes = 64_000

        public init() {}
    }

    // MARK: Observable state

    public let configuration: Configuration
    /// The room (sid may be "" until `room_update`).
    public internal(set) var room = MeetingRoom()
    /// Ourselves, once joined.
    public internal(set) var localParticipant: MeetingParticipant?
    /// Remote participants by identity.
    public internal(set) var remoteParticipants: [String: MeetingParticipant] = [:]
    /// Identities in the order they joined (for stable listings).
    public internal(set) var participantOrder: [String] = []
    public internal(set) var serverInfo: LiveKit.ServerInfo?
    public internal(set) var clientConfiguration: LiveKit.ClientConfiguration?
    /// Last signal round-trip time from `pong_resp`.
    public internal(set) var rttMs: Int64?
    public internal(set) var stats = RoomStateStats()
    /// Whether the session was ever connected (a first join that completed).
    public internal(set) var everConnected = false
    /// What the server did wrong, in a few words, when that is why the session ended or
    /// an attempt failed (an offer we cannot answer, messages that are not LiveKit
    /// signalling, a first message that is neither join nor leave). Bounded; remote text
    /// in it is not sanitised (the printer does that).
    public internal(set) var serverProblem: String?

    public var connectionState: RoomConnectionState {
        switch phase {
        case .idle: .idle
        case .joining(let a) where !a.reconnect: .connecting
        case .joining(let a): .reconnecting(.full, attempt: a.number)
        case .resuming(let a): .reconnecting(.resume, attempt: a.number)
        case .connected: .connected
        case .disconnected(let reason): .disconnected(reason)
        }
    }

    /// Remote participants in join order.
    public var participants: [MeetingParticipant] { participantOrder.compactMap { remoteParticipants[$0] } }

    // MARK: Internal state

    enum Step: Equatable { case waiting, fetchingToken, openingSignal, awaitingFirstMessage, awaitingTransport }

    struct Attempt: Equatable {
        /// false for the first join's attempts.
        var reconnect: Bool
        var number: Int
        var step: Step
    }

    enum Phase: Equatable {
        case idle
        case joining(Attempt)
        case resuming(Attempt)
        case connected
        case disconnected(RoomDisconnectReason)
    }

    enum SignalLink { case closed, opening, open, ready }

    enum Failure {
        case connect(SignalConnectFailure)
        case timeout, signalLost, transport, protocolViolation
    }

    var phase = Phase.idle
    var signal = SignalLink.closed
    var timers: [RoomTimer: RoomInstant] = [:]
    var now = RoomInstant(milliseconds: 0)
    var output: [RoomAction] = []

    var token = ""
    var tokenIsFresh = false
    var reconnectReason = LiveKit.ReconnectReason.unknown
    /// What the latest failed attempt (or the loss itself) ran into: the final cause.
    var lastFailureCause = NetworkCause.signalLost
    /// Remote candidates for the current peer connections: parsed (trickled, or in an
    /// offer) and not parsed.
    struct RemoteCandidateCount: Equatable { var usable = 0, invalid = 0 }
    var remoteCandidates = RemoteCandidateCount()
    /// Undecodable messages on the current socket (decides a first-message timeout's cause).
    var undecodableOnSocket = 0
    /// When the last reconnect completed, and how many reconnects in a row dropped again
    /// before `stableConnectionMs` (flapping).
    var reconnectedAt: RoomInstant?
    var consecutiveFlaps = 0
    /// The current outage episode's deadline, carried over a flap.
    var outageDeadline: RoomInstant?

    var pingIntervalMs: Int64 = 0
    var pingTimeoutMs: Int64 = 0
    var lastMessageAt = RoomInstant(milliseconds: 0)

    var transportConfiguration: TransportConfiguration?
    var transportStates: [LiveKit.SignalTarget: TransportState] = [:]
    var primaryEverConnected = false

    var pendingOfferIDs: Set<UInt32> = []
    var lastRemoteOffer: LiveKit.SessionDescription?
    var lastLocalAnswer: LiveKit.SessionDescription?
    var nextLocalOfferID: UInt32 = 0
    var dataChannels: [LiveKit.DataChannelInfo] = []
    var publishedTracks: [String: LiveKit.TrackPublishedResponse] = [:]
    var unsubscribedTrackSids: Set<String> = []
    /// Tracks this server session was asked to stop forwarding (`track_setting`), sent
    /// again in `sync_state.track_sids_disabled` on resume.
    var disabledTrackSids: Set<String> = []
    /// A new server session (full rejoin) forgot every track setting: all known remote
    /// video is turned off again at the end of this input.
    var videoSweepPending = false

    var queue: [LiveKit.SignalRequest] = []
    var lastDataSequence: [String: UInt32] = [:]
    var chatAssembler = ChatAssembler()
    var sidToIdentity: [String: String] = [:]
    var retiredSids: Set<String> = []
    var retiredOrder: [String] = []

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    // MARK: - Entry point

    /// Applies one input at `now` (the owner's monotonic clock) and returns what to do.
    public mutating func handle(_ input: RoomInput, at now: RoomInstant) -> [RoomAction] {
        self.now = now
        output = []
        switch input {
        case .connect(let token): connect(token: token)
        case .leave: leave()
        case .sendRequest(let request): sendRequest(request)
        case .signalConnected: signalConnected()
        case .signalConnectFailed(let failure): signalConnectFailed(failure)
        case .signalData(let bytes):
            if let message = try? LiveKit.SignalResponse(protobufBytes: bytes) {
                signalMessage(message)
            } else if signal == .open || signal == .ready {
                // Undecodable input is counted and dropped, but it is still a sign of life.
                stats.undecodableSignalMessages += 1
                undecodableOnSocket += 1
                lastMessageAt = now
            }
        case .signalMessage(let message): signalMessage(message)
        case .signalClosed: signalClosed()
        case .joinTokenReceived(let token): joinTokenReceived(token)
        case .joinTokenFailed(let permanent): joinTokenFailed(permanent: permanent)
        case .joinTokenRefused(let reason): joinTokenRefused(reason)
        case .transportStateChanged(let target, let state): transportStateChanged(target, state)
        case .answerCreated(let sdp, let offerID): answerCreated(sdp: sdp, offerID: offerID)
        case .offerCreated(let sdp): offerCreated(sdp: sdp)
        case .negotiationFailed(let target): transportStateChanged(target, .failed)
        case .offerUnanswerable(let target, let reason): offerUnanswerable(target, reason: reason)
        case .localCandidate(let candidate, let target): sendOrQueue(.trickle(candidate, target: target))
        case .dataChannelOpened(let info): dataChannelOpened(info)
        case .dataReceived(let bytes, let reliable): dataReceived(bytes, reliable: reliable)
        case .timerFired(let timer): timerFired(timer)
        }
        if !configuration.receiveVideo { turnOffRemoteVideo() }
        let actions = output
        output = []
        return actions
    }

    // MARK: - Output helpers

    mutating func emit(_ event: RoomEvent) { output.append(.emit(event)) }

    mutating func arm(_ timer: RoomTimer, afterMs delay: Int64, jitterMs: Int64 = 0) {
        let deadline = now.advanced(byMilliseconds: max(0, delay))
        timers[timer] = deadline
        output.append(.startTimer(timer, deadline: deadline, jitterMs: jitterMs))
    }

    mutating func disarm(_ list: RoomTimer...) {
        for timer in list where timers.removeValue(forKey: timer) != nil {
            output.append(.cancelTimer(timer))
        }
    }

    mutating func disarmAll() {
        for timer in RoomTimer.allCases where timers.removeValue(forKey: timer) != nil {
            output.append(.cancelTimer(timer))
        }
    }

    // MARK: - Commands

    mutating func connect(token: String) {
        switch phase {
        case .idle, .disconnected: break
        default: return  // already joining or connected: one session per state machine
        }
        let startedAt = now
        resetSession()
        now = startedAt
        self.token = token
        tokenIsFresh = true
        phase = .joining(Attempt(reconnect: false, number: 1, step: .openingSignal))
        openSignal(.join)
    }

    mutating func leave() {
        switch phase {
        case .disconnected: return
        case .idle:
            phase = .disconnected(.left)
            emit(.disconnected(.left))
        default:
            disconnect(.left, sendLeave: true)
        }
    }

    mutating func sendRequest(_ request: LiveKit.SignalRequest) {
        switch request.message {
        case .leave:
            leave()
            return
        case .subscription(let s):
            let sids = s.trackSids + s.participantTracks.flatMap(\.trackSids)
            if s.subscribe { unsubscribedTrackSids.subtract(sids) } else { unsubscribedTrackSids.formUnion(sids) }
        case .trackSetting(let t):
            if t.disabled { disabledTrackSids.formUnion(t.trackSids) } else { disabledTrackSids.subtract(t.trackSids) }
        default: break
        }
        sendOrQueue(request)
    }

    /// Sends now when the signal connection is ready, else holds the request (bounded).
    mutating func sendOrQueue(_ request: LiveKit.SignalRequest) {
        if signal == .ready {
            output.append(.send(request))
            return
        }
        guard configuration.maxQueuedRequests > 0 else {
            stats.droppedRequests += 1
            return
        }
        if queue.count >= configuration.maxQueuedRequests {
            queue.removeFirst()
            stats.droppedRequests += 1
        }
        queue.append(request)
    }

    /// Sends what was held. After a full rejoin, negotiation messages of the old peer
    /// connections are dropped.
    mutating func flushQueue(keepNegotiation: Bool) {
        let held = queue
        queue = []
        for request in held {
            if !keepNegotiation && request.isNegotiation {
                stats.droppedRequests += 1
            } else {
                output.append(.send(request))
            }
        }
    }

    // MARK: - Signal connection

    mutating func openSignal(_ mode: SignalConnectRequest.Mode) {
        if signal != .closed { output.append(.closeSignal) }
        signal = .opening
        undecodableOnSocket = 0
        disarm(.firstMessage, .ping, .pingTimeout)
        setStep(.openingSignal)
        output.append(.openSignal(SignalConnectRequest(token: token, mode: mode)))
        arm(.signalHandshake, afterMs: configuration.signalHandshakeTimeoutMs)
    }

    mutating func closeSignal() {
        guard signal != .closed else { return }
        signal = .closed
        output.append(.closeSignal)
        disarm(.signalHandshake, .firstMessage, .ping, .pingTimeout)
    }

    mutating func signalConnected() {
        guard signal == .opening else {
            stats.unexpectedSignalMessages += 1
            return
        }
        signal = .open
        disarm(.signalHandshake)
        setStep(.awaitingFirstMessage)
        lastMessageAt = now
        arm(.firstMessage, afterMs: configuration.firstMessageTimeoutMs)
    }

    mutating func signalConnectFailed(_ failure: SignalConnectFailure) {
        guard signal == .opening else { return }
        signal = .closed
        disarm(.signalHandshake)
        attemptFailed(.connect(failure))
    }

    mutating func signalClosed() {
        guard signal != .closed else { return }
        signal = .closed
        disarm(.signalHandshake, .firstMessage, .ping, .pingTimeout)
        switch phase {
        case .connected: startReconnect(.resume, reason: .signalDisconnected)
        case .joining, .resuming: attemptFailed(.signalLost)
        case .idle, .disconnected: break
        }
    }

    mutating func startKeepalive() {
        lastMessageAt = now
        if pingIntervalMs > 0 { arm(.ping, afterMs: pingIntervalMs) }
        if pingTimeoutMs > 0 { arm(.pingTimeout, afterMs: pingTimeoutMs) }
    }

    // MARK: - Timers

    mutating func timerFired(_ timer: RoomTimer) {
        guard let deadline = timers[timer] else {
            stats.staleTimers += 1
            return
        }
        if now < deadline {
            // Woken early: keep the deadline.
            output.append(.startTimer(timer, deadline: deadline, jitterMs: 0))
            return
        }
        timers[timer] = nil
        switch timer {
        case .signalHandshake:
            guard signal == .opening else { return }
            signal = .closed
            output.append(.closeSignal)
            attemptFailed(.connect(.unreachable(.timeout)))
        case .firstMessage:
            guard signal == .open else { return }
            closeSignal()
            if undecodableOnSocket > 0 {
                // The server answered, but with bytes that are not LiveKit signalling: a
                // broken server (or not LiveKit at all), not a slow network.
                noteServerProblem("\(undecodableOnSocket) message\(undecodableOnSocket == 1 ? "" : "s") that \(undecodableOnSocket == 1 ? "is" : "are") not LiveKit signalling instead of the \(currentAttemptIsResume ? "reconnect" : "join") response")
                attemptFailed(.protocolViolation)
            } else {
                attemptFailed(.timeout)
            }
        case .transportConnect:
            guard currentStep == .awaitingTransport else { return }
            if remoteCandidates.invalid > 0 && remoteCandidates.usable == 0 {
                let n = remoteCandidates.invalid
                noteServerProblem("\(n) ICE candidate\(n == 1 ? "" : "s") that could not be parsed, and none that could")
                attemptFailed(.protocolViolation)
            } else {
                attemptFailed(.transport)
            }
        case .ping:
            guard signal == .ready, pingIntervalMs > 0 else { return }
            output.append(.send(.ping(timestampMs: now.milliseconds)))
            output.append(.send(.pingReq(timestampMs: now.milliseconds, rttMs: rttMs ?? 0)))
            arm(.ping, afterMs: pingIntervalMs)
            expireChatChunks()
        case .pingTimeout:
            guard signal == .ready, pingTimeoutMs > 0 else { return }
            // Wrapping and clamped: a clock that jumps must not trap.
            let silentFor = max(0, now.milliseconds &- lastMessageAt.milliseconds)
            if silentFor < pingTimeoutMs {
                arm(.pingTimeout, afterMs: pingTimeoutMs - silentFor)
                return
            }
            closeSignal()
            if phase == .connected {
                startReconnect(.resume, reason: .signalDisconnected)
            } else {
                attemptFailed(.signalLost)
            }
        case .retry:
            retryTimerFired()
        case .tokenFetch:
            joinTokenFailed(permanent: false)
        case .transportGrace:
            guard phase == .connected, let config = transportConfiguration else { return }
            let primary = transportStates[config.primary]
            guard primary == .failed || primary == .closed else { return }
            startReconnect(.resume, reason: config.primary == .subscriber ? .subscriberFailed : .publisherFailed)
        case .outage:
            switch phase {
            case .resuming:
                disconnect(.network(lastFailureCause), sendLeave: false)
            case .joining(let a) where a.reconnect:
                disconnect(.network(lastFailureCause), sendLeave: false)
            default:
                break
            }
        }
    }

    // MARK: - Attempts (first join, resume, full rejoin)

    var currentStep: Step? {
        switch phase {
        case .joining(let a), .resuming(let a): a.step
        default: nil
        }
    }

    mutating func setStep(_ step: Step) {
        switch phase {
        case .joining(var a):
            a.step = step
            phase = .joining(a)
        case .resuming(var a):
            a.step = step
            phase = .resuming(a)
        default: break
        }
    }

    var resumeAllowed: Bool {
        localParticipant != nil && (primaryEverConnected || !configuration.waitForTransport)
            && clientConfiguration?.resumeConnection != .disabled
    }

    /// Starts a reconnect episode from a connected session.
    mutating func startReconnect(
        _ preferred: ReconnectMode, reason: LiveKit.ReconnectReason, immediate: Bool = false, sendLeave: Bool = true
    ) {
        guard phase == .connected else { return }
        let mode: ReconnectMode = preferred == .resume && resumeAllowed ? .resume : .full
        reconnectReason = reason
        lastFailureCause = reason == .subscriberFailed || reason == .publisherFailed ? .ice : .signalLost
        disarm(.ping, .pingTimeout, .transportGrace)
        guard !configuration.reconnectDelaysMs.isEmpty else {
            disconnect(.network(lastFailureCause), sendLeave: true)
            return
        }
        // A connection that dropped again soon after the last reconnect is flapping: back
        // off instead of reconnecting once a second for ever.
        let flapping = reconnectedAt.map { now.milliseconds &- $0.milliseconds < configuration.stableConnectionMs } ?? false
        reconnectedAt = nil
        consecutiveFlaps = flapping ? consecutiveFlaps + 1 : 0
        if flapping { stats.flappingReconnects += 1 }
        stats.outages += 1
        if configuration.maxOutageMs > 0 { arm(.outage, afterMs: configuration.maxOutageMs) }
        emit(.reconnecting(mode))
        if mode == .full {
            // The old session must not linger as a ghost (§5.3).
            if sendLeave && signal == .ready { output.append(.send(.leave())) }
            closeSignal()
            closeTransports()
        } else {
            closeSignal()
        }
        if consecutiveFlaps > 0 {
            let attempt = Attempt(reconnect: true, number: 1, step: .waiting)
            phase = mode == .resume ? .resuming(attempt) : .joining(attempt)
            arm(.retry, afterMs: flapDelayMs(consecutiveFlaps), jitterMs: configuration.maxJitterMs)
        } else {
            scheduleAttempt(mode, number: 1, immediate: immediate)
        }
    }

    /// The first attempt's delay after the `flaps`-th reconnect in a row that did not
    /// last `stableConnectionMs`: the base doubled per flap, at most `rejoinBackoffMaxMs`.
    func flapDelayMs(_ flaps: Int) -> Int64 {
        let cap = max(configuration.rejoinBackoffMaxMs, configuration.flapBackoffBaseMs)
        var delay = max(configuration.flapBackoffBaseMs, 0)
        for _ in 1..<max(flaps, 1) where delay < cap { delay = min(cap, delay &* 2) }
        return delay
    }

    mutating func scheduleAttempt(_ mode: ReconnectMode, number: Int, immediate: Bool) {
        let attempt = Attempt(reconnect: true, number: number, step: .waiting)
        stats.reconnectAttempts += 1
        phase = mode == .resume ? .resuming(attempt) : .joining(attempt)
        let delay = immediate ? 0 : retryDelayMs(attempt: number)
        let jitter = !immediate && number >= configuration.jitterFromAttempt ? configuration.maxJitterMs : 0
        arm(.retry, afterMs: delay, jitterMs: jitter)
    }

    /// Whether the attempt under way is a resume.
    var currentAttemptIsResume: Bool {
        if case .resuming = phase { return true }
        return false
    }

    /// Remembers what the server did wrong (bounded: remote text can be any length).
    mutating func noteServerProblem(_ text: String) {
        serverProblem = text.count > 300 ? String(text.prefix(300)) + "…" : text
    }

    /// The WebRTC layer could not apply or answer a server offer (no fingerprint, a broken
    /// SDP): the server's fault, not the network's. While connected it is handled like a
    /// failed transport (the resume brings a fresh offer); during an attempt it fails it.
    mutating func offerUnanswerable(_ target: LiveKit.SignalTarget, reason: String) {
        stats.unanswerableOffers += 1
        noteServerProblem("an offer the bot cannot answer (\(reason))")
        if phase == .connected {
            transportStateChanged(target, .failed)
        } else if currentStep == .awaitingTransport {
            attemptFailed(.protocolViolation)
        }
    }

    /// The schedule's delay before attempt `attempt` (1-based): the table, then the
    /// last entry doubled per attempt up to `rejoinBackoffMaxMs`.
    func retryDelayMs(attempt: Int) -> Int64 {
        let delays = configuration.reconnectDelaysMs
        guard let last = delays.last else { return 0 }
        let n = max(attempt, 1)
        if n <= delays.count { return delays[n - 1] }
        let cap = max(configuration.rejoinBackoffMaxMs, last)
        var delay = max(last, 1)
        for _ in 0..<(n - delays.count) where delay < cap { delay = min(cap, delay &* 2) }
        return delay
    }

    /// Whether the episode may go on after the table: only when an outage budget is set.
    var keepsRejoining: Bool { configuration.maxOutageMs > 0 }

    /// The next reconnect attempt, in `mode`, or the end of the episode.
    mutating func nextReconnectAttempt(_ mode: ReconnectMode, immediate: Bool = false) {
        let number: Int
        let wasMode: ReconnectMode
        switch phase {
        case .resuming(let a):
            number = a.number + 1
            wasMode = .resume
        case .joining(let a) where a.reconnect:
            number = a.number + 1
            wasMode = .full
        default:
            return
        }
        closeSignal()
        disarm(.transportConnect, .tokenFetch)
        let tableUsedUp = number > configuration.reconnectDelaysMs.count
        guard !tableUsedUp || keepsRejoining else {
            disconnect(.network(lastFailureCause), sendLeave: false)
            return
        }
        // Resuming is for short breaks (the server forgets the session soon); past the
        // table only a full rejoin with a fresh token can bring the recording back.
        let newMode: ReconnectMode = mode == .resume && resumeAllowed && !tableUsedUp ? .resume : .full
        if newMode == .full && wasMode == .resume {
            emit(.reconnecting(.full))
            closeTransports()
        }
        scheduleAttempt(newMode, number: number, immediate: immediate)
    }

    mutating func retryTimerFired() {
        switch phase {
        case .joining(let a) where a.step == .waiting:
            if a.reconnect {
                setStep(.fetchingToken)
                output.append(.fetchJoinToken)
                arm(.tokenFetch, afterMs: configuration.tokenFetchTimeoutMs)
            } else {
                openSignal(.join)
            }
        case .resuming(let a) where a.step == .waiting:
            openSignal(.resume(participantSid: localParticipant?.sid ?? "", reason: reconnectReason))
        default:
            stats.staleTimers += 1
        }
    }

    mutating func joinTokenReceived(_ newToken: String) {
        guard case .joining(let a) = phase, a.step == .fetchingToken else { return }
        disarm(.tokenFetch)
        token = newToken
        tokenIsFresh = true
        openSignal(.join)
    }

    mutating func joinTokenFailed(permanent: Bool) {
        if permanent {
            joinTokenRefused(.notAllowed)
            return
        }
        guard case .joining(let a) = phase, a.step == .fetchingToken else { return }
        disarm(.tokenFetch)
        // Bedrud is unreachable: try the newest LiveKit token we have (refresh_token
        // keeps it valid for at least ten minutes).
        tokenIsFresh = false
        openSignal(.join)
    }

    mutating func joinTokenRefused(_ reason: RoomDisconnectReason) {
        guard case .joining(let a) = phase, a.step == .fetchingToken else { return }
        disarm(.tokenFetch)
        disconnect(reason, sendLeave: false)
    }

    /// What a failed attempt tells about the network, if anything.
    static func cause(of failure: Failure) -> NetworkCause? {
        switch failure {
        case .connect(.unreachable(let cause)): cause
        case .connect(.rejected(let status)): .rejected(status: status)
        case .connect(.unauthorized(let status)): .rejected(status: status)
        case .connect(.forbidden): .rejected(status: 403)
        case .connect(.roomNotFound): .rejected(status: 404)
        case .timeout: .timeout
        case .signalLost: .signalLost
        case .transport: .ice
        case .protocolViolation: nil
        }
    }

    /// One attempt failed: retry, escalate to a full rejoin, or give up.
    mutating func attemptFailed(_ failure: Failure) {
        if let cause = Self.cause(of: failure) { lastFailureCause = cause }
        switch phase {
        case .joining(let a) where !a.reconnect:
            let retryable: Bool
            let finalReason: RoomDisconnectReason
            switch failure {
            case .connect(.unauthorized):
                disconnect(.notAllowed, sendLeave: false)
                return
            case .connect(.roomNotFound):
                disconnect(.roomNotFound, sendLeave: false)
                return
            case .connect(.forbidden):
                disconnect(.refused(status: 403), sendLeave: false)
                return
            case .connect(.rejected(let status)):
                // 5xx is LiveKit failing (rtcservice.go:405-411, utils.go:395 and :403):
                // once more, then give up with the status. Anything else is final.
                retryable = (500..<600).contains(status)
                finalReason = .refused(status: status)
            case .connect(.unreachable), .timeout, .signalLost:
                retryable = true
                finalReason = .network(lastFailureCause)
            case .transport:
                // ICE/DTLS never connected (UDP blocked, TURN wrong): the network, not a
                // refusal. The server refuses a join with `leave`, never by silence.
                retryable = true
                finalReason = .network(.ice)
            case .protocolViolation:
                disconnect(.protocolError, sendLeave: false)
                return
            }
            guard retryable, a.number < configuration.joinAttempts else {
                disconnect(finalReason, sendLeave: false)
                return
            }
            closeSignal()
            closeTransports()
            disarm(.transportConnect, .ping, .pingTimeout)
            let number = a.number + 1
            phase = .joining(Attempt(reconnect: false, number: number, step: .waiting))
            arm(.retry, afterMs: retryDelayMs(attempt: number))

        case .joining:
            switch failure {
            case .connect(.unauthorized) where tokenIsFresh:
                disconnect(.notAllowed, sendLeave: false)
            case .connect(.forbidden) where tokenIsFresh:
                disconnect(.refused(status: 403), sendLeave: false)
            case .connect(.rejected(let status)) where tokenIsFresh && !(500..<600).contains(status):
                // Refused as given on a token Bedrud just issued: what a first join does
                // (final); asking again until the outage limit would get the same answer.
                // 5xx is LiveKit failing, which an outage may outlast: rejoins go on.
                disconnect(.refused(status: status), sendLeave: false)
            case .connect(.roomNotFound):
                disconnect(.roomNotFound, sendLeave: false)
            default:
                // Peer connections made for this attempt's join must not outlive it.
                closeTransports()
                nextReconnectAttempt(.full)
            }

        case .resuming:
            switch failure {
            case .connect(.unauthorized), .connect(.forbidden):
                nextReconnectAttempt(.full)  // the token expired: rejoin with a fresh one
            case .connect(.roomNotFound):
                // LiveKit closed the room while we were away (Bedrud v0.12.0 then marks the
                // meeting ended): only Bedrud knows whether it goes on, so ask it for a fresh
                // token — it answers 410, or the room's owner starts a new meeting.
                nextReconnectAttempt(.full)
            case .connect(.rejected(let status)) where status < 500:
                nextReconnectAttempt(.full)  // the server answered and will not resume us
            case .connect, .timeout, .signalLost:
                nextReconnectAttempt(.resume)
            case .transport, .protocolViolation:
                nextReconnectAttempt(.full)
            }

        case .idle, .connected, .disconnected:
            break
        }
    }

    /// The session is up: first join, resume or rejoin complete.
    mutating func completeConnection() {
        disarm(.transportConnect, .retry, .tokenFetch, .outage)
        let event: RoomEvent
        switch phase {
        case .joining(let a) where !a.reconnect: event = .connected
        case .joining: event = .reconnected(.rejoined)
        case .resuming: event = .reconnected(.resumed)
        default: return
        }
        phase = .connected
        if event == .connected {
            everConnected = true
        } else {
            reconnectedAt = now
        }
        emit(event)
    }

    mutating func disconnect(_ reason: RoomDisconnectReason, sendLeave: Bool) {
        if case .disconnected = phase { return }
        if sendLeave && signal == .ready { output.append(.send(.leave())) }
        closeSignal()
        closeTransports()
        disarmAll()
        queue = []
        pendingOfferIDs = []
        finishChatChunks()
        phase = .disconnected(reason)
        emit(.disconnected(reason))
    }

    // MARK: - Transports

    mutating func closeTransports() {
        guard transportConfiguration != nil else { return }
        transportConfiguration = nil
        transportStates = [:]
        pendingOfferIDs = []
        output.append(.closeTransports)
    }

    mutating func transportStateChanged(_ target: LiveKit.SignalTarget, _ state: TransportState) {
        guard let config = transportConfiguration else { return }
        transportStates[target] = state
        guard target == config.primary else { return }
        switch state {
        case .connected:
            primaryEverConnected = true
            disarm(.transportGrace)
            if currentStep == .awaitingTransport { completeConnection() }
        case .failed, .closed:
            if phase == .connected {
                // A kick or room deletion reaches us as `leave` on the signal socket and,
                // at the same moment, as a DTLS close on the media path; whichever is
                // read first must not turn a kick into a rejoin.
                if signal == .ready && configuration.transportFailureGraceMs > 0 {
                    if timers[.transportGrace] == nil { arm(.transportGrace, afterMs: configuration.transportFailureGraceMs) }
                } else {
                    startReconnect(.resume, reason: target == .subscriber ? .subscriberFailed : .publisherFailed)
                }
            } else if currentStep == .awaitingTransport {
                attemptFailed(.transport)
            }
        case .new, .connecting, .disconnected:
            break  // ICE may still recover; `failed` follows if it does not
        }
    }

    mutating func answerCreated(sdp: String, offerID: UInt32) {
        guard pendingOfferIDs.remove(offerID) != nil else {
            stats.unmatchedAnswers += 1
            return
        }
        let answer = LiveKit.SessionDescription(type: "answer", sdp: sdp, id: offerID)
        lastLocalAnswer = answer
        sendOrQueue(LiveKit.SignalRequest(.answer(answer)))
    }

    mutating func offerCreated(sdp: String) {
        nextLocalOfferID &+= 1
        sendOrQueue(.offer(sdp: sdp, id: nextLocalOfferID))
    }

    mutating func dataChannelOpened(_ info: LiveKit.DataChannelInfo) {
        dataChannels.removeAll { $0.label == info.label && $0.target == info.target }
        dataChannels.append(info)
    }

    /// What the server needs to check our view of the session after a resume (§5.2).
    var syncState: LiveKit.SyncState {
        LiveKit.SyncState.with {
            $0.answer = lastLocalAnswer
            $0.offer = lastRemoteOffer
            $0.subscription = LiveKit.UpdateSubscription(trackSids: unsubscribedTrackSids.sorted(), subscribe: false)
            $0.publishTracks = publishedTracks.keys.sorted().compactMap { publishedTracks[$0] }
            $0.dataChannels = dataChannels
            $0.trackSidsDisabled = disabledTrackSids.sorted()
            $0.dataChannelReceiveStates = lastDataSequence.keys.sorted().compactMap { sid in
                lastDataSequence[sid].map { LiveKit.DataChannelReceiveState(publisherSid: sid, lastSeq: $0) }
            }
        }
    }

    /// Forgets everything of an earlier session (a new `connect` after `disconnected`).
    mutating func resetSession() {
        let keep = configuration
        self = RoomState(configuration: keep)
    }
}

extension LiveKit.SignalRequest {
    /// Offer, answer, trickle or sync_state: tied to the peer connections they were made for.
    var isNegotiation: Bool {
        switch message {
        case .trickle, .answer, .offer, .syncState: true
        default: false
        }
    }
}

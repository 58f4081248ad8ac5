import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRTC
import BedrudRuntime
import FoundationEssentials
import Synchronization

/// The WebRTC side a ``RoomSession`` drives: ``WebRTCTransport``, or a fake in tests.
protocol SessionTransport: RoomTransport {
    /// Why the connection failed last, in one sentence.
    var lastError: String? { get }
    func waitForDataChannel(_ label: String, timeoutSeconds: Double) async -> Bool
    func cancelDataChannelWaits()
    func publishAudio(cid: String, stereo: Bool, dtx: Bool, ring: PacketRing, timeoutSeconds: Double) async throws -> (mid: String, startNanos: UInt64)
    func waitUntilDataSent(timeoutSeconds: Double) async -> Bool
    func setAudioMuted(mid: String, muted: Bool) async
    /// Waits until every packet of the published track `mid` has gone out (woken by the
    /// send path); false if `timeoutSeconds` passed or the connection ended first.
    func waitUntilAudioDrained(mid: String, timeoutSeconds: Double) async -> Bool
    func shutdown() async
}

extension WebRTCTransport: SessionTransport {}

/// One room joined by the bot: the WebRTC transport, the ``RoomManager`` and the task
/// that reads its events. `join`, `play`, `say` and `smoke` are uses of it.
///
/// What the commands wait for (the join, a published track, a chat, the end) is noted
/// from the events as they pass and wakes the waiter at once; nothing polls. Every event
/// is also passed on, in order, on ``events`` (bounded: the oldest are dropped, and
/// counted, for a consumer that does not keep up or does not read at all).
///
/// Thread contract: any task may call it; its state is behind one mutex.
final class RoomSession: Sendable {
    let join: JoinRoomResponse
    let room: RoomManager
    let transport: any SessionTransport
    /// The room's events, in order, after the session has noted them.
    let events: AsyncStream<RoomEvent>
    private let eventSink: AsyncStream<RoomEvent>.Continuation
    private let seen = Mutex(Seen())
    private let pump = Mutex<Task<Void, Never>?>(nil)

    /// What the session has seen so far, and who waits for what.
    struct Seen: Sendable {
        var joined: (identity: String, name: String)?
        var ended: RoomDisconnectReason?
        /// `cid` → track sid of our published tracks.
        var published: [String: String] = [:]
        /// `cid` (or "*" when the refusal named none) → why the server refused to publish it.
        var refused: [String: String] = [:]
        /// Chat texts received (the first 16).
        var chats: [String] = []
        /// Events not passed on because ``events`` was full.
        var droppedEvents = 0
        /// ``stopWaiting()`` was called: every wait returns at once.
        var stopped = false
        fileprivate var waiters = WaitList<Waiter>()
    }

    fileprivate struct Waiter: Sendable {
        let ready: @Sendable (Seen) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    /// A session on `transport` (not connected yet).
    convenience init(plan: JoinPlan, join: JoinRoomResponse, transport: any SessionTransport, options: RoomManagerOptions = RoomManagerOptions(),
                     onRecreated: @escaping @Sendable () -> Void = {}) {
        self.init(plan: plan, join: join, transport: transport, roomTransport: transport, options: options, onRecreated: onRecreated)
    }

    /// A signalling-only session (`join --no-media`): its ``RoomManager`` has no WebRTC
    /// transport at all, so it neither waits for one nor answers offers, and LiveKit removes
    /// such a participant after about 60 s. Nothing can be published or sent.
    convenience init(signallingOnly plan: JoinPlan, join: JoinRoomResponse, options: RoomManagerOptions = RoomManagerOptions()) {
        self.init(plan: plan, join: join, transport: NoMediaTransport(), roomTransport: nil, options: options, onRecreated: {})
    }

    private init(plan: JoinPlan, join: JoinRoomResponse, transport: any SessionTransport, roomTransport: (any RoomTransport)?,
                 options: RoomManagerOptions, onRecreated: @escaping @Sendable () -> Void) {
        self.join = join
        self.transport = transport
        room = RoomManager(livekitHost: join.livekitHost, tls: plan.instance.tls, clientVersion: BedrudBotVersion.string,
                           options: options, transport: roomTransport,
                           tokenProvider: { try await plan.rejoinToken(onRecreated: onRecreated) })
        (events, eventSink) = AsyncStream<RoomEvent>.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    /// A session with a WebRTC transport of its own (``makeTransport(livekitHost:timeout:publishData:router:relayOnly:logRoom:)``).
    convenience init(plan: JoinPlan, join: JoinRoomResponse, timeout: Double = 30, publishData: Bool, router: (any TrackRouter)? = nil,
                     relayOnly: Bool = false, options: RoomManagerOptions = RoomManagerOptions(), onRecreated: @escaping @Sendable () -> Void = {}) {
        let transport = Self.makeTransport(livekitHost: join.livekitHost, timeout: timeout, publishData: publishData, router: router, relayOnly: relayOnly,
                                           logRoom: options.logRoom)
        self.init(plan: plan, join: join, transport: transport, options: options, onRecreated: onRecreated)
    }

    /// The WebRTC transport of a session: host candidates on loopback only for a media
    /// server on loopback; a publisher connection with data channels when `publishData`.
    static func makeTransport(livekitHost: String, timeout: Double = 30, publishData: Bool, router: (any TrackRouter)? = nil,
                              relayOnly: Bool = false, logRoom: String? = nil) -> WebRTCTransport {
        WebRTCTransport(router: router, localAddresses: isLoopback(livekitHost) ? ["127.0.0.1"] : [],
                        connectTimeoutSeconds: timeout, publishData: publishData, relayOnly: relayOnly, logRoom: logRoom)
    }

    static func isLoopback(_ livekitHost: String) -> Bool {
        guard let url = try? SignalURL.base(livekitHost: livekitHost) else { return false }
        return url.host == "127.0.0.1" || url.host == "localhost" || url.host == "::1"
    }

    // MARK: - Joining and leaving

    /// Starts joining with the token of the join answer; events flow from now on.
    func connect() async {
        let room = self.room
        let task = Task { [self] in
            for await event in room.events { note(event) }
            eventSink.finish()
        }
        pump.withLock { $0 = task }
        await room.connect(token: join.token)
    }

    /// Our identity and name once joined; nil if the session ended or `timeout` passed first.
    func waitUntilJoined(timeout: Double) async -> (identity: String, name: String)? {
        await wait(timeout: timeout) { $0.joined != nil || $0.ended != nil }
        return seen.withLock { $0.joined }
    }

    var joined: (identity: String, name: String)? { seen.withLock { $0.joined } }
    /// Why the room ended, once it has.
    var ended: RoomDisconnectReason? { seen.withLock { $0.ended } }
    var chats: [String] { seen.withLock { $0.chats } }
    var droppedEvents: Int { seen.withLock { $0.droppedEvents } }

    /// Waits until the publisher's reliable data channel is open (false: timeout or the end).
    func waitForDataChannel(timeout: Double) async -> Bool {
        await transport.waitForDataChannel("_reliable", timeoutSeconds: timeout)
    }

    /// Leaves (if the room has not ended already), closes the transport and says why the
    /// session ended badly; nil for a clean leave.
    func leave() async -> CommandFailure? {
        let reason = await end()
        guard reason != .left else { return nil }
        return CommandFailure(reason.exitCode, await finalLine(reason))
    }

    /// Leaves (if the room has not ended already), closes the transport and returns why
    /// the room ended (`left` for a clean leave).
    func end() async -> RoomDisconnectReason {
        let reason = await room.leave()
        await transport.shutdown()
        await pump.withLock { $0 }?.value
        return reason
    }

    /// The one line that says how the session ended with `reason`, from what the room and
    /// the transport know of the failure (``RoomSession/finalLine(_:everConnected:connectError:transportError:serverProblem:otherwise:)``).
    func finalLine(_ reason: RoomDisconnectReason, otherwise: String? = nil) async -> String {
        let state = await room.current
        return Self.finalLine(reason, everConnected: state.everConnected, connectError: await room.lastConnectError,
                              transportError: transport.lastError, serverProblem: state.serverProblem, otherwise: otherwise)
    }

    /// The one line for every command that says how a room session ended: "could not join"
    /// for a first join that never got in, "could not be re-established" for a connection
    /// that was lost, Bedrud's own refusal when it refused a (re)join token, and the
    /// reason explained otherwise. `otherwise` replaces the explanation where the caller
    /// knows better (``SessionLifecycle``'s detail for a run it stopped). Pure.
    static func finalLine(_ reason: RoomDisconnectReason, everConnected: Bool, connectError: String?, transportError: String?,
                          serverProblem: String?, otherwise: String? = nil) -> String {
        switch reason {
        case .left:
            return otherwise ?? "left the room"
        case .notAllowed, .refused:
            return (otherwise ?? RoomEventFormatter.explain(reason))
                + RoomEventFormatter.failureDetail(reason, connectError: connectError, transportError: nil)
        case .roomEnded, .forbidden:
            // Bedrud's refusal says it all (who can start the room, who gets in).
            return connectError.map { TerminalText.sanitize($0) } ?? otherwise ?? RoomEventFormatter.explain(reason)
        case .network, .protocolError:
            return RoomEventFormatter.finalLine(reason, everConnected: everConnected, connectError: connectError,
                                                transportError: transportError, serverProblem: serverProblem)
        default:
            return otherwise ?? RoomEventFormatter.explain(reason)
        }
    }

    // MARK: - Publishing and data

    /// Why a track could not be published.
    enum PublishFailure: Error, Sendable {
        /// The server answered `add_track` with a refusal (its reason, sanitised).
        case refused(String)
        /// No `track_published` came within the time, or the room ended first.
        case notPublished
        /// The transport could not start sending.
        case transport(String)
    }

    /// A published audio track: its server sid, the sender's mid and when its first
    /// packet is due (monotonic nanoseconds).
    struct PublishedAudio: Sendable {
        let sid: String
        let mid: String
        let startNanos: UInt64
    }

    /// Asks the server to publish a microphone track, waits for its `track_published`
    /// (at most `min(timeout, 10)` seconds) and starts sending what `ring` is given.
    func publishAudio(name: String, stereo: Bool, dtx: Bool, ring: PacketRing, timeout: Double) async throws(PublishFailure) -> PublishedAudio {
        let cid = "TR_" + UUID().uuidString.lowercased()
        await room.send(LiveKit.SignalRequest(.addTrack(.microphone(cid: cid, name: name, stereo: stereo, dtx: dtx))))
        await wait(timeout: min(timeout, 10)) { $0.published[cid] != nil || $0.refused[cid] != nil || $0.refused["*"] != nil || $0.ended != nil }
        let (sid, refusal) = seen.withLock { ($0.published[cid], $0.refused[cid] ?? $0.refused["*"]) }
        if let refusal { throw .refused(refusal) }
        guard let sid else { throw .notPublished }
        do {
            let (mid, start) = try await transport.publishAudio(cid: cid, stereo: stereo, dtx: dtx, ring: ring, timeoutSeconds: timeout)
            return PublishedAudio(sid: sid, mid: mid, startNanos: start)
        } catch {
            throw .transport("\(error)")
        }
    }

    /// Sends one serialised `DataPacket` on the reliable or lossy channel; false if it is not open.
    func sendData(_ bytes: [UInt8], reliable: Bool = true) async -> Bool {
        await transport.sendData(bytes, reliable: reliable)
    }

    /// The first chat received; nil if none came within `timeout` or the room ended.
    func waitForChat(timeout: Double) async -> String? {
        await wait(timeout: timeout) { !$0.chats.isEmpty || $0.ended != nil }
        return seen.withLock { $0.chats.first }
    }

    // MARK: - Events and waiters

    private func note(_ event: RoomEvent) {
        let woken = seen.withLock { s -> [CheckedContinuation<Void, Never>] in
            switch event {
            case .roomJoined(_, let me): s.joined = (me.identity, me.name)
            case .disconnected(let r): s.ended = r
            case .localTrackPublished(let cid, let track): s.published[cid] = track.sid
            case .requestRefused(let r) where r.kind == .addTrack:
                let why = "\(r.reason)" + (r.message.isEmpty ? "" : " (\(TerminalText.sanitize(String(r.message.prefix(200)))))")
                // A refusal that names no cid is for whichever track is waiting ("*").
                s.refused[r.trackCid ?? "*"] = why
            case .chatReceived(let m): if s.chats.count < 16 { s.chats.append(m.text) }
            default: break
            }
            if case .dropped = eventSink.yield(event) { s.droppedEvents += 1 }
            let view = s
            return s.waiters.take { $0.ready(view) }.map(\.continuation)
        }
        if case .disconnected = event { transport.cancelDataChannelWaits() }
        for c in woken { c.resume() }
    }

    /// Returns when `ready` holds for what has been seen, or after `timeout` seconds.
    private func wait(timeout: Double, until ready: @escaping @Sendable (Seen) -> Bool) async {
        let id = seen.withLock { $0.waiters.open() }
        let timer = waitTimeout(seconds: timeout) { [weak self] in self?.expire(id) }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = seen.withLock { s in
                s.stopped || ready(s) || !s.waiters.park(id, Waiter(ready: ready, continuation: c))
            }
            if now { c.resume() }
        }
        timer.cancel()
        seen.withLock { $0.waiters.close(id) }
    }

    /// Wakes every wait (and the transport's data-channel waits) with what has been seen
    /// so far, now and from now on: for a signal that stops the command.
    func stopWaiting() {
        let all = seen.withLock { s -> [Waiter] in
            s.stopped = true
            return s.waiters.takeAll()
        }
        transport.cancelDataChannelWaits()
        for w in all { w.continuation.resume() }
    }

    private func expire(_ id: UInt64) {
        seen.withLock { $0.waiters.end(id) }?.continuation.resume()
    }
}

// MARK: - Signalling only

/// What a signalling-only session holds in place of WebRTC: no connection that could fail,
/// no data channel to wait for, nothing to publish, mute or send. Its ``RoomManager`` is
/// given no transport (nil), so only the session's own calls (shutdown, `lastError`, the
/// data-channel waits it cancels) reach this.
private final class NoMediaTransport: SessionTransport {
    static let noMedia = TransportError("a signalling-only session (--no-media) has no media")

    var lastError: String? { nil }
    func create(_ configuration: TransportConfiguration, events: @escaping @Sendable (TransportEvent) -> Void) async throws { throw Self.noMedia }
    func applyRemoteOffer(_ offer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) async throws -> String { throw Self.noMedia }
    func applyRemoteAnswer(_ answer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) async throws { throw Self.noMedia }
    func addRemoteCandidate(_ candidate: ICECandidateInit, target: LiveKit.SignalTarget) async {}
    func updateICEServers(_ servers: [LiveKit.ICEServer]) async {}
    func restartICE(_ target: LiveKit.SignalTarget) async {}
    func close() async {}
    func waitForDataChannel(_ label: String, timeoutSeconds: Double) async -> Bool { false }
    func cancelDataChannelWaits() {}
    func publishAudio(cid: String, stereo: Bool, dtx: Bool, ring: PacketRing, timeoutSeconds: Double) async throws -> (mid: String, startNanos: UInt64) {
        throw Self.noMedia
    }
    func waitUntilDataSent(timeoutSeconds: Double) async -> Bool { false }
    func setAudioMuted(mid: String, muted: Bool) async {}
    /// Nothing is ever sent, so every track is drained.
    func waitUntilAudioDrained(mid: String, timeoutSeconds: Double) async -> Bool { true }
    func shutdown() async {}
}

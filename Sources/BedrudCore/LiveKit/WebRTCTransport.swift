import BedrudProtocol
import BedrudRTC
import BedrudRuntime
import FoundationEssentials
import Synchronization

/// Decides which remote tracks to receive and where their packets go.
public protocol TrackRouter: Sendable {
    /// Called after every applied server offer, before the answer is created, with the
    /// tracks the offer added and removed. Returns a ring for each added SSRC that should
    /// be received; packets of SSRCs without a ring are counted and dropped.
    ///
    /// Synchronous, on the peer connection's loop thread (the packet path's thread), so the
    /// offer, the rings and the answer take one hop onto the loop: it must not block or wait
    /// for another task (a mutex held briefly and a queue to the media thread are fine).
    func route(added: [RemoteTrack], removed: [RemoteTrack]) -> [UInt32: PacketRing]
}

/// The WebRTC layer behind ``RoomManager``: LiveKit's SUBSCRIBER peer connection on a
/// GLib loop thread (``PeerConnection``). The server offers, we answer; RTP for each
/// routed SSRC goes into the ring the ``TrackRouter`` gives, and data-channel messages
/// come back as ``TransportEvent``s. A receive-only bot needs no publisher connection.
///
/// With `publishData`, a PUBLISHER connection too: we offer (`_reliable` and `_lossy`
/// channels; LiveKit reads client data only there), the server answers `a=setup:active`
/// so we are the DTLS server, and ``sendData(_:reliable:)`` sends on it.
///
/// Called serially by the RoomManager's transport queue.
public final class WebRTCTransport: RoomTransport, @unchecked Sendable {
    // @unchecked: `state` is behind a mutex; `loop` and the configuration are immutable.
    public let loop: GLibLoop
    private let router: (any TrackRouter)?
    private let baseConfiguration: PeerConnectionConfiguration
    private let state = Mutex<State>(State())
    private let logger: Logger
    private let publishData: Bool
    private let relayOnly: Bool

    private struct State {
        var subscriber: PeerConnection?
        var publisher: PeerConnection?
        var pump: Task<Void, Never>?
        var publisherPump: Task<Void, Never>?
        var events: (@Sendable (TransportEvent) -> Void)?
        var openChannels: Set<String> = []
        var channelWaiters: [(label: String, continuation: CheckedContinuation<Bool, Never>)] = []
        /// Published tracks by mid, and who waits for an answer to accept one.
        var audioTracks: [String: LocalAudioTrack] = [:]
        var answersApplied = 0
        var answerWaiters: [CheckedContinuation<Void, Never>] = []
        var lastError: String?
        /// The subscriber's statistics as it closed, for the session's summary.
        var closedStats: PeerConnectionStats?
        /// Messages on subscriber channels other than `_reliable`/`_lossy` (LiveKit >= 1.11's
        /// `_data_track` carries data-track packets, which a recorder never subscribes to).
        var ignoredDataMessages = 0
        /// Changes of either connection's state (``connectionChanges``) and who waits for the next.
        var connectionChanges: UInt64 = 0
        var changeWaiters = WaitList<CheckedContinuation<UInt64, Never>>()
    }

    /// - Parameters:
    ///   - localAddresses: host-candidate addresses; `["127.0.0.1"]` for a media server on
    ///     loopback (libnice skips loopback by itself otherwise), empty for every interface.
    ///   - publishData: also open a publisher connection with LiveKit's two data channels.
    ///   - relayOnly: use relay (TURN) candidates only, whatever the server says (`smoke --turn-only`).
    ///   - logRoom: the room of this transport's log lines when one process records several.
    public init(router: (any TrackRouter)?, localAddresses: [String] = [], connectTimeoutSeconds: Double = 30, publishData: Bool = false,
                relayOnly: Bool = false, logRoom: String? = nil) {
        logger = Logger("webrtc", room: logRoom)
        self.router = router
        self.relayOnly = relayOnly
        self.publishData = publishData
        loop = GLibLoop(name: "bedrud-webrtc")
        var c = PeerConnectionConfiguration()
        c.ice.localAddresses = localAddresses
        c.connectTimeoutSeconds = connectTimeoutSeconds
        c.name = "subscriber"
        c.logRoom = logRoom
        baseConfiguration = c
    }

    /// Why the connection failed last, in one sentence (e.g. a fingerprint mismatch).
    public var lastError: String? { state.withLock { $0.lastError } }

    /// Messages received on subscriber data channels that carry no LiveKit `DataPacket`
    /// (`_data_track`, or a channel LiveKit may add later): counted and dropped.
    public var ignoredDataMessages: Int { state.withLock { $0.ignoredDataMessages } }

    /// Statistics of the subscriber connection: per-track packets, loss, jitter, rate.
    /// Once it is closed (the room ended, or before a reconnect's new connection), the
    /// figures it had then; nil before the first connection.
    public func stats() async -> PeerConnectionStats? {
        let (pc, closed) = state.withLock { ($0.subscriber, $0.closedStats) }
        guard let pc else { return closed }
        return await pc.stats()
    }

    // MARK: - RoomTransport

    public func create(_ configuration: TransportConfiguration, events: @escaping @Sendable (TransportEvent) -> Void) async throws {
        await close()
        var c = baseConfiguration
        c.ice.servers = configuration.iceServers.map { ICEServer(urls: $0.urls, username: $0.username, credential: $0.credential) }
        c.ice.relayOnly = configuration.forceRelay || relayOnly
        let pc = try PeerConnection(configuration: c, loop: loop)
        let logger = self.logger
        let pump = Task { [weak self] in
            for await event in pc.events {
                switch event {
                case .localCandidate(let c):
                    events(.localCandidate(c, .subscriber))
                case .connected(let profile):
                    logger.info("media connected (SRTP \(profile.map { "\($0)" } ?? "none"))")
                    events(.stateChanged(.subscriber, .connected))
                case .iceStateChanged(let s):
                    switch s {
                    case .disconnected: events(.stateChanged(.subscriber, .disconnected))
                    case .checking: events(.stateChanged(.subscriber, .connecting))
                    default: break
                    }
                case .failed(let error):
                    self?.noteError(error.description)
                    logger.warning("media connection failed: \(error.description)")
                    events(.stateChanged(.subscriber, .failed))
                case .selectedCandidatePair(let pair):
                    logger.debug("ICE pair: \(pair)")
                case .dataChannelOpened(let info):
                    events(.dataChannelOpened(LiveKit.DataChannelInfo.with { $0.label = info.label; $0.id = UInt32(info.id); $0.target = .subscriber }))
                case .dataChannelMessage(let m):
                    if m.label == "_reliable" || m.label == "_lossy" {
                        events(.dataReceived(m.data, reliable: m.label == "_reliable"))
                    } else if self?.noteIgnoredDataMessage() == 1 {
                        // `_data_track` (LiveKit >= 1.11): data-track packets, not DataPackets.
                        logger.debug("messages on a subscriber data channel other than _reliable/_lossy are ignored")
                    }
                case .unknownSSRC(let ssrc, let pt):
                    logger.debug("packets for unannounced SSRC \(ssrc) (PT \(pt)) dropped")
                case .closed:
                    events(.stateChanged(.subscriber, .closed))
                case .tracksChanged:
                    break  // ``applyRemoteOffer`` routes the same difference, from the call's result.
                case .localCandidatesComplete, .dtlsStateChanged, .remoteBye, .dataChannelClosed, .stats:
                    break
                }
                // After the switch: a failure's error is noted before its waiters look.
                if event.changesConnectionState { self?.connectionChanged() }
            }
        }
        state.withLock {
            $0.subscriber = pc
            $0.pump = pump
            $0.events = events
        }
        if publishData { try await createPublisher(c, events: events) }
    }

    // MARK: - Publisher

    private func createPublisher(_ base: PeerConnectionConfiguration, events: @escaping @Sendable (TransportEvent) -> Void) async throws {
        var c = base
        c.name = "publisher"
        let pc = try PeerConnection(configuration: c, loop: loop)
        let logger = self.logger
        let pump = Task { [weak self] in
            for await event in pc.events {
                switch event {
                case .localCandidate(let c):
                    events(.localCandidate(c, .publisher))
                case .connected:
                    logger.info("publisher connected")
                    events(.stateChanged(.publisher, .connected))
                case .iceStateChanged(.disconnected):
                    events(.stateChanged(.publisher, .disconnected))
                case .failed(let error):
                    self?.noteError(error.description)
                    logger.warning("publisher connection failed: \(error.description)")
                    events(.stateChanged(.publisher, .failed))
                    self?.channelsClosed()
                case .dataChannelOpened(let info):
                    self?.channelOpened(info.label)
                    events(.dataChannelOpened(LiveKit.DataChannelInfo.with { $0.label = info.label; $0.id = UInt32(info.id); $0.target = .publisher }))
                case .dataChannelClosed(let info):
                    self?.channelClosed(info.label)
                case .closed:
                    events(.stateChanged(.publisher, .closed))
                    self?.channelsClosed()
                default:
                    break
                }
                if event.changesConnectionState { self?.connectionChanged() }
            }
        }
        state.withLock {
            $0.publisher = pc
            $0.publisherPump = pump
            $0.openChannels = []
        }
        await pc.createDataChannel(label: "_reliable", reliability: .reliable)
        await pc.createDataChannel(label: "_lossy", reliability: .lossy)
        do {
            events(.offerCreated(try await pc.createOffer()))
        } catch {
            noteError(error.description)
            throw TransportError(error.description)
        }
    }

    private func channelOpened(_ label: String) {
        let ready = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.openChannels.insert(label)
            let (now, later) = (s.channelWaiters.filter { $0.label == label }, s.channelWaiters.filter { $0.label != label })
            s.channelWaiters = later
            return now.map(\.continuation)
        }
        for c in ready { c.resume(returning: true) }
    }

    private func channelClosed(_ label: String) { _ = state.withLock { $0.openChannels.remove(label) } }

    /// The publisher connection is gone: its channels are closed. Waiters keep waiting, for
    /// the connection of a resumed or rejoined session.
    private func channelsClosed() { state.withLock { $0.openChannels = [] } }

    /// Wakes every ``waitForDataChannel(_:timeoutSeconds:)`` with false (call when the room
    /// ended), and every ``waitForConnectionChange(after:timeoutSeconds:)``: the room's end
    /// is news to a caller that decides on the connections and the room together.
    public func cancelDataChannelWaits() {
        let waiting = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            defer { s.channelWaiters = [] }
            return s.channelWaiters.map(\.continuation)
        }
        for c in waiting { c.resume(returning: false) }
        connectionChanged()
    }

    // MARK: - Connection changes

    /// How many times either connection's state changed so far (ICE state, selected pair,
    /// DTLS, connected, failed, closed), or the room ended (``cancelDataChannelWaits()``).
    /// Read it before ``stats()`` / ``publisherStats()``, decide, and pass it to
    /// ``waitForConnectionChange(after:timeoutSeconds:)`` to wait for what comes next.
    public var connectionChanges: UInt64 { state.withLock { $0.connectionChanges } }

    /// Waits until ``connectionChanges`` is past `seen` (at once if it already is) and
    /// returns it; after `timeoutSeconds`, or when the calling task is cancelled, returns
    /// what it is then. Woken by the connections' own events (both of them), not polled.
    public func waitForConnectionChange(after seen: UInt64, timeoutSeconds: Double) async -> UInt64 {
        let id = state.withLock { $0.changeWaiters.open() }
        let timer = waitTimeout(seconds: timeoutSeconds) { [weak self] in self?.endChangeWait(id) }
        let now = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<UInt64, Never>) in
                let now = state.withLock { s -> UInt64? in
                    s.connectionChanges > seen || !s.changeWaiters.park(id, c) ? s.connectionChanges : nil
                }
                if let now { c.resume(returning: now) }
            }
        } onCancel: {
            endChangeWait(id)
        }
        timer.cancel()
        state.withLock { $0.changeWaiters.close(id) }
        return now
    }

    /// Calls of ``waitForConnectionChange(after:timeoutSeconds:)`` waiting now (for tests).
    var connectionChangeWaiters: Int { state.withLock { $0.changeWaiters.count } }

    /// A connection's state changed: wakes every change waiter.
    private func connectionChanged() {
        let (now, waiting) = state.withLock { s -> (UInt64, [CheckedContinuation<UInt64, Never>]) in
            s.connectionChanges &+= 1
            return (s.connectionChanges, s.changeWaiters.takeAll())
        }
        for c in waiting { c.resume(returning: now) }
    }

    /// Ends one change wait (its timeout, or its task's cancellation), or marks it ended
    /// for when it registers.
    private func endChangeWait(_ id: UInt64) {
        let (now, waiter) = state.withLock { s in (s.connectionChanges, s.changeWaiters.end(id)) }
        waiter?.resume(returning: now)
    }

    /// Waits until the publisher's data channel `label` is open; false on timeout, when the
    /// publisher failed or closed, or when this transport publishes no data.
    public func waitForDataChannel(_ label: String = "_reliable", timeoutSeconds: Double) async -> Bool {
        guard publishData else { return false }
        let ready = await withTaskGroup(of: Bool.self) { group in
            group.addTask { [weak self] in
                await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                    guard let self else { c.resume(returning: false); return }
                    let now = self.state.withLock { s -> Bool in
                        if s.openChannels.contains(label) { return true }
                        s.channelWaiters.append((label, c))
                        return false
                    }
                    if now { c.resume(returning: true) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(timeoutSeconds * 1000)))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            if !first { self.cancelDataChannelWaits() }
            return first
        }
        return ready
    }

    /// Waits until the server acknowledged every data message sent so far (SCTP), so that
    /// leaving right after a message does not drop it. False on timeout.
    public func waitUntilDataSent(timeoutSeconds: Double) async -> Bool {
        guard let pc = state.withLock({ $0.publisher }) else { return false }
        return await pc.waitUntilDataSent(timeoutSeconds: timeoutSeconds)
    }

    public func sendData(_ bytes: [UInt8], reliable: Bool) async -> Bool {
        guard let pc = state.withLock({ $0.publisher }) else { return false }
        return await pc.send(bytes, label: reliable ? "_reliable" : "_lossy")
    }

    private func noteError(_ text: String) { state.withLock { $0.lastError = text } }

    /// Counts one ignored message; returns the count so far.
    private func noteIgnoredDataMessage() -> Int {
        state.withLock { s in
            s.ignoredDataMessages += 1
            return s.ignoredDataMessages
        }
    }

    public func applyRemoteOffer(_ offer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) async throws -> String {
        guard target == .subscriber, let pc = state.withLock({ $0.subscriber }) else {
            throw TransportError("an offer for the \(target) connection, which this receive-only client does not open")
        }
        do {
            return try await pc.answer(offer.sdp, routingWith: router)
        } catch {
            noteError(error.description)
            throw TransportError(error.description)
        }
    }

    public func applyRemoteAnswer(_ answer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) async throws {
        guard target == .publisher, let pc = state.withLock({ $0.publisher }) else {
            throw TransportError("an answer for the \(target) connection, which this client never offered")
        }
        do {
            try await pc.setRemoteAnswer(answer.sdp)
        } catch {
            noteError(error.description)
            throw TransportError(error.description)
        }
        let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.answersApplied += 1
            defer { s.answerWaiters = [] }
            return s.answerWaiters
        }
        for w in waiting { w.resume() }
    }

    // MARK: - Publishing audio

    /// Adds an Opus track to the publisher connection, renegotiates, and starts sending
    /// from `ring` once the server's answer accepted it (see ``MediaSender`` for what a
    /// send ring's fields mean). Send `add_track` with the same `cid` and wait for
    /// `track_published` first (LiveKit matches the offer's msid track id to the cid).
    /// - Returns: the section's mid and the monotonic start time packets are paced from
    ///   (packet at sample `s` is due at `start + s / 48 kHz`).
    public func publishAudio(cid: String, stereo: Bool, dtx: Bool, ring: PacketRing, timeoutSeconds: Double) async throws -> (mid: String, startNanos: UInt64) {
        let (pc, events, mid) = state.withLock { s in (s.publisher, s.events, "\(1 + s.audioTracks.count)") }
        guard let pc, let events else { throw TransportError("publishing needs the publisher connection (publishData)") }
        let track = LocalAudioTrack(mid: mid, ssrc: UInt32.random(in: 1...UInt32.max), cname: await pc.cname, streamID: cid, trackID: cid, stereo: stereo, dtx: dtx)
        do {
            try await pc.addAudioTrack(track)
            let before = state.withLock { s -> Int in
                s.audioTracks[mid] = track
                return s.answersApplied
            }
            events(.offerCreated(try await pc.createOffer()))
            guard await waitForAnswer(after: before, timeoutSeconds: timeoutSeconds) else {
                throw TransportError("the server did not answer the offer with the audio track within \(Int(timeoutSeconds)) s")
            }
            try await pc.waitUntilConnected(timeoutSeconds: timeoutSeconds)
            let start = MonotonicClock.nanos() + 20_000_000
            try await pc.startSending(mid: mid, ring: ring, startNanos: start)
            return (mid, start)
        } catch let e as PeerConnectionError {
            noteError(e.description)
            throw TransportError(e.description)
        }
    }

    private func waitForAnswer(after count: Int, timeoutSeconds: Double) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { [weak self] in
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    guard let self else { c.resume(); return }
                    let done = self.state.withLock { s -> Bool in
                        if s.answersApplied > count { return true }
                        s.answerWaiters.append(c)
                        return false
                    }
                    if done { c.resume() }
                }
                return self.map { s in s.state.withLock { $0.answersApplied > count } } ?? false
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(timeoutSeconds * 1000)))
                return false
            }
            let first = await group.next() ?? false
            if !first {
                let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                    defer { s.answerWaiters = [] }
                    return s.answerWaiters
                }
                for w in waiting { w.resume() }
            }
            group.cancelAll()
            return first
        }
    }

    /// Mutes or unmutes a published track's media (tell the server with the `mute` request too).
    public func setAudioMuted(mid: String, muted: Bool) async {
        guard let pc = state.withLock({ $0.publisher }) else { return }
        await pc.setMuted(mid: mid, muted: muted)
    }

    /// Waits until every packet pushed into the track's ring has been sent (true), woken by
    /// the send path; after `timeoutSeconds`, or when the connection ends, whether it has.
    public func waitUntilAudioDrained(mid: String, timeoutSeconds: Double) async -> Bool {
        guard let pc = state.withLock({ $0.publisher }) else { return true }
        return await pc.waitUntilAudioDrained(mid: mid, timeoutSeconds: timeoutSeconds)
    }

    /// Statistics of the publisher connection (packets sent, NACKs answered).
    public func publisherStats() async -> PeerConnectionStats? {
        guard let pc = state.withLock({ $0.publisher }) else { return nil }
        return await pc.stats()
    }

    public func addRemoteCandidate(_ candidate: ICECandidateInit, target: LiveKit.SignalTarget) async {
        let pc = state.withLock { target == .publisher ? $0.publisher : $0.subscriber }
        guard let pc else { return }
        do { try await pc.addRemoteCandidate(candidate) } catch { logger.debug("remote candidate ignored: \(error)") }
    }

    /// A resume's ICE servers (`ReconnectResponse.ice_servers`, LiveKit >= 1.12 hands out
    /// TURN credentials that expire): both connections keep them for their next ICE
    /// restart — the one the server starts after a resume — which then gathers on a new
    /// agent and allocates with them, so it can pair over a fresh relay when the old one is
    /// gone (``PeerConnection/updateICEServers(_:)``). A full rejoin creates its connections
    /// with the join's list.
    public func updateICEServers(_ servers: [LiveKit.ICEServer]) async {
        let list = servers.map { ICEServer(urls: $0.urls, username: $0.username, credential: $0.credential) }
        let (sub, pub) = state.withLock { ($0.subscriber, $0.publisher) }
        await sub?.updateICEServers(list)
        await pub?.updateICEServers(list)
    }

    public func restartICE(_ target: LiveKit.SignalTarget) async {
        // Only a publisher connection restarts ICE itself; the server restarts the subscriber's.
        guard target == .publisher else { return }
        let (pc, events) = state.withLock { ($0.publisher, $0.events) }
        guard let pc, let events else { return }
        do {
            events(.offerCreated(try await pc.createOffer(iceRestart: true)))
        } catch {
            noteError(error.description)
            logger.warning("publisher ICE restart failed: \(error.description)")
        }
    }

    public func close() async {
        let (pc, pump, pub, pubPump) = state.withLock { s -> (PeerConnection?, Task<Void, Never>?, PeerConnection?, Task<Void, Never>?) in
            let out = (s.subscriber, s.pump, s.publisher, s.publisherPump)
            s.subscriber = nil
            s.pump = nil
            s.publisher = nil
            s.publisherPump = nil
            s.events = nil
            s.audioTracks = [:]
            return out
        }
        channelsClosed()
        if let pub { await pub.close() }
        if let pc {
            let last = await pc.stats()
            state.withLock { $0.closedStats = last }
            await pc.close()
        }
        pump?.cancel()
        pubPump?.cancel()
        // The pumps may be cancelled before they pass on `.closed`: the statistics changed.
        connectionChanged()
    }

    /// Closes everything and stops the loop thread. Call once, at the end.
    public func shutdown() async {
        await close()
        loop.shutdown()
    }
}

extension PeerConnection {
    /// Applies a server offer, attaches the rings `router` gives for its added tracks and
    /// returns the answer, in one hop onto the loop (the router runs on the loop thread):
    /// the rings are attached before the answer exists, so no first packet is lost.
    func answer(_ sdp: String, routingWith router: (any TrackRouter)?) async throws(PeerConnectionError) -> String {
        let update = try await setRemoteOffer(sdp)
        if let router, !(update.added.isEmpty && update.removed.isEmpty) {
            for (ssrc, ring) in router.route(added: update.added, removed: update.removed) { attach(ring, ssrc: ssrc) }
        }
        return try createAnswer()
    }
}

/// A failure of the WebRTC layer, as one sentence.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension LiveKit.AddTrackRequest {
    /// What a publisher of Opus audio asks for (issue 14 §3): source MICROPHONE, Opus only
    /// (`disable_red`, since we send no RED), mono or stereo, DTX as offered. `cid` must be
    /// the msid track id of the offer's section.
    public static func microphone(cid: String, name: String, stereo: Bool, dtx: Bool) -> Self {
        var r = Self()
        r.cid = cid
        r.name = name
        r.type = .audio
        r.source = .microphone
        r.stereo = stereo
        r.disableDTX = !dtx
        r.disableRed = true
        return r
    }
}

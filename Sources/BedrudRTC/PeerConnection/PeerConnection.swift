import BedrudProtocol
import BedrudRuntime

/// One WebRTC peer connection as LiveKit uses it: one ICE + DTLS + SRTP + SCTP stack,
/// fed by remote offers/answers and trickled candidates from the control plane, putting
/// each remote track's RTP into the ``PacketRing`` attached to its SSRC.
///
/// ## Threads
/// The actor runs on its ``GLibLoop`` (the loop is its executor), which is also the
/// thread of libnice, DTLS, SRTP and the packet path. Calls from another actor hop onto
/// the loop once per call; packets never hop: they go from libnice's callback to the
/// ring on the loop thread without allocation, lock or actor isolation.
///
/// ## Subscriber (LiveKit's server offers, we answer)
/// ```
/// let pc = try PeerConnection(configuration: cfg, loop: loop)
/// let update = try await pc.setRemoteOffer(offer.sdp)      // 1. learn the tracks (SSRC → PA_x|TR_x)
/// for t in update.added { await pc.attach(ring(for: t), ssrc: t.ssrc) }  // 2. attach rings
/// let answer = try await pc.createAnswer()                  // 3. answer (send with the offer's id)
/// for await e in pc.events { … }                            // candidates to trickle, state, data
/// try await pc.addRemoteCandidate(json: trickle.candidateInit)   // any time; queued until step 1
/// ```
/// Every later server offer goes through the same three steps. Packets for SSRCs with
/// no ring are counted and dropped.
///
/// ## Publisher (we offer, the server answers)
/// `createDataChannel(label:reliability:)`, `createOffer()`, `setRemoteAnswer(_:)`, then
/// `send(_:label:binary:)` once `.dataChannelOpened` arrives.
public actor PeerConnection {
    public nonisolated let loop: GLibLoop
    public nonisolated let configuration: PeerConnectionConfiguration
    /// Events in order; bounded (``PeerConnectionConfiguration/eventBufferSize``), oldest dropped and counted.
    public nonisolated let events: AsyncStream<PeerConnectionEvent>
    /// Our certificate's SHA-256 fingerprint (what our SDP announces).
    public nonisolated let localFingerprint: DTLSFingerprint
    // nonisolated(unsafe): only touched on the loop thread (actor methods run there; deinit posts to it).
    private nonisolated(unsafe) let core: PeerTransport
    /// The STUN/TURN servers in use: the configuration's, until ``updateICEServers(_:)``.
    private var iceServers: [ICEServer]

    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// Creates the connection; nothing touches the network until the first description.
    public init(configuration: PeerConnectionConfiguration = .init(), loop: GLibLoop) throws(PeerConnectionError) {
        let identity: DTLSIdentity
        do { identity = try DTLSIdentity() } catch { throw PeerConnectionError(.dtls(error)) }
        let (stream, continuation) = AsyncStream<PeerConnectionEvent>.makeStream(bufferingPolicy: .bufferingNewest(max(16, configuration.eventBufferSize)))
        self.loop = loop
        self.configuration = configuration
        self.events = stream
        self.localFingerprint = identity.fingerprint
        self.core = PeerTransport(loop: loop, configuration: configuration, identity: identity, continuation: continuation)
        self.iceServers = configuration.ice.servers
    }

    /// New STUN/TURN servers (a LiveKit resume's `ReconnectResponse.ice_servers`, whose
    /// TURN credentials may be fresher than the join's). Before the first description they
    /// replace the configuration's. Later they take effect at the next ICE restart (the one
    /// LiveKit starts after a resume, or ``createOffer(iceRestart:)``): it makes a new ICE
    /// agent that gathers again and allocates on these servers, while the connection goes
    /// on over its current pair until then. The same list again does nothing.
    public func updateICEServers(_ servers: [ICEServer]) async {
        guard servers != iceServers else { return }
        iceServers = servers
        guard core.hasAgent else { return }
        let resolved = await ICEServerResolver.resolve(servers)
        core.setServersForRestart(resolved)
    }

    deinit {
        let box = CoreBox(core)
        loop.post { box.core.close() }
    }

    // MARK: - Subscriber side

    /// Applies a remote offer (the first one or any re-offer) and returns the remote tracks
    /// it now sends (SSRC, msid, and LiveKit's participant/track SIDs) with those it added
    /// and removed. Attach rings before ``createAnswer()`` so that no first packets are lost.
    public func setRemoteOffer(_ sdp: String) async throws(PeerConnectionError) -> RemoteTrackUpdate {
        let offer: SessionDescription
        do { offer = try SessionDescription(parsing: sdp) } catch { throw PeerConnectionError(.invalidSDP(error)) }
        var servers: [ResolvedICEServer] = []
        if !core.hasAgent { servers = await ICEServerResolver.resolve(iceServers) }
        return try core.applyRemoteOffer(offer, servers: servers)
    }

    /// The answer to the last applied offer (SDP text). Candidates gathered so far are in it;
    /// later ones arrive as ``PeerConnectionEvent/localCandidate(_:)``.
    public func createAnswer() throws(PeerConnectionError) -> String {
        try core.createAnswer()
    }

    // MARK: - Publisher side

    /// Writes an offer with a data section (`a=setup:actpass`).
    public func createOffer(iceRestart: Bool = false) async throws(PeerConnectionError) -> String {
        var servers: [ResolvedICEServer] = []
        if !core.hasAgent { servers = await ICEServerResolver.resolve(iceServers) }
        return try core.createOffer(iceRestart: iceRestart, servers: servers)
    }

    /// Applies the remote answer to our offer.
    public func setRemoteAnswer(_ sdp: String) throws(PeerConnectionError) {
        let answer: SessionDescription
        do { answer = try SessionDescription(parsing: sdp) } catch { throw PeerConnectionError(.invalidSDP(error)) }
        try core.applyRemoteAnswer(answer)
    }

    /// Our RTCP CNAME, for a ``LocalAudioTrack``.
    public var cname: String { core.cname }

    /// Adds an audio section to the next offers (call ``createOffer(iceRestart:)`` after).
    public func addAudioTrack(_ track: LocalAudioTrack) throws(PeerConnectionError) { try core.addAudioTrack(track) }

    /// Starts sending track `mid`: packets from `ring` (see ``MediaSender`` for what a send
    /// ring's header fields mean), each at `startNanos` + its sample offset (monotonic).
    public func startSending(mid: String, ring: PacketRing, startNanos: UInt64) throws(PeerConnectionError) {
        try core.startSending(mid: mid, ring: ring, startNanos: startNanos)
    }

    public func stopSending(mid: String) { core.stopSending(mid: mid) }

    /// Drops the track's packets while muted (the timeline keeps running).
    public func setMuted(mid: String, muted: Bool) { core.setMuted(mid: mid, muted: muted) }

    /// True once every packet pushed into track `mid`'s ring has been sent.
    public func isDrained(mid: String) -> Bool { core.isDrained(mid: mid) }

    /// Waits until every packet pushed into track `mid`'s ring has been sent (true), or
    /// `timeoutSeconds` passed or the connection ended first (then whether it has drained
    /// by then). Woken by the send timer's tick that sends the last packet, not polled;
    /// call after the producer pushed its last packet, before leaving.
    public func waitUntilAudioDrained(mid: String, timeoutSeconds: Double = 5) async -> Bool {
        await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            core.addAudioDrainedWaiter(mid: mid, c, timeoutSeconds: timeoutSeconds)
        }
    }

    /// Opens a data channel once SCTP is up (at once if it already is).
    public func createDataChannel(label: String, reliability: DataChannelReliability = .reliable) {
        core.createDataChannel(label: label, reliability: reliability)
    }

    /// Sends a message on the open channel `label`. Returns false if it is not open, the
    /// message is larger than the peer accepts, or SCTP's buffer is full.
    @discardableResult
    public func send(_ data: [UInt8], label: String, binary: Bool = true) -> Bool {
        core.send(data, label: label, binary: binary)
    }

    /// Waits until the peer acknowledged every data-channel message sent so far; false on
    /// timeout or without an association. Call before ``close()`` after a last message.
    public func waitUntilDataSent(timeoutSeconds: Double = 5) async -> Bool {
        await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            core.addDataSentWaiter(c, timeoutSeconds: timeoutSeconds)
        }
    }

    // MARK: - Both sides

    /// Adds a trickled remote candidate (LiveKit `TrickleRequest.candidateInit`).
    public func addRemoteCandidate(json: String) throws(PeerConnectionError) {
        guard let c = ICECandidateInit(json: json) else { throw PeerConnectionError(.invalidCandidate(ICECandidateError(.badJSON))) }
        try core.addRemoteCandidate(c)
    }

    /// Adds a remote candidate; an empty `candidate` means end-of-candidates.
    public func addRemoteCandidate(_ candidate: ICECandidateInit) throws(PeerConnectionError) {
        try core.addRemoteCandidate(candidate)
    }

    /// Routes RTP (and sender reports) of `ssrc` into `ring`. The ring's producer side
    /// belongs to the loop thread from now on. Returns false if no current track has that SSRC.
    @discardableResult
    public func attach(_ ring: PacketRing, ssrc: UInt32) -> Bool { core.attach(ring, ssrc: ssrc) }

    /// Stops routing `ssrc`; its packets are then counted and dropped.
    public func detach(ssrc: UInt32) { _ = core.attach(nil, ssrc: ssrc) }

    /// The tracks of the last applied offer.
    public var remoteTracks: [RemoteTrack] { core.tracks }

    public var state: PeerConnectionState { core.state }

    /// Waits until ICE and DTLS are up; throws the connection's failure, or a timeout.
    public func waitUntilConnected(timeoutSeconds: Double = 30) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            core.addWaiter(c, timeoutSeconds: timeoutSeconds)
        }
    }

    /// Counters and per-track statistics.
    public func stats() -> PeerConnectionStats { core.stats() }

    /// The period of the loop's SCTP timer driver, nil without an association (for tests).
    func sctpTimerIntervalMs() -> UInt32? { core.sctpTimerIntervalMs }

    /// ``waitUntilDataSent(timeoutSeconds:)`` waiters resumed by SCTP's sender-dry wake-up
    /// and by their timeout, and the sender-dry notifications received (for tests).
    func dataSentResumes() -> (wakeups: Int, timeouts: Int, senderDryEvents: Int) {
        (core.dataSentWakeups, core.dataSentTimeouts, core.sctpSenderDryEvents)
    }

    /// ``waitUntilAudioDrained(mid:timeoutSeconds:)`` waiters resumed by the send path and
    /// by their timeout, and those waiting now (for tests).
    func audioDrainedResumes() -> (wakeups: Int, timeouts: Int, waiting: Int) {
        (core.audioDrainedWakeups, core.audioDrainedTimeouts, core.audioDrainWaiting)
    }

    /// Closes the connection (DTLS close_notify, SCTP abort) and ends ``events``. Idempotent.
    public func close() { core.close() }
}

private final class CoreBox: @unchecked Sendable {
    // @unchecked: handed from deinit to the loop thread, the only thread that uses it.
    let core: PeerTransport
    init(_ core: PeerTransport) { self.core = core }
}

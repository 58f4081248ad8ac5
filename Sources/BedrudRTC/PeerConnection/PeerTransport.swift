import BedrudProtocol
import CNice

/// The loop-confined core of a ``PeerConnection``: one ICE agent, one DTLS transport,
/// SRTP, the packet path (``MediaReceiver``) and SCTP, with the offer/answer state that
/// drives them.
///
/// Thread contract: every method and callback runs on the ``GLibLoop`` thread — the
/// actor's methods because the loop is its executor, libnice/OpenSSL/usrsctp callbacks
/// and timers because they are dispatched there. Not Sendable.
final class PeerTransport {
    let loop: GLibLoop
    let configuration: PeerConnectionConfiguration
    let identity: DTLSIdentity
    private let continuation: AsyncStream<PeerConnectionEvent>.Continuation
    let receiver: MediaReceiver
    private let log: Logger

    private(set) var state: PeerConnectionState = .new
    private(set) var failure: PeerConnectionError?
    private var ice: ICEAgent?
    private var iceState: ICEConnectionState = .new
    private var selectedPair: String?
    private var dtls: DTLSTransport?
    private var dtlsRole: DTLSRole?
    private var sctp: SCTPTransport?

    /// nil until the first description: true if we made the offer (publisher), false if we answer (subscriber).
    private var isOfferer: Bool?
    private var remote: RemoteTransportParameters?
    private var remoteOffer: SessionDescription?
    private var remoteAnswerApplied = false
    /// Candidates waiting for a remote description (or for the re-offer their ufrag belongs to).
    private var pendingCandidates: [(candidate: String, ufrag: String?)] = []
    private var remoteEndOfCandidates = false
    private var localCandidates: [String] = []
    private var localGatheringDone = false
    private var localDescriptionCreated = false
    private var candidateMid = "0"
    private var candidateMLineIndex = 0
    private let sessionID = UInt64.random(in: 1...(UInt64(Int64.max)))
    private var sessionVersion: UInt64 = 1
    private(set) var tracks: [RemoteTrack] = []
    private var pendingChannels: [(label: String, reliability: DataChannelReliability)] = []
    private var channelsByLabel: [String: DataChannelInfo] = [:]
    private var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextWaiterID = 0

    private var dtlsTimer: UInt32 = 0
    private var connectTimer: UInt32 = 0
    private var reportTimer: UInt32 = 0
    private var nackTimer: UInt32 = 0
    private var statsTimer: UInt32 = 0

    init(loop: GLibLoop, configuration: PeerConnectionConfiguration, identity: DTLSIdentity, continuation: AsyncStream<PeerConnectionEvent>.Continuation) {
        self.loop = loop
        self.configuration = configuration
        self.identity = identity
        self.continuation = continuation
        self.log = Logger("rtc.pc.\(configuration.name)")
        receiver = MediaReceiver(maxDatagram: configuration.maxDatagramBytes, nack: configuration.nack)
        receiver.delegate = self
    }

    // MARK: - Events

    private func emit(_ e: PeerConnectionEvent) {
        if case .dropped = continuation.yield(e) { receiver.counters.eventsDropped &+= 1 }
    }

    private var isFinished: Bool { state == .failed || state == .closed }

    // MARK: - ICE setup

    var hasAgent: Bool { ice != nil }

    private func makeAgent(controlling: Bool, servers: [ResolvedICEServer]) throws(PeerConnectionError) -> ICEAgent {
        if let ice { return ice }
        let agent: ICEAgent
        do {
            agent = try ICEAgent(loop: loop, controlling: controlling, configuration: configuration.ice, servers: servers)
        } catch {
            throw PeerConnectionError(.ice(error))
        }
        agent.delegate = self
        agent.attachReceiver(niceReceive, userData: Unmanaged.passUnretained(self).toOpaque())
        ice = agent
        return agent
    }

    private func startGathering(_ agent: ICEAgent) throws(PeerConnectionError) {
        do { try agent.gather() } catch { throw PeerConnectionError(.ice(error)) }
    }

    // MARK: - Answerer (LiveKit subscriber PC)

    /// Applies a remote offer (first or re-offer) and returns the tracks it sends us.
    func applyRemoteOffer(_ offer: SessionDescription, servers: [ResolvedICEServer]) throws(PeerConnectionError) -> [RemoteTrack] {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        guard isOfferer != true else { throw PeerConnectionError(.wrongState("a remote offer arrived on a connection that made its own offer")) }
        let params: RemoteTransportParameters
        let decisions: [SectionDecision]
        do {
            params = try RemoteTransportParameters(from: offer)
            // Decisions do not depend on our transport parameters; a placeholder is enough here.
            let placeholder = LocalTransportParameters(iceUfrag: "x", icePassword: "x", fingerprint: identity.fingerprint, setup: .active)
            decisions = try SDPNegotiation.answer(to: offer, local: placeholder, policy: configuration.answer, sessionID: sessionID, sessionVersion: 0).1
            if dtlsRole == nil { _ = try SDPNegotiation.answerSetup(for: params.setup) }
        } catch {
            throw PeerConnectionError(.invalidSDP(error))
        }
        isOfferer = false
        let agent = try makeAgent(controlling: params.isICELite, servers: servers)
        var restart = false
        if let old = remote, old.iceUfrag != params.iceUfrag || old.icePassword != params.icePassword {
            restart = true
            log.info("remote ICE credentials changed: ICE restart")
            _ = agent.restart()
            remoteEndOfCandidates = false
        }
        if remote == nil || restart {
            agent.setRemoteCredentials(ufrag: params.iceUfrag, password: params.icePassword)
        }
        if dtlsRole == nil {
            // Validated above: actpass/passive → we are active (client), active → passive (server).
            let role: DTLSRole = params.setup == .active ? .server : .client
            do {
                let t = try DTLSTransport(identity: identity, role: role, remoteFingerprints: params.fingerprints, profiles: configuration.srtpProfiles)
                t.delegate = self
                dtls = t
                dtlsRole = role
            } catch {
                throw PeerConnectionError(.dtls(error))
            }
        } else if let d = dtls, d.state != .connected, remote?.fingerprints != params.fingerprints {
            d.updateRemoteFingerprints(params.fingerprints)
        }
        remote = params
        remoteOffer = offer
        if !agentGathering {
            agentGathering = true
            try startGathering(agent)
        }
        for c in params.candidates { addCandidateNow(c.candidate) }
        flushPendingCandidates()
        if params.endOfCandidates || remoteEndOfCandidates {
            remoteEndOfCandidates = true
            agent.remoteGatheringDone()
        }

        startSCTPIfNeeded()
        if let m = params.maxMessageSize { sctp?.remoteMaxMessageSize = m }

        let next = RemoteTrack.tracks(in: offer, decisions: decisions)
        let old = Set(tracks)
        let new = Set(next)
        let added = next.filter { !old.contains($0) }
        let removed = tracks.filter { !new.contains($0) }
        tracks = next
        receiver.setTracks(next)
        if !added.isEmpty || !removed.isEmpty { emit(.tracksChanged(added: added, removed: removed)) }
        return next
    }

    private var agentGathering = false

    /// Writes the answer to the last applied offer.
    func createAnswer() throws(PeerConnectionError) -> String {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        guard isOfferer == false, let offer = remoteOffer, let ice, let role = dtlsRole else {
            throw PeerConnectionError(.wrongState("createAnswer() before setRemoteOffer()"))
        }
        let creds = ice.localCredentials
        let local = LocalTransportParameters(
            iceUfrag: creds.ufrag, icePassword: creds.password, fingerprint: identity.fingerprint,
            setup: role == .client ? .active : .passive, candidates: localCandidates, endOfCandidates: localGatheringDone)
        sessionVersion += 1
        let answer: SessionDescription
        let decisions: [SectionDecision]
        do {
            (answer, decisions) = try SDPNegotiation.answer(to: offer, local: local, policy: configuration.answer, sessionID: sessionID, sessionVersion: sessionVersion)
        } catch {
            throw PeerConnectionError(.invalidSDP(error))
        }
        if let first = decisions.first(where: { if case .rejected = $0.outcome { false } else { true } }) {
            candidateMid = first.mid ?? "0"
            candidateMLineIndex = first.index
        }
        // Every answer lists the candidates gathered so far (duplicates are ignored by
        // pion and aioice); later ones are trickled as events.
        localDescriptionCreated = true
        startConnecting()
        return answer.text
    }

    // MARK: - Offerer (LiveKit publisher PC)

    /// Writes an offer with a data section (and nothing else yet; publishing media comes later).
    func createOffer(iceRestart: Bool, servers: [ResolvedICEServer]) throws(PeerConnectionError) -> String {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        guard isOfferer != false else { throw PeerConnectionError(.wrongState("createOffer() on a connection that answers remote offers")) }
        isOfferer = true
        let agent = try makeAgent(controlling: true, servers: servers)
        if iceRestart, remote != nil {
            _ = agent.restart()
            remoteAnswerApplied = false
        }
        if !agentGathering {
            agentGathering = true
            try startGathering(agent)
        }
        let creds = agent.localCredentials
        let local = LocalTransportParameters(
            iceUfrag: creds.ufrag, icePassword: creds.password, fingerprint: identity.fingerprint,
            setup: dtlsRole.map { $0 == .client ? .active : .passive } ?? .actpass,
            candidates: localCandidates, endOfCandidates: localGatheringDone)
        sessionVersion += 1
        let offer = SDPNegotiation.offer(
            sections: [.data(mid: "0")], local: local, maxMessageSize: configuration.answer.maxMessageSize,
            sctpPort: configuration.sctpPort, sessionID: sessionID, sessionVersion: sessionVersion)
        candidateMid = "0"
        candidateMLineIndex = 0
        localDescriptionCreated = true
        return offer.text
    }

    /// Applies the answer to our offer.
    func applyRemoteAnswer(_ answer: SessionDescription) throws(PeerConnectionError) {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        guard isOfferer == true, let ice else { throw PeerConnectionError(.wrongState("setRemoteAnswer() before createOffer()")) }
        let params: RemoteTransportParameters
        do { params = try RemoteTransportParameters(from: answer) } catch { throw PeerConnectionError(.invalidSDP(error)) }
        if dtlsRole == nil {
            // RFC 5763 §5: the answerer picks; `active` (pion's default) makes us the server.
            let role: DTLSRole
            switch params.setup {
            case .active, .actpass: role = .server
            case .passive: role = .client
            case .holdconn: throw PeerConnectionError(.invalidSDP(SDPError(.unsupportedSetup)))
            }
            do {
                let t = try DTLSTransport(identity: identity, role: role, remoteFingerprints: params.fingerprints, profiles: configuration.srtpProfiles)
                t.delegate = self
                dtls = t
                dtlsRole = role
            } catch {
                throw PeerConnectionError(.dtls(error))
            }
        }
        ice.setRemoteCredentials(ufrag: params.iceUfrag, password: params.icePassword)
        remote = params
        remoteAnswerApplied = true
        for c in params.candidates { addCandidateNow(c.candidate) }
        flushPendingCandidates()
        if params.endOfCandidates || remoteEndOfCandidates {
            remoteEndOfCandidates = true
            ice.remoteGatheringDone()
        }
        startConnecting()
    }

    // MARK: - Trickle

    /// Adds a remote candidate (queued until a remote description is applied).
    func addRemoteCandidate(_ c: ICECandidateInit) throws(PeerConnectionError) {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        if c.isEndOfCandidates {
            remoteEndOfCandidates = true
            if remote != nil { ice?.remoteGatheringDone() }
            return
        }
        let parsed: ICECandidate
        do { parsed = try ICECandidate(parsing: c.candidate) } catch { throw PeerConnectionError(.invalidCandidate(error)) }
        guard parsed.component == 1 else { return }  // rtcp-mux: component 2 is never used
        let ufrag = c.usernameFragment ?? parsed.extensions["ufrag"]
        // Before a remote description, or for credentials we have not seen yet (a restart's
        // candidates can overtake its offer): keep it until the description arrives.
        let waiting = remote == nil || (isOfferer == true && !remoteAnswerApplied) || (ufrag != nil && ufrag != remote?.iceUfrag)
        if waiting {
            if pendingCandidates.count >= 256 { pendingCandidates.removeFirst() }
            pendingCandidates.append((parsed.candidateString, ufrag))
            return
        }
        addCandidateNow(parsed.candidateString)
    }

    /// Adds queued candidates that belong to the current remote credentials; drops stale ones.
    private func flushPendingCandidates() {
        let p = pendingCandidates
        pendingCandidates.removeAll()
        for c in p where c.ufrag == nil || c.ufrag == remote?.iceUfrag { addCandidateNow(c.candidate) }
    }

    private func addCandidateNow(_ c: String) {
        guard let ice else { return }
        if (try? ICECandidate(parsing: c)) == nil {
            log.debug("remote candidate refused: \(c.prefix(120))")
            return
        }
        if !ice.addRemoteCandidate(c) { log.debug("libnice refused remote candidate: \(c.prefix(120))") }
    }

    private func emitCandidate(_ c: String) {
        let ufrag = ice?.localCredentials.ufrag
        emit(.localCandidate(ICECandidateInit(candidate: c.hasPrefix("candidate:") ? c : "candidate:" + c, sdpMid: candidateMid, sdpMLineIndex: candidateMLineIndex, usernameFragment: ufrag)))
    }

    // MARK: - Connecting

    private func startConnecting() {
        if state == .new {
            state = .connecting
            let ms = UInt32(max(1, min(3_600_000, configuration.connectTimeoutSeconds * 1000)))
            connectTimer = loop.addTimer(intervalMs: ms) { [weak self] in
                self?.connectTimedOut()
                return false
            }
        }
        maybeStartDTLS()
    }

    private func connectTimedOut() {
        connectTimer = 0
        guard state == .connecting else { return }
        if iceState == .connected || iceState == .completed {
            fail(PeerConnectionError(.dtls(DTLSError(.timeout))))
        } else {
            fail(PeerConnectionError(.ice(ICEError(.timeout))))
        }
    }

    private func maybeStartDTLS() {
        guard let dtls, dtls.state == .new, iceState == .connected || iceState == .completed else { return }
        guard isOfferer == true ? remoteAnswerApplied : localDescriptionCreated else { return }
        dtls.start()
        emit(.dtlsStateChanged(.connecting))
    }

    /// Resumes when connected; throws the failure, or a timeout after `timeoutSeconds`.
    func addWaiter(_ c: CheckedContinuation<Void, any Error>, timeoutSeconds: Double) {
        if state == .connected { c.resume(); return }
        if let failure { c.resume(throwing: failure); return }
        if state == .closed { c.resume(throwing: PeerConnectionError(.closed)); return }
        let id = nextWaiterID
        nextWaiterID += 1
        waiters.append((id, c))
        let ms = UInt32(max(1, min(3_600_000, timeoutSeconds * 1000)))
        loop.addTimer(intervalMs: ms) { [weak self] in
            guard let self, let i = waiters.firstIndex(where: { $0.id == id }) else { return false }
            let w = waiters.remove(at: i)
            w.continuation.resume(throwing: PeerConnectionError(.ice(ICEError(.timeout))))
            return false
        }
    }

    private func resumeWaiters(_ error: (any Error)?) {
        let w = waiters
        waiters.removeAll()
        for (_, c) in w {
            if let error { c.resume(throwing: error) } else { c.resume() }
        }
    }

    // MARK: - Media, data, stats

    func attach(_ ring: PacketRing?, ssrc: UInt32) -> Bool { receiver.attach(ring, ssrc: ssrc) }

    func createDataChannel(label: String, reliability: DataChannelReliability) {
        if let sctp, sctp.isConnected {
            _ = sctp.openChannel(label: label, reliability: reliability)
        } else {
            pendingChannels.append((label, reliability))
        }
    }

    func send(_ data: [UInt8], label: String, binary: Bool) -> Bool {
        guard let sctp, let ch = channelsByLabel[label] else { return false }
        return sctp.sendMessage(data, binary: binary, channel: ch.id)
    }

    func stats() -> PeerConnectionStats {
        var t = receiver.counters
        t.dtlsDroppedDatagrams = UInt64(dtls?.droppedDatagrams ?? 0)
        t.sctpDroppedPackets = UInt64(sctp?.droppedPackets ?? 0)
        t.dataChannelDroppedMessages = UInt64(sctp?.droppedMessages ?? 0)
        return PeerConnectionStats(
            state: state, iceState: iceState, selectedPair: selectedPair, srtpProfile: dtls?.srtpProfile,
            transport: t, tracks: receiver.trackStats())
    }

    // MARK: - Failure and close

    private func cancelTimers() {
        for id in [dtlsTimer, connectTimer, reportTimer, nackTimer, statsTimer] { loop.cancelTimer(id) }
        statsTimer = 0
        dtlsTimer = 0
        connectTimer = 0
        reportTimer = 0
        nackTimer = 0
    }

    private func fail(_ e: PeerConnectionError) {
        guard !isFinished else { return }
        log.warning(e.description)
        state = .failed
        failure = e
        cancelTimers()
        emit(.failed(e))
        resumeWaiters(e)
    }

    /// Stops everything; idempotent. Sends DTLS close_notify and an SCTP ABORT if connected.
    func close() {
        guard state != .closed else { return }
        let wasFailed = state == .failed
        state = .closed
        cancelTimers()
        sctp?.close()
        sctp = nil
        dtls?.close()
        receiver.srtp = nil
        receiver.sendDatagram = nil
        ice?.close()
        ice = nil
        if !wasFailed { resumeWaiters(PeerConnectionError(.closed)) }
        emit(.closed)
        continuation.finish()
    }

    // MARK: - Packet path entry

    /// One datagram from libnice (STUN never reaches here).
    @inline(__always)
    func onDatagram(_ p: UnsafeRawPointer, _ n: Int) {
        receiver.counters.datagramsReceived &+= 1
        receiver.counters.bytesReceived &+= UInt64(n)
        let d = UnsafeRawBufferPointer(start: p, count: n)
        switch DatagramKind.classify(d) {
        case .rtp: receiver.handle(p, count: n, isRTCP: false, nowNanos: MonotonicClock.nanos())
        case .rtcp: receiver.handle(p, count: n, isRTCP: true, nowNanos: MonotonicClock.nanos())
        case .dtls:
            receiver.counters.dtlsDatagrams &+= 1
            dtls?.handleDatagram(d)
        default:
            receiver.counters.unknownDatagrams &+= 1
        }
    }

    private func sendDatagram(_ p: UnsafeRawPointer, _ n: Int) -> Bool {
        guard let ice else { return false }
        return ice.send(p, n) == Int32(n)
    }

    private func scheduleReport() {
        // RFC 3550 §6.3.5: randomise to 0.5–1.5 × the interval.
        let base = Double(configuration.rtcpIntervalMs)
        let ms = UInt32(max(50, base * Double.random(in: 0.5...1.5)))
        reportTimer = loop.addTimer(intervalMs: ms) { [weak self] in
            guard let self, state == .connected else { return false }
            receiver.sendReceiverReports(nowNanos: MonotonicClock.nanos())
            scheduleReport()
            return false
        }
    }
}

/// libnice's receive callback: straight to the transport's packet path, no actor hop.
private let niceReceive: NiceAgentRecvFunc = { _, _, _, len, buf, ud in
    guard let buf, let ud, len > 0 else { return }
    Unmanaged<PeerTransport>.fromOpaque(ud).takeUnretainedValue().onDatagram(UnsafeRawPointer(buf), Int(len))
}

// MARK: - ICE

extension PeerTransport: ICEAgentDelegate {
    func iceGathered(candidate: String) {
        guard !isFinished else { return }
        localCandidates.append(candidate)
        if localDescriptionCreated { emitCandidate(candidate) }
    }

    func iceGatheringDone() {
        guard !isFinished else { return }
        localGatheringDone = true
        if localDescriptionCreated { emit(.localCandidatesComplete) }
    }

    func iceStateChanged(_ s: ICEConnectionState) {
        guard !isFinished else { return }
        iceState = s
        emit(.iceStateChanged(s))
        switch s {
        case .connected, .completed: maybeStartDTLS()
        case .failed: fail(PeerConnectionError(.ice(ICEError(.failed))))
        default: break
        }
    }

    func iceSelectedPair(_ description: String) {
        selectedPair = description
        log.info("selected pair \(description)")
        emit(.selectedCandidatePair(description))
    }
}

// MARK: - DTLS

extension PeerTransport: DTLSTransportDelegate {
    func dtlsSend(_ datagram: UnsafeRawBufferPointer) {
        guard let base = datagram.baseAddress else { return }
        _ = sendDatagram(base, datagram.count)
    }

    func dtlsSetTimer(nanos: UInt64?) {
        loop.cancelTimer(dtlsTimer)
        dtlsTimer = 0
        guard let nanos, !isFinished else { return }
        dtlsTimer = loop.addTimer(intervalMs: UInt32(min(60_000, max(1, nanos / 1_000_000)))) { [weak self] in
            guard let self else { return false }
            dtlsTimer = 0
            dtls?.handleTimeout()
            return false
        }
    }

    func dtlsConnected(keys: SRTPKeyingMaterial?) {
        guard !isFinished, let role = dtlsRole else { return }
        if let keys {
            let k = keys.keys(isClient: role == .client)
            do {
                receiver.srtp = try configuration.srtpBackend.makeTransform(profile: keys.profile, localKey: k.local, remoteKey: k.remote)
            } catch {
                fail(PeerConnectionError(.srtp(error)))
                return
            }
            receiver.sendDatagram = { [unowned self] p, n in sendDatagram(p, n) }
        } else if !tracks.isEmpty {
            fail(PeerConnectionError(.dtls(DTLSError(.handshake("the peer negotiated no SRTP profile")))))
            return
        }
        state = .connected
        loop.cancelTimer(connectTimer)
        connectTimer = 0
        emit(.dtlsStateChanged(.connected))
        emit(.connected(srtpProfile: keys?.profile))
        resumeWaiters(nil)
        if keys != nil {
            scheduleReport()
            nackTimer = loop.addTimer(intervalMs: 20) { [weak self] in
                guard let self, state == .connected else { return false }
                receiver.sendNACKs(nowNanos: MonotonicClock.nanos())
                return true
            }
        }
        if let ms = configuration.statsIntervalMs, ms > 0 {
            statsTimer = loop.addTimer(intervalMs: ms) { [weak self] in
                guard let self, state == .connected else { return false }
                emit(.stats(stats()))
                return true
            }
        }
        startSCTPIfNeeded()
    }

    /// Starts SCTP once DTLS is up and the remote description has a data section (the first
    /// one, or a later re-offer/answer that adds it).
    private func startSCTPIfNeeded() {
        guard sctp == nil, state == .connected, let role = dtlsRole, let port = remote?.sctpPort else { return }
        let t = SCTPTransport(
            loop: loop, localPort: configuration.sctpPort, remotePort: port, isDTLSClient: role == .client,
            maxMessageSize: configuration.answer.maxMessageSize, remoteMaxMessageSize: remote?.maxMessageSize)
        t.delegate = self
        sctp = t
        do { try t.start() } catch { log.warning("data channels unavailable: \(error)") }
    }

    func dtlsReceived(_ data: UnsafeRawBufferPointer) {
        sctp?.handleIncoming(data)
    }

    func dtlsFailed(_ error: DTLSError) {
        emit(.dtlsStateChanged(.failed))
        fail(PeerConnectionError(.dtls(error)))
    }

    func dtlsClosed() {
        emit(.dtlsStateChanged(.closed))
        fail(PeerConnectionError(.dtls(DTLSError(.connection("the peer closed the DTLS connection")))))
    }
}

// MARK: - SCTP

extension PeerTransport: SCTPTransportDelegate {
    func sctpSend(_ packet: UnsafeRawBufferPointer) { dtls?.send(packet) }

    func sctpConnected() {
        log.debug("SCTP association up")
        let p = pendingChannels
        pendingChannels.removeAll()
        for c in p { _ = sctp?.openChannel(label: c.label, reliability: c.reliability) }
    }

    func sctpClosed(failed: Bool) {
        if failed { log.warning("SCTP association lost; data channels are closed") }
    }

    func sctpChannelOpened(_ channel: DataChannelInfo) {
        channelsByLabel[channel.label] = channel
        emit(.dataChannelOpened(channel))
    }

    func sctpChannelClosed(_ channel: DataChannelInfo) {
        if channelsByLabel[channel.label]?.id == channel.id { channelsByLabel[channel.label] = nil }
        emit(.dataChannelClosed(channel))
    }

    func sctpMessage(_ channel: DataChannelInfo, data: [UInt8], binary: Bool) {
        emit(.dataChannelMessage(DataChannelMessage(label: channel.label, channelID: channel.id, data: data, isBinary: binary)))
    }
}

// MARK: - Media events

extension PeerTransport: MediaReceiverDelegate {
    func mediaUnknownSSRC(_ ssrc: UInt32, payloadType: UInt8) { emit(.unknownSSRC(ssrc, payloadType: payloadType)) }
    func mediaBye(_ ssrc: UInt32) { emit(.remoteBye(ssrc)) }
}

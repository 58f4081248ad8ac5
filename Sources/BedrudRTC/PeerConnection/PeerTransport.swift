import BedrudProtocol
import BedrudRuntime
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

    /// Offer/answer, candidates, DTLS role and connection state: every decision.
    private var negotiation: PeerNegotiation
    private var ice: ICEAgent?
    /// Our ICE role, fixed when the first agent is made.
    private var controlling = false
    /// Servers the next ICE restart makes a new agent with (``setServersForRestart(_:)``).
    private var serversForRestart: [ResolvedICEServer]?
    private var selectedPair: String?
    private var srtpProfile: SRTPProfile?
    private var dtls: DTLSTransport?
    private var sctp: SCTPTransport?
    private var pendingChannels: [(label: String, reliability: DataChannelReliability)] = []
    private var channelsByLabel: [String: DataChannelInfo] = [:]
    /// ``addWaiter(_:timeoutSeconds:)``'s waiters, resumed when connected, failed or closed.
    private var waiters = WaitList<CheckedContinuation<Void, any Error>>()
    /// ``addDataSentWaiter(_:timeoutSeconds:)``'s waiters, resumed by SCTP's sender-dry
    /// notification, the association's end or their timeout.
    private var dataSentWaiters = WaitList<CheckedContinuation<Bool, Never>>()
    /// Data-sent waiters resumed by the sender-dry wake-up / by their timeout (for tests).
    private(set) var dataSentWakeups = 0
    private(set) var dataSentTimeouts = 0
    /// ``addAudioDrainedWaiter(mid:_:timeoutSeconds:)``'s waiters, resumed by the send
    /// timer's tick that finds their track drained, by ``stopSending(mid:)``, the end of the
    /// connection or their timeout.
    private var drainWaiters = WaitList<(mid: String, continuation: CheckedContinuation<Bool, Never>)>()
    /// Drain waiters resumed by the send path / by their timeout (for tests).
    private(set) var audioDrainedWakeups = 0
    private(set) var audioDrainedTimeouts = 0
    var audioDrainWaiting: Int { drainWaiters.count }

    /// The loop timers that run, at most one of each kind (GLib source ids).
    private var timers: [PeerTimer: UInt32] = [:]
    /// The running report timer has the quiet interval (nothing to report on).
    private var reportsQuiet = false
    /// The track difference of the offer being applied, as the negotiation emitted it.
    private var lastTrackChange: (added: [RemoteTrack], removed: [RemoteTrack]) = ([], [])
    /// Published tracks (by mid) that are muted; applies to senders started later too.
    private var mutedMids: Set<String> = []

    var state: PeerConnectionState { negotiation.state }
    var failure: PeerConnectionError? { negotiation.failure }
    var tracks: [RemoteTrack] { negotiation.tracks }

    init(loop: GLibLoop, configuration: PeerConnectionConfiguration, identity: DTLSIdentity, continuation: AsyncStream<PeerConnectionEvent>.Continuation) {
        self.loop = loop
        self.configuration = configuration
        self.identity = identity
        self.continuation = continuation
        self.log = Logger("rtc.pc.\(configuration.name)", room: configuration.logRoom)
        negotiation = PeerNegotiation(
            policy: configuration.answer, sctpPort: configuration.sctpPort, localFingerprint: identity.fingerprint,
            sessionID: UInt64.random(in: 1...(UInt64(Int64.max))))
        receiver = MediaReceiver(maxDatagram: configuration.maxDatagramBytes, nack: configuration.nack, logRoom: configuration.logRoom)
        receiver.delegate = self
    }

    // MARK: - Events

    private func emit(_ e: PeerConnectionEvent) {
        if case .dropped = continuation.yield(e) { receiver.counters.eventsDropped &+= 1 }
    }

    private var isFinished: Bool { negotiation.isFinished }

    var hasAgent: Bool { ice != nil }

    /// ICE servers for the next ICE restart (a resume's, with fresh TURN credentials). That
    /// restart replaces the agent instead of restarting its stream: a new agent gathers new
    /// host sockets and allocates on the TURN servers with these credentials. libnice cannot
    /// allocate again on a running agent: every answer from a TURN server reaches the
    /// socket of the relay candidate already based on that host socket, so a second
    /// allocation never completes (tried against coturn: the server allocated, the agent
    /// never saw it).
    func setServersForRestart(_ servers: [ResolvedICEServer]) {
        serversForRestart = servers
    }

    // MARK: - Calls

    /// Applies a remote offer (first or re-offer) and returns the tracks it sends us, with
    /// the difference the negotiation emitted.
    func applyRemoteOffer(_ offer: SessionDescription, servers: [ResolvedICEServer]) throws(PeerConnectionError) -> RemoteTrackUpdate {
        lastTrackChange = ([], [])
        try run(.remoteOffer(offer, freshCredentials: Self.randomCredentials()), servers: servers)
        return RemoteTrackUpdate(tracks: negotiation.tracks, added: lastTrackChange.added, removed: lastTrackChange.removed)
    }

    /// Writes the answer to the last applied offer.
    func createAnswer() throws(PeerConnectionError) -> String {
        guard let text = try run(.createAnswer) else { throw PeerConnectionError(.wrongState("no answer was written")) }
        return text
    }

    /// Writes an offer with the negotiation's sections (data channels, published audio).
    func createOffer(iceRestart: Bool, servers: [ResolvedICEServer]) throws(PeerConnectionError) -> String {
        guard let text = try run(.createOffer(iceRestart: iceRestart, freshCredentials: Self.randomCredentials()), servers: servers) else {
            throw PeerConnectionError(.wrongState("no offer was written"))
        }
        return text
    }

    /// Applies the answer to our offer.
    func applyRemoteAnswer(_ answer: SessionDescription) throws(PeerConnectionError) {
        try run(.remoteAnswer(answer))
    }

    /// Adds a remote candidate (queued until a remote description is applied).
    func addRemoteCandidate(_ c: ICECandidateInit) throws(PeerConnectionError) {
        try run(.remoteCandidate(c))
    }

    /// ICE-chars (RFC 8839 §5.4): 16 for the ufrag, 32 for the password (≥ 128 bits).
    static func randomCredentials() -> ICECredentials {
        let chars = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        func draw(_ n: Int) -> String { String((0..<n).map { _ in chars[Int.random(in: 0..<chars.count)] }) }
        return ICECredentials(ufrag: draw(16), password: draw(32))
    }

    // MARK: - Performing actions

    /// Feeds one event to the negotiation and performs what it decides. Returns the
    /// description text when the event wrote one. A failure while performing (libnice or
    /// OpenSSL refusing) fails the connection and is thrown.
    @discardableResult
    private func run(_ event: PeerNegotiation.Event, servers: [ResolvedICEServer] = []) throws(PeerConnectionError) -> String? {
        let actions = try negotiation.handle(event)
        var text: String?
        for a in actions {
            do {
                if let t = try perform(a, servers: servers) { text = t }
            } catch {
                for f in (try? negotiation.handle(.failed(error))) ?? [] { _ = try? perform(f, servers: servers) }
                throw error
            }
        }
        return text
    }

    /// Feeds a callback's event; its failures become the connection's failure.
    private func deliver(_ event: PeerNegotiation.Event) {
        do { try run(event) } catch { log.debug("\(error)") }
    }

    private func makeAgent(servers: [ResolvedICEServer], credentials creds: ICECredentials) throws(PeerConnectionError) {
        let agent: ICEAgent
        do {
            agent = try ICEAgent(loop: loop, controlling: controlling, configuration: configuration.ice, servers: servers,
                                 logRoom: configuration.logRoom)
        } catch {
            throw PeerConnectionError(.ice(error))
        }
        agent.delegate = self
        agent.attachReceiver(niceReceive, userData: Unmanaged.passUnretained(self).toOpaque())
        ice = agent
        guard agent.setLocalCredentials(ufrag: creds.ufrag, password: creds.password) else {
            throw PeerConnectionError(.ice(ICEError(.agentCreation)))
        }
    }

    private func perform(_ action: PeerNegotiation.Action, servers: [ResolvedICEServer]) throws(PeerConnectionError) -> String? {
        switch action {
        case .createAgent(let controlling, let creds):
            self.controlling = controlling
            try makeAgent(servers: servers, credentials: creds)
        case .startGathering:
            do { try ice?.gather() } catch { throw PeerConnectionError(.ice(error)) }
        case .restartICE(let creds):
            if let fresh = serversForRestart, let old = ice {
                // New servers since the last agent: a new agent, new sockets, new allocations.
                log.info("ICE restart with a new agent (new ICE servers)")
                serversForRestart = nil
                old.delegate = nil
                old.close()
                ice = nil
                try makeAgent(servers: fresh, credentials: creds)
                do { try ice?.gather() } catch { throw PeerConnectionError(.ice(error)) }
            } else {
                log.info("ICE restart")
                _ = ice?.restart()
                _ = ice?.setLocalCredentials(ufrag: creds.ufrag, password: creds.password)
            }
        case .setRemoteCredentials(let ufrag, let password):
            ice?.setRemoteCredentials(ufrag: ufrag, password: password)
        case .addRemoteCandidate(let c):
            if ice?.addRemoteCandidate(c) == false { log.debug("libnice refused remote candidate: \(c.prefix(120))") }
        case .remoteGatheringDone:
            ice?.remoteGatheringDone()
        case .createDTLS(let role, let fingerprints):
            do {
                let t = try DTLSTransport(identity: identity, role: role, remoteFingerprints: fingerprints, profiles: configuration.srtpProfiles)
                t.delegate = self
                dtls = t
            } catch {
                throw PeerConnectionError(.dtls(error))
            }
        case .updateRemoteFingerprints(let f):
            dtls?.updateRemoteFingerprints(f)
        case .startDTLS:
            dtls?.start()
        case .startConnectTimer:
            let ms = UInt32(max(1, min(3_600_000, configuration.connectTimeoutSeconds * 1000)))
            startTimer(.connect, intervalMs: ms) { $0.deliver(.connectTimeout) }
        case .cancelConnectTimer:
            cancelTimer(.connect)
        case .startSCTP(let port, let isClient, let remoteMax):
            let t = SCTPTransport(
                loop: loop, localPort: configuration.sctpPort, remotePort: port, isDTLSClient: isClient,
                maxMessageSize: configuration.answer.maxMessageSize, remoteMaxMessageSize: remoteMax, logRoom: configuration.logRoom)
            t.delegate = self
            sctp = t
            do { try t.start() } catch { log.warning("data channels unavailable: \(error)") }
        case .setRemoteMaxMessageSize(let m):
            sctp?.remoteMaxMessageSize = m
        case .setTracks(let t):
            receiver.setTracks(t)
            reportSubjectsChanged()
        case .localDescription(let text):
            return text
        case .startMediaTimers:
            // The NACK timer starts when a gap appears (mediaNACKPending), not here.
            scheduleReport()
        case .connected:
            emit(.connected(srtpProfile: srtpProfile))
            resumeWaiters(nil)
            if let ms = configuration.statsIntervalMs, ms > 0 {
                startRepeatingTimer(.stats, intervalMs: ms) { t in
                    guard t.state == .connected else { return false }
                    t.emit(.stats(t.stats()))
                    return true
                }
            }
        case .failed(let e):
            log.warning(e.description)
            cancelTimers()
            emit(.failed(e))
            resumeWaiters(e)
            resumeDataSentWaiters(false)
            resumeDrainedWaiters(all: true)
        case .close(let wasFailed):
            cancelTimers()
            sctp?.close()
            sctp = nil
            dtls?.close()
            receiver.srtp = nil
            receiver.sendDatagram = nil
            ice?.close()
            ice = nil
            if !wasFailed { resumeWaiters(PeerConnectionError(.closed)) }
            resumeDataSentWaiters(false)
            resumeDrainedWaiters(all: true)
            emit(.closed)
            continuation.finish()
        case .emit(let e):
            if case .tracksChanged(let added, let removed) = e { lastTrackChange = (added, removed) }
            emit(e)
        }
        return nil
    }

    // MARK: - Waiters

    /// Resumes when connected; throws the failure, or a timeout after `timeoutSeconds`.
    func addWaiter(_ c: CheckedContinuation<Void, any Error>, timeoutSeconds: Double) {
        if state == .connected { c.resume(); return }
        if let failure { c.resume(throwing: failure); return }
        if state == .closed { c.resume(throwing: PeerConnectionError(.closed)); return }
        park(c, on: \.waiters, timeoutSeconds: timeoutSeconds) { _, c in
            c.resume(throwing: PeerConnectionError(.ice(ICEError(.timeout))))
        }
    }

    /// Parks `entry` on one of the waiter lists, with a loop timer as its safety net: when
    /// the timer fires before the entry was resumed, the entry is taken out and handed to
    /// `expire`. Loop thread only (parked before the timer can fire).
    private func park<Entry>(_ entry: Entry, on list: ReferenceWritableKeyPath<PeerTransport, WaitList<Entry>>, timeoutSeconds: Double,
                             expire: @escaping (PeerTransport, Entry) -> Void) {
        let id = self[keyPath: list].open()
        _ = self[keyPath: list].park(id, entry)
        let ms = UInt32(max(1, min(3_600_000, timeoutSeconds * 1000)))
        loop.addTimer(intervalMs: ms) { [weak self] in
            if let self, let entry = self[keyPath: list].remove(id) { expire(self, entry) }
            return false
        }
    }

    private func resumeWaiters(_ error: (any Error)?) {
        for c in waiters.takeAll() {
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

    var sctpTimerIntervalMs: UInt32? { sctp?.timerIntervalMs }

    var sctpSenderDryEvents: Int { sctp?.senderDryEvents ?? 0 }

    func send(_ data: [UInt8], label: String, binary: Bool) -> Bool {
        guard let sctp, let ch = channelsByLabel[label] else { return false }
        return sctp.sendMessage(data, binary: binary, channel: ch.id)
    }

    /// Resumes with true once SCTP has every sent message acknowledged, false after
    /// `timeoutSeconds` (or when there is no association, or it ends). Woken by usrsctp's
    /// sender-dry notification (``sctpSenderDry()``), not polled; the timeout is the safety
    /// net and looks once more before it gives up. Used once, before leaving, by commands
    /// that send and go.
    func addDataSentWaiter(_ c: CheckedContinuation<Bool, Never>, timeoutSeconds: Double) {
        guard let sctp, sctp.isConnected else { c.resume(returning: false); return }
        if sctp.unacknowledgedChunks == 0 { c.resume(returning: true); return }
        park(c, on: \.dataSentWaiters, timeoutSeconds: timeoutSeconds) { t, c in
            t.dataSentTimeouts += 1
            c.resume(returning: t.sctp.map { $0.isConnected && $0.unacknowledgedChunks == 0 } ?? false)
        }
    }

    private func resumeDataSentWaiters(_ sent: Bool) {
        for c in dataSentWaiters.takeAll() { c.resume(returning: sent) }
    }

    // MARK: - Publishing

    /// Our RTCP CNAME, for the offer's a=ssrc lines.
    var cname: String { String(decoding: receiver.cname, as: UTF8.self) }

    /// Adds an audio section to our next offers.
    func addAudioTrack(_ track: LocalAudioTrack) throws(PeerConnectionError) {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        guard negotiation.role != .answerer else { throw PeerConnectionError(.wrongState("a connection that answers cannot publish")) }
        guard !negotiation.localAudio.contains(where: { $0.mid == track.mid || $0.ssrc == track.ssrc }) else {
            throw PeerConnectionError(.wrongState("a track with mid \(track.mid) or SSRC \(track.ssrc) is already added"))
        }
        negotiation.localAudio.append(track)
    }

    /// Starts sending track `mid` from `ring`, paced from `startNanos` (monotonic): the
    /// answer must have accepted it and SRTP must be up.
    func startSending(mid: String, ring: PacketRing, startNanos: UInt64) throws(PeerConnectionError) {
        guard state == .connected, receiver.srtp != nil else { throw PeerConnectionError(.wrongState("startSending() before the connection is up with SRTP")) }
        guard let track = negotiation.localAudio.first(where: { $0.mid == mid }) else { throw PeerConnectionError(.wrongState("no track with mid \(mid)")) }
        guard let accepted = negotiation.acceptedAudio[mid] else {
            throw PeerConnectionError(.wrongState("the server's answer did not accept the audio section \(mid)"))
        }
        guard receiver.senders[track.ssrc] == nil else { return }
        let rtp = RTPSender(ssrc: track.ssrc, payloadType: accepted.payloadType, clockRate: 48_000, audioLevelID: accepted.audioLevelID,
                            sequenceNumber: UInt16.random(in: 0...UInt16.max), timestampBase: UInt32.random(in: 0...UInt32.max))
        let sender = MediaSender(track: track, rtp: rtp, ring: ring, startNanos: startNanos)
        sender.muted = mutedMids.contains(mid)
        receiver.senders[track.ssrc] = sender
        reportSubjectsChanged()
        if timers[.send] == nil {
            // A few-ms tick on the loop: every due packet goes out on the first tick after
            // its deadline; deadlines come from the sample count, so ticks never add drift.
            startRepeatingTimer(.send, intervalMs: 5) { t in
                guard t.state == .connected, let srtp = t.receiver.srtp, let send = t.receiver.sendDatagram else { return true }
                let now = MonotonicClock.nanos()
                for s in t.receiver.senders.values { s.tick(nowNanos: now, srtp: srtp, send: send) }
                // The tick that sends a track's last packet wakes who waits for it to drain.
                if t.drainWaiters.count > 0 { t.resumeDrainedWaiters(all: false) }
                return true
            }
        }
    }

    /// Stops sending track `mid` (its ring is no longer read).
    func stopSending(mid: String) {
        guard let t = negotiation.localAudio.first(where: { $0.mid == mid }) else { return }
        receiver.senders[t.ssrc] = nil
        if receiver.senders.isEmpty { cancelTimer(.send) }
        // Its ring is no longer read: nothing more will go out, so nobody waits for it.
        if drainWaiters.count > 0 { resumeDrainedWaiters(all: false) }
    }

    /// While muted, the track's due packets are dropped (LiveKit is told by the mute request).
    func setMuted(mid: String, muted: Bool) {
        if muted { mutedMids.insert(mid) } else { mutedMids.remove(mid) }
        guard let t = negotiation.localAudio.first(where: { $0.mid == mid }) else { return }
        receiver.senders[t.ssrc]?.muted = muted
    }

    /// True once every packet of track `mid`'s ring has gone out.
    func isDrained(mid: String) -> Bool {
        guard let t = negotiation.localAudio.first(where: { $0.mid == mid }), let s = receiver.senders[t.ssrc] else { return true }
        return s.ring.count == 0 && !s.hasPending
    }

    /// Resumes with true once track `mid`'s ring is empty and its last packet has gone out,
    /// with ``isDrained(mid:)``'s answer after `timeoutSeconds` or when the connection ends.
    /// Woken by the send timer's tick that sends the last packet (it runs every 5 ms while
    /// a track is sent, so waiting adds no timer), not polled; the timeout is the safety net.
    func addAudioDrainedWaiter(mid: String, _ c: CheckedContinuation<Bool, Never>, timeoutSeconds: Double) {
        if isDrained(mid: mid) { c.resume(returning: true); return }
        if isFinished { c.resume(returning: false); return }
        park((mid, c), on: \.drainWaiters, timeoutSeconds: timeoutSeconds) { t, w in
            t.audioDrainedTimeouts += 1
            w.continuation.resume(returning: t.isDrained(mid: w.mid))
        }
    }

    /// Resumes the drain waiters whose track is drained (`all`: every waiter, with whether
    /// its track is drained, when the connection ends).
    private func resumeDrainedWaiters(all: Bool) {
        let ready = drainWaiters.take { all || isDrained(mid: $0.mid) }
        if !all { audioDrainedWakeups += ready.count }
        for w in ready { w.continuation.resume(returning: !all || isDrained(mid: w.mid)) }
    }

    static func unixNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    func stats() -> PeerConnectionStats {
        var t = receiver.counters
        for s in receiver.senders.values {
            t.rtpPacketsSent &+= s.packetsSent
            t.rtpBytesSent &+= s.bytesSent
            t.rtpRetransmitted &+= s.rtp.retransmitted
            t.rtpRetransmissionMisses &+= s.rtp.retransmissionMisses
            t.rtpSendFailures &+= s.sendFailures
        }
        t.dtlsDroppedDatagrams = UInt64(dtls?.droppedDatagrams ?? 0)
        t.sctpDroppedPackets = UInt64(sctp?.droppedPackets ?? 0)
        t.dataChannelDroppedMessages = UInt64(sctp?.droppedMessages ?? 0)
        return PeerConnectionStats(
            state: state, iceState: negotiation.iceState, selectedPair: selectedPair, srtpProfile: dtls?.srtpProfile,
            transport: t, tracks: receiver.trackStats(), endedTracks: receiver.endedTrackStats)
    }

    // MARK: - Timers

    /// The kinds of loop timer a transport runs; the table ``timers`` holds one of each at most.
    enum PeerTimer: CaseIterable {
        /// DTLS retransmission (OpenSSL's DTLSv1_get_timeout), one-shot.
        case dtls
        /// Gives up connecting after `connectTimeoutSeconds`, one-shot.
        case connect
        /// RTCP sender and receiver reports, one-shot, rescheduled with a random interval.
        case report
        /// NACKs every 20 ms while packets are missing.
        case nack
        /// ``PeerConnectionEvent/stats(_:)`` every `statsIntervalMs`.
        case stats
        /// The publish pacer, every 5 ms while a track is sent.
        case send
    }

    /// Starts a timer of `kind` that calls `tick` every `intervalMs` until it returns false
    /// (the entry then leaves the table), replacing the running one of that kind.
    private func startRepeatingTimer(_ kind: PeerTimer, intervalMs: UInt32, _ tick: @escaping (PeerTransport) -> Bool) {
        cancelTimer(kind)
        var id: UInt32 = 0
        id = loop.addTimer(intervalMs: intervalMs) { [weak self] in
            guard let self else { return false }
            if tick(self) { return true }
            if timers[kind] == id { timers[kind] = nil }
            return false
        }
        timers[kind] = id
    }

    /// Starts a timer of `kind` that fires once after `intervalMs`, replacing the running
    /// one of that kind. The entry leaves the table before `fire` runs, so `fire` may start
    /// the next one of its kind.
    private func startTimer(_ kind: PeerTimer, intervalMs: UInt32, _ fire: @escaping (PeerTransport) -> Void) {
        cancelTimer(kind)
        var id: UInt32 = 0
        id = loop.addTimer(intervalMs: intervalMs) { [weak self] in
            guard let self else { return false }
            if timers[kind] == id { timers[kind] = nil }
            fire(self)
            return false
        }
        timers[kind] = id
    }

    private func cancelTimer(_ kind: PeerTimer) {
        if let id = timers.removeValue(forKey: kind) { loop.cancelTimer(id) }
    }

    // MARK: - Failure and close

    private func cancelTimers() {
        for id in timers.values { loop.cancelTimer(id) }
        timers.removeAll()
        receiver.nackTimerStopped()
    }

    /// Stops everything; idempotent. Sends DTLS close_notify and an SCTP ABORT if connected.
    func close() { deliver(.close) }

    // MARK: - Packet path entry

    /// One datagram from libnice (STUN never reaches here).
    @inline(__always)
    func onDatagram(_ p: UnsafeRawPointer, _ n: Int) {
        receiver.counters.datagramsReceived &+= 1
        loop.burstGate.datagrams &+= 1
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

    /// The report interval: `configured` while there is a stream to report on (a track
    /// received or sent), RFC 3550 §6.2's 5 s minimum otherwise. An empty room then wakes
    /// the loop for a report of no blocks every 5 s, not every second.
    static func reportIntervalMs(configured: UInt32, hasSubjects: Bool) -> UInt32 {
        hasSubjects ? configured : max(configured, 5000)
    }

    /// Tracks or senders came while reports were quiet: the next report is due at the
    /// configured interval from now, not up to 7.5 s later.
    private func reportSubjectsChanged() {
        guard timers[.report] != nil, reportsQuiet, hasReportSubjects else { return }
        scheduleReport()
    }

    /// A track received or sent: something for a report to be about.
    private var hasReportSubjects: Bool { !receiver.streams.isEmpty || !receiver.senders.isEmpty }

    private func scheduleReport() {
        // RFC 3550 §6.3.5: randomise to 0.5–1.5 × the interval.
        reportsQuiet = !hasReportSubjects
        let base = Double(Self.reportIntervalMs(configured: configuration.rtcpIntervalMs, hasSubjects: !reportsQuiet))
        let ms = UInt32(max(50, base * Double.random(in: 0.5...1.5)))
        startTimer(.report, intervalMs: ms) { t in
            guard t.state == .connected else { return }
            let now = MonotonicClock.nanos()
            t.receiver.sendReceiverReports(nowNanos: now)
            t.receiver.sendSenderReports(nowNanos: now, unixNanos: Self.unixNanos())
            t.scheduleReport()
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
    func iceGathered(candidate: String) { deliver(.localCandidate(candidate)) }

    func iceGatheringDone() { deliver(.localGatheringDone) }

    func iceStateChanged(_ s: ICEConnectionState) { deliver(.iceStateChanged(s)) }

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
        cancelTimer(.dtls)
        guard let nanos, !isFinished else { return }
        startTimer(.dtls, intervalMs: UInt32(min(60_000, max(1, nanos / 1_000_000)))) { $0.dtls?.handleTimeout() }
    }

    func dtlsConnected(keys: SRTPKeyingMaterial?) {
        guard !isFinished, let role = negotiation.dtlsRole else { return }
        if let keys {
            let k = keys.keys(isClient: role == .client)
            do {
                receiver.srtp = try configuration.srtpBackend.makeTransform(profile: keys.profile, localKey: k.local, remoteKey: k.remote)
            } catch {
                deliver(.failed(PeerConnectionError(.srtp(error))))
                return
            }
            receiver.sendDatagram = { [unowned self] p, n in sendDatagram(p, n) }
        }
        srtpProfile = keys?.profile
        deliver(.dtlsConnected(srtp: keys != nil))
    }

    func dtlsReceived(_ data: UnsafeRawBufferPointer) {
        sctp?.handleIncoming(data)
    }

    func dtlsFailed(_ error: DTLSError) {
        emit(.dtlsStateChanged(.failed))
        deliver(.failed(PeerConnectionError(.dtls(error))))
    }

    func dtlsClosed() {
        emit(.dtlsStateChanged(.closed))
        deliver(.failed(PeerConnectionError(.dtls(DTLSError(.connection("the peer closed the DTLS connection"))))))
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
        resumeDataSentWaiters(false)
    }

    func sctpSenderDry() {
        // A message sent after the one that was acknowledged keeps the waiters waiting for
        // the next notification.
        guard dataSentWaiters.count > 0, let sctp, sctp.unacknowledgedChunks == 0 else { return }
        dataSentWakeups += dataSentWaiters.count
        resumeDataSentWaiters(true)
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

    /// Every 20 ms while some track has missing packets (the tracker's reorder window and
    /// retry interval are multiples of it); stops itself when nothing is pending.
    func mediaNACKPending() {
        guard timers[.nack] == nil, !isFinished else { return }
        startRepeatingTimer(.nack, intervalMs: 20) { t in
            if t.state == .connected, t.receiver.sendNACKs(nowNanos: MonotonicClock.nanos()) { return true }
            t.receiver.nackTimerStopped()
            return false
        }
    }
}

import BedrudProtocol

// JSEP (RFC 8829) for one peer connection, as a value: descriptions, trickled candidates
// and transport events go in; what the shell must do to libnice, OpenSSL and usrsctp
// comes out. No sockets, clocks or randomness: ``PeerTransport`` performs the actions and
// feeds back what happened, and the tests replay transcripts.
//
//   answerer (LiveKit subscriber PC)      offerer (LiveKit publisher PC)
//   remoteOffer ─► createAgent, DTLS     createOffer ─► createAgent, offer text
//   createAnswer ─► answer text          remoteAnswer ─► DTLS role from a=setup
//   remoteCandidate (queued until the description its ufrag belongs to)
//   iceState connected + description handed out ─► startDTLS
//   dtlsConnected ─► connected, SCTP if the remote has a data section

/// Our ICE username fragment and password (RFC 8839 §5.4). The shell draws them at random
/// and installs them in libnice; the value writes them into descriptions.
public struct ICECredentials: Sendable, Equatable {
    public var ufrag: String
    public var password: String
    public init(ufrag: String, password: String) {
        self.ufrag = ufrag
        self.password = password
    }
}

/// The offer/answer, candidate and connection state of one peer connection.
///
/// Owned by the loop thread (inside ``PeerTransport``). Every decision lives here once:
/// which DTLS role we take, when DTLS may start, which candidates are added or queued,
/// when SCTP starts, and which timeout failed the connection.
struct PeerNegotiation {
    /// What happened: a call from the control plane, or a transport callback.
    enum Event: Equatable {
        /// A remote offer (first or re-offer). `freshCredentials` are used if this offer
        /// creates the agent or restarts ICE.
        case remoteOffer(SessionDescription, freshCredentials: ICECredentials)
        /// Write the answer to the last applied offer.
        case createAnswer
        /// Write an offer; `freshCredentials` are used on the first offer and on a restart.
        case createOffer(iceRestart: Bool, freshCredentials: ICECredentials)
        /// The answer to our offer.
        case remoteAnswer(SessionDescription)
        /// A trickled remote candidate (empty `candidate`: end of candidates).
        case remoteCandidate(ICECandidateInit)
        /// libnice gathered a local candidate (`candidate:…` or without the prefix).
        case localCandidate(String)
        case localGatheringDone
        case iceStateChanged(ICEConnectionState)
        /// The DTLS handshake finished; `srtp` when keys were exported and installed.
        case dtlsConnected(srtp: Bool)
        /// The connection failed (DTLS, SRTP or SCTP setup errors from the shell).
        case failed(PeerConnectionError)
        /// The connect timer fired.
        case connectTimeout
        case close
    }

    /// What the shell must do, in order.
    enum Action: Equatable {
        case createAgent(controlling: Bool, credentials: ICECredentials)
        case startGathering
        /// `nice_agent_restart_stream` with these new local credentials.
        case restartICE(ICECredentials)
        case setRemoteCredentials(ufrag: String, password: String)
        /// One validated remote candidate (`candidate:…`) for libnice.
        case addRemoteCandidate(String)
        case remoteGatheringDone
        case createDTLS(role: DTLSRole, remoteFingerprints: [DTLSFingerprint])
        /// The remote certificate may now be any of these (a re-offer before DTLS is up).
        case updateRemoteFingerprints([DTLSFingerprint])
        case startDTLS
        case startConnectTimer
        case cancelConnectTimer
        /// Start the SCTP association over DTLS.
        case startSCTP(remotePort: UInt16, isDTLSClient: Bool, remoteMaxMessageSize: Int?)
        case setRemoteMaxMessageSize(Int)
        /// Route packets for these tracks (the receiver's table).
        case setTracks([RemoteTrack])
        /// The description text the call returns (answer or offer).
        case localDescription(String)
        /// Start sending receiver reports and NACKs (SRTP keys are installed).
        case startMediaTimers
        /// The connection is up: wake the waiters.
        case connected
        /// The connection failed for good: cancel timers, wake waiters with the error.
        case failed(PeerConnectionError)
        /// Stop everything (DTLS close_notify, SCTP abort, agent closed).
        case close(wasFailed: Bool)
        case emit(PeerConnectionEvent)
    }

    enum Role: Equatable { case offerer, answerer }

    let policy: AnswerPolicy
    let sctpPort: UInt16
    let localFingerprint: DTLSFingerprint
    let sessionID: UInt64

    private(set) var state: PeerConnectionState = .new
    private(set) var failure: PeerConnectionError?
    private(set) var role: Role?
    private(set) var iceState: ICEConnectionState = .new
    private(set) var dtlsRole: DTLSRole?
    private(set) var localCredentials: ICECredentials?
    private(set) var remote: RemoteTransportParameters?
    private(set) var tracks: [RemoteTrack] = []
    /// Our offers carry the data section (mid 0) and these audio tracks.
    var offersData = true
    var localAudio: [LocalAudioTrack] = []
    /// What the last answer accepted for each published track (by mid); a missing mid was refused.
    private(set) var acceptedAudio: [String: LocalAudioTrack.Accepted] = [:]

    private var remoteAnswerApplied = false
    /// The last offer's answer, computed once when the offer is applied and handed out by
    /// `createAnswer`; with the candidates that were in it.
    private var pendingAnswer: (sdp: SessionDescription, candidatesInSDP: Int, endOfCandidatesInSDP: Bool)?
    /// Candidates waiting for a remote description (or for the restart their ufrag belongs to).
    private var pendingCandidates: [(candidate: String, ufrag: String?)] = []
    private var remoteEndOfCandidates = false
    private var localCandidates: [String] = []
    private var localGatheringDone = false
    /// True once a description with our credentials was handed out: candidates are trickled from then on.
    private var localDescriptionCreated = false
    private var candidateMid = "0"
    private var candidateMLineIndex = 0
    private var sessionVersion: UInt64 = 1
    private var dtlsStarted = false
    private var sctpStarted = false
    /// Bound on queued remote candidates (oldest dropped).
    static let maxPendingCandidates = 256

    init(policy: AnswerPolicy, sctpPort: UInt16, localFingerprint: DTLSFingerprint, sessionID: UInt64) {
        self.policy = policy
        self.sctpPort = sctpPort
        self.localFingerprint = localFingerprint
        self.sessionID = sessionID
    }

    var isFinished: Bool { state == .failed || state == .closed }

    // MARK: - Handle

    /// Applies one event. Calls that are refused (bad SDP, out of order, closed) throw and
    /// leave the value unchanged.
    mutating func handle(_ event: Event) throws(PeerConnectionError) -> [Action] {
        switch event {
        case .remoteOffer(let offer, let fresh): return try remoteOffer(offer, fresh: fresh)
        case .createAnswer: return try createAnswer()
        case .createOffer(let restart, let fresh): return try createOffer(iceRestart: restart, fresh: fresh)
        case .remoteAnswer(let answer): return try remoteAnswer(answer)
        case .remoteCandidate(let c): return try remoteCandidate(c)
        case .localCandidate(let c): return localCandidate(c)
        case .localGatheringDone: return localGatheringFinished()
        case .iceStateChanged(let s): return iceChanged(s)
        case .dtlsConnected(let srtp): return dtlsConnected(srtp: srtp)
        case .failed(let e): return fail(e)
        case .connectTimeout: return connectTimedOut()
        case .close: return close()
        }
    }

    // MARK: - Answerer

    private mutating func remoteOffer(_ offer: SessionDescription, fresh: ICECredentials) throws(PeerConnectionError) -> [Action] {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        guard role != .offerer else { throw PeerConnectionError(.wrongState("a remote offer arrived on a connection that made its own offer")) }
        let params: RemoteTransportParameters
        do {
            params = try RemoteTransportParameters(from: offer)
            if dtlsRole == nil { _ = try SDPNegotiation.answerSetup(for: params.setup) }
        } catch {
            throw PeerConnectionError(.invalidSDP(error))
        }
        var actions: [Action] = []
        var credentials = localCredentials ?? fresh
        let restart = remote.map { $0.iceUfrag != params.iceUfrag || $0.icePassword != params.icePassword } ?? false
        if restart { credentials = fresh }
        let ourRole = dtlsRole ?? (params.setup == .active ? .server : .client)
        let local = LocalTransportParameters(
            iceUfrag: credentials.ufrag, icePassword: credentials.password, fingerprint: localFingerprint,
            setup: ourRole == .client ? .active : .passive, candidates: localCandidates, endOfCandidates: localGatheringDone)
        let answer: SessionDescription
        let decisions: [SectionDecision]
        do {
            (answer, decisions) = try SDPNegotiation.answer(to: offer, local: local, policy: policy, sessionID: sessionID, sessionVersion: sessionVersion + 1)
        } catch {
            throw PeerConnectionError(.invalidSDP(error))
        }
        // Accepted: from here on the value changes.
        sessionVersion += 1
        role = .answerer
        if localCredentials == nil {
            actions.append(.createAgent(controlling: params.isICELite, credentials: credentials))
            actions.append(.startGathering)
        } else if restart {
            // libnice keeps the local candidates across a restart; only the credentials change.
            actions.append(.restartICE(credentials))
            remoteEndOfCandidates = false
        }
        localCredentials = credentials
        if remote == nil || restart {
            actions.append(.setRemoteCredentials(ufrag: params.iceUfrag, password: params.icePassword))
        }
        actions += setUpDTLS(role: ourRole, params)
        remote = params
        actions += addCandidates(of: params)
        actions += startSCTPIfNeeded()
        if let m = params.maxMessageSize, sctpStarted { actions.append(.setRemoteMaxMessageSize(m)) }

        if let first = decisions.first(where: { if case .rejected = $0.outcome { false } else { true } }) {
            candidateMid = first.mid ?? "0"
            candidateMLineIndex = first.index
        }
        pendingAnswer = (answer, localCandidates.count, localGatheringDone)

        let next = RemoteTrack.tracks(in: offer, decisions: decisions)
        let old = Set(tracks), new = Set(next)
        let added = next.filter { !old.contains($0) }
        let removed = tracks.filter { !new.contains($0) }
        tracks = next
        actions.append(.setTracks(next))
        if !added.isEmpty || !removed.isEmpty { actions.append(.emit(.tracksChanged(added: added, removed: removed))) }
        return actions
    }

    private mutating func createAnswer() throws(PeerConnectionError) -> [Action] {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        guard role == .answerer, let answer = pendingAnswer else {
            throw PeerConnectionError(.wrongState("createAnswer() before setRemoteOffer()"))
        }
        // Every answer lists the candidates gathered so far: those gathered since its offer
        // was applied are added to the section that carries the transport (after the first
        // answer they were trickled too; pion and aioice ignore duplicates).
        var sdp = answer.sdp
        sdp.appendCandidates(
            Array(localCandidates.dropFirst(answer.candidatesInSDP)),
            endOfCandidates: localGatheringDone && !answer.endOfCandidatesInSDP, section: candidateMLineIndex)
        localDescriptionCreated = true
        var actions: [Action] = [.localDescription(sdp.text)]
        actions += startConnecting()
        return actions
    }

    // MARK: - Offerer

    private mutating func createOffer(iceRestart: Bool, fresh: ICECredentials) throws(PeerConnectionError) -> [Action] {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        guard role != .answerer else { throw PeerConnectionError(.wrongState("createOffer() on a connection that answers remote offers")) }
        role = .offerer
        var actions: [Action] = []
        if localCredentials == nil {
            localCredentials = fresh
            actions.append(.createAgent(controlling: true, credentials: fresh))
            actions.append(.startGathering)
        } else if iceRestart, remote != nil {
            localCredentials = fresh
            actions.append(.restartICE(fresh))
            remoteAnswerApplied = false
            remoteEndOfCandidates = false
        }
        let creds = localCredentials ?? fresh
        let local = LocalTransportParameters(
            iceUfrag: creds.ufrag, icePassword: creds.password, fingerprint: localFingerprint,
            setup: dtlsRole.map { $0 == .client ? .active : .passive } ?? .actpass,
            candidates: localCandidates, endOfCandidates: localGatheringDone)
        sessionVersion += 1
        let offer = SDPNegotiation.publisherOffer(
            data: offersData, audio: localAudio, local: local, maxMessageSize: policy.maxMessageSize,
            sctpPort: sctpPort, sessionID: sessionID, sessionVersion: sessionVersion)
        candidateMid = offer.media.first?.mid ?? "0"
        candidateMLineIndex = 0
        // Every candidate gathered so far is in the offer; later ones are trickled.
        localDescriptionCreated = true
        actions.append(.localDescription(offer.text))
        return actions
    }

    private mutating func remoteAnswer(_ answer: SessionDescription) throws(PeerConnectionError) -> [Action] {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        guard role == .offerer, localCredentials != nil else { throw PeerConnectionError(.wrongState("setRemoteAnswer() before createOffer()")) }
        let params: RemoteTransportParameters
        do { params = try RemoteTransportParameters(from: answer) } catch { throw PeerConnectionError(.invalidSDP(error)) }
        // RFC 5763 §5: the answerer picks; `active` (pion's and LiveKit's) makes us the server.
        let ourRole: DTLSRole
        if let dtlsRole {
            ourRole = dtlsRole
        } else {
            switch params.setup {
            case .active, .actpass: ourRole = .server
            case .passive: ourRole = .client
            case .holdconn: throw PeerConnectionError(.invalidSDP(SDPError(.unsupportedSetup)))
            }
        }
        var actions: [Action] = [.setRemoteCredentials(ufrag: params.iceUfrag, password: params.icePassword)]
        actions += setUpDTLS(role: ourRole, params)
        remote = params
        remoteAnswerApplied = true
        acceptedAudio = [:]
        for t in localAudio { if let a = t.accepted(in: answer) { acceptedAudio[t.mid] = a } }
        actions += addCandidates(of: params)
        actions += startSCTPIfNeeded()
        actions += startConnecting()
        return actions
    }

    // MARK: - Shared transport setup

    /// Creates the DTLS transport on the first description; later ones may only update
    /// the fingerprints before the handshake is done.
    private mutating func setUpDTLS(role ourRole: DTLSRole, _ params: RemoteTransportParameters) -> [Action] {
        if dtlsRole == nil {
            dtlsRole = ourRole
            return [.createDTLS(role: ourRole, remoteFingerprints: params.fingerprints)]
        }
        if state != .connected, let remote, remote.fingerprints != params.fingerprints {
            return [.updateRemoteFingerprints(params.fingerprints)]
        }
        return []
    }

    /// The description's own candidates, then the queued ones that belong to it.
    private mutating func addCandidates(of params: RemoteTransportParameters) -> [Action] {
        var actions: [Action] = params.candidates.compactMap { Self.validated($0.candidate).map(Action.addRemoteCandidate) }
        let queued = pendingCandidates
        pendingCandidates.removeAll()
        for c in queued where c.ufrag == nil || c.ufrag == params.iceUfrag { actions.append(.addRemoteCandidate(c.candidate)) }
        if params.endOfCandidates || remoteEndOfCandidates {
            remoteEndOfCandidates = true
            actions.append(.remoteGatheringDone)
        }
        return actions
    }

    private static func validated(_ c: String) -> String? {
        guard let parsed = try? ICECandidate(parsing: c), parsed.component == 1 else { return nil }
        return parsed.candidateString
    }

    // MARK: - Trickle

    private mutating func remoteCandidate(_ c: ICECandidateInit) throws(PeerConnectionError) -> [Action] {
        guard !isFinished else { throw PeerConnectionError(.closed) }
        if c.isEndOfCandidates {
            remoteEndOfCandidates = true
            return remote != nil && localCredentials != nil ? [.remoteGatheringDone] : []
        }
        let parsed: ICECandidate
        do { parsed = try ICECandidate(parsing: c.candidate) } catch { throw PeerConnectionError(.invalidCandidate(error)) }
        guard parsed.component == 1 else { return [] }  // rtcp-mux: component 2 is never used
        let ufrag = c.usernameFragment ?? parsed.extensions["ufrag"]
        // Before a remote description, or for credentials we have not seen yet (a restart's
        // candidates can overtake its offer): keep it until the description arrives.
        let waiting = remote == nil || (role == .offerer && !remoteAnswerApplied) || (ufrag != nil && ufrag != remote?.iceUfrag)
        if waiting {
            if pendingCandidates.count >= Self.maxPendingCandidates { pendingCandidates.removeFirst() }
            pendingCandidates.append((parsed.candidateString, ufrag))
            return []
        }
        return [.addRemoteCandidate(parsed.candidateString)]
    }

    private mutating func localCandidate(_ c: String) -> [Action] {
        guard !isFinished else { return [] }
        localCandidates.append(c)
        return localDescriptionCreated ? [candidateEvent(c)] : []
    }

    private mutating func localGatheringFinished() -> [Action] {
        guard !isFinished else { return [] }
        localGatheringDone = true
        return localDescriptionCreated ? [.emit(.localCandidatesComplete)] : []
    }

    private func candidateEvent(_ c: String) -> Action {
        .emit(.localCandidate(ICECandidateInit(
            candidate: c.hasPrefix("candidate:") ? c : "candidate:" + c, sdpMid: candidateMid,
            sdpMLineIndex: candidateMLineIndex, usernameFragment: localCredentials?.ufrag)))
    }

    // MARK: - Connecting

    private mutating func startConnecting() -> [Action] {
        var actions: [Action] = []
        if state == .new {
            state = .connecting
            actions.append(.startConnectTimer)
        }
        return actions + maybeStartDTLS()
    }

    /// DTLS starts once ICE is up and both descriptions are in place.
    private mutating func maybeStartDTLS() -> [Action] {
        guard !dtlsStarted, dtlsRole != nil, iceState == .connected || iceState == .completed else { return [] }
        guard role == .offerer ? remoteAnswerApplied : localDescriptionCreated else { return [] }
        dtlsStarted = true
        return [.startDTLS, .emit(.dtlsStateChanged(.connecting))]
    }

    private mutating func iceChanged(_ s: ICEConnectionState) -> [Action] {
        guard !isFinished else { return [] }
        iceState = s
        var actions: [Action] = [.emit(.iceStateChanged(s))]
        switch s {
        case .connected, .completed: actions += maybeStartDTLS()
        case .failed: actions += fail(PeerConnectionError(.ice(ICEError(.failed))))
        default: break
        }
        return actions
    }

    private mutating func dtlsConnected(srtp: Bool) -> [Action] {
        guard !isFinished else { return [] }
        if !srtp && !tracks.isEmpty {
            return fail(PeerConnectionError(.dtls(DTLSError(.handshake("the peer negotiated no SRTP profile")))))
        }
        state = .connected
        var actions: [Action] = [.cancelConnectTimer, .emit(.dtlsStateChanged(.connected)), .connected]
        if srtp { actions.append(.startMediaTimers) }
        return actions + startSCTPIfNeeded()
    }

    /// SCTP starts once DTLS is up and the remote description has a data section (the
    /// first one, or a later re-offer/answer that adds it).
    private mutating func startSCTPIfNeeded() -> [Action] {
        guard !sctpStarted, state == .connected, let dtlsRole, let port = remote?.sctpPort else { return [] }
        sctpStarted = true
        return [.startSCTP(remotePort: port, isDTLSClient: dtlsRole == .client, remoteMaxMessageSize: remote?.maxMessageSize)]
    }

    private mutating func connectTimedOut() -> [Action] {
        guard state == .connecting else { return [] }
        if iceState == .connected || iceState == .completed {
            return fail(PeerConnectionError(.dtls(DTLSError(.timeout))))
        }
        return fail(PeerConnectionError(.ice(ICEError(.timeout))))
    }

    // MARK: - Failure and close

    private mutating func fail(_ e: PeerConnectionError) -> [Action] {
        guard !isFinished else { return [] }
        state = .failed
        failure = e
        return [.failed(e)]
    }

    private mutating func close() -> [Action] {
        guard state != .closed else { return [] }
        let wasFailed = state == .failed
        state = .closed
        return [.close(wasFailed: wasFailed)]
    }
}

extension SessionDescription {
    /// Adds local candidates (and `a=end-of-candidates`) to section `index`, after the
    /// candidates it already has.
    mutating func appendCandidates(_ candidates: [String], endOfCandidates: Bool, section index: Int) {
        guard media.indices.contains(index), !candidates.isEmpty || endOfCandidates else { return }
        var attrs = media[index].attributes
        let eoc = attrs.firstIndex { $0.name == "end-of-candidates" }
        let at = eoc ?? attrs.endIndex
        attrs.insert(contentsOf: candidates.map { SDPAttribute("candidate", SDPNegotiation.stripCandidatePrefix($0)) }, at: at)
        if endOfCandidates && eoc == nil { attrs.append(SDPAttribute("end-of-candidates")) }
        media[index].attributes = attrs
    }
}

import BedrudProtocol
import BedrudRTC

// Signalling messages: the first-message rules (livekit-protocol.md §1.6), join and
// resume, leave (§5.4), and the dispatch of everything else.

extension RoomState {
    enum LeaveDecision: Equatable {
        case disconnect(RoomDisconnectReason)
        case resume
        case full
    }

    mutating func signalMessage(_ message: LiveKit.SignalResponse) {
        guard signal == .open || signal == .ready else {
            stats.unexpectedSignalMessages += 1
            return
        }
        lastMessageAt = now
        if signal == .open {
            firstMessage(message)
        } else {
            regularMessage(message)
        }
    }

    // MARK: - First message

    mutating func firstMessage(_ message: LiveKit.SignalResponse) {
        switch phase {
        case .joining(let attempt):
            disarm(.firstMessage)
            switch message.message {
            case .join(let join):
                guard join.participant != nil else {
                    stats.unexpectedSignalMessages += 1
                    noteServerProblem("a join response without our participant")
                    closeSignal()
                    attemptFailed(.protocolViolation)
                    return
                }
                signal = .ready
                handleJoin(join, rejoin: attempt.reconnect)
            case .leave(let leave):
                closeSignal()
                if attempt.reconnect {
                    switch leaveDecision(leave) {
                    case .disconnect(let reason): disconnect(reason, sendLeave: false)
                    case .resume, .full: nextReconnectAttempt(.full, immediate: true)
                    }
                } else {
                    // The join failed (room full, …): final for a first join.
                    let reason = leave.reason == .unknownReason ? .joinFailure : RoomDisconnectReason(serverReason: leave.reason)
                    disconnect(reason, sendLeave: false)
                }
            default:
                stats.unexpectedSignalMessages += 1
                noteServerProblem("a first message that is neither join nor leave (\(message.message.map(\.name) ?? "empty"))")
                closeSignal()
                attemptFailed(.protocolViolation)
            }

        case .resuming:
            disarm(.firstMessage)
            switch message.message {
            case .reconnect(let response):
                signal = .ready
                handleResumed(response)
            case .leave(let leave):
                // Resume refused (the server lost our session: STATE_MISMATCH).
                closeSignal()
                switch leaveDecision(leave) {
                case .disconnect(let reason) where leave.reason != .stateMismatch: disconnect(reason, sendLeave: false)
                case .disconnect, .full: nextReconnectAttempt(.full, immediate: true)
                case .resume: nextReconnectAttempt(.resume, immediate: true)
                }
            default:
                // Very old servers resume without a ReconnectResponse (JS does the same).
                signal = .ready
                handleResumed(nil)
                regularMessage(message)
            }

        case .idle, .connected, .disconnected:
            stats.unexpectedSignalMessages += 1
        }
    }

    mutating func handleJoin(_ join: LiveKit.JoinResponse, rejoin: Bool) {
        // We receive on the subscriber connection only; with the publisher primary no
        // offer would ever come. Say so instead of waiting for the transport timeout.
        if configuration.waitForTransport && !join.subscriberPrimary {
            disconnect(.subscriberNotPrimary(canSubscribe: join.participant?.permission?.canSubscribe ?? true), sendLeave: true)
            return
        }
        serverInfo = join.serverInfo ?? serverInfo
        clientConfiguration = join.clientConfiguration
        pingIntervalMs = Int64(max(0, join.pingInterval)) * 1000
        pingTimeoutMs = Int64(max(0, join.pingTimeout)) * 1000
        if let r = join.room { room = MeetingRoom(r) }

        if let info = join.participant { becomeLocal(info) }
        if rejoin { clearSpeakers() }
        emit(.roomJoined(room, local: localParticipant ?? MeetingParticipant(identity: "", sid: "")))
        // A new server session knows none of our track settings: turn video off again.
        disabledTrackSids = []
        videoSweepPending = true
        replaceRoster(join.otherParticipants)

        // A new session: negotiation starts over on new peer connections.
        pendingOfferIDs = []
        lastRemoteOffer = nil
        lastLocalAnswer = nil
        nextLocalOfferID = 0
        dataChannels = []
        publishedTracks = [:]
        closeTransports()
        let config = TransportConfiguration(
            iceServers: join.iceServers, forceRelay: join.clientConfiguration?.forceRelay == .enabled,
            subscriberPrimary: join.subscriberPrimary)
        transportConfiguration = config
        transportStates = [:]
        primaryEverConnected = false
        remoteCandidates = RemoteCandidateCount()
        output.append(.createTransports(config))

        flushQueue(keepNegotiation: false)
        startKeepalive()
        if configuration.waitForTransport {
            setStep(.awaitingTransport)
            arm(.transportConnect, afterMs: configuration.transportTimeoutMs)
        } else {
            completeConnection()
        }
    }

    mutating func handleResumed(_ response: LiveKit.ReconnectResponse?) {
        if let response {
            if !response.iceServers.isEmpty {
                transportConfiguration?.iceServers = response.iceServers
                output.append(.updateICEServers(response.iceServers))
            }
            clientConfiguration = response.clientConfiguration ?? clientConfiguration
            serverInfo = response.serverInfo ?? serverInfo
        }
        output.append(.send(.syncState(syncState)))
        flushQueue(keepNegotiation: true)
        if !publishedTracks.isEmpty { output.append(.restartICE(.publisher)) }
        startKeepalive()
        let primaryUp = transportConfiguration.map { transportStates[$0.primary] == .connected } ?? false
        if primaryUp || !configuration.waitForTransport {
            completeConnection()
        } else {
            // The server re-offers at once after a resume; a primary connection that is
            // still down a few seconds later will not come back (the server may have lost
            // its side): a full rejoin is quicker than the first join's long wait.
            setStep(.awaitingTransport)
            arm(.transportConnect, afterMs: min(configuration.resumeTransportTimeoutMs, configuration.transportTimeoutMs))
        }
    }

    // MARK: - Leave

    /// What a server `leave` asks for. `action` defaults to DISCONNECT (0), so it is
    /// trusted only when the server speaks protocol >= 13 or sends a non-zero action;
    /// otherwise `can_reconnect` decides (true ⇒ full rejoin). livekit-protocol.md §5.4.
    func leaveDecision(_ leave: LiveKit.LeaveRequest) -> LeaveDecision {
        let reason = RoomDisconnectReason(serverReason: leave.reason)
        let serverProtocol = serverInfo?.protocol ?? 0
        let actionTrusted = leave.action != .disconnect
            || (serverProtocol >= 13 && configuration.announcedProtocol >= 13)
        if actionTrusted {
            switch leave.action {
            case .disconnect: return .disconnect(reason)
            case .resume: return .resume
            case .reconnect: return .full
            case .unrecognized: break
            }
        }
        return leave.canReconnect ? .full : .disconnect(reason)
    }

    mutating func handleServerLeave(_ leave: LiveKit.LeaveRequest) {
        let decision = leaveDecision(leave)
        if case .disconnect(let reason) = decision {
            disconnect(reason, sendLeave: false)
            return
        }
        let mode: ReconnectMode = decision == .resume ? .resume : .full
        switch phase {
        case .connected:
            startReconnect(mode, reason: .unknown, immediate: true, sendLeave: false)
        case .joining(let a) where !a.reconnect:
            closeSignal()
            attemptFailed(.signalLost)
        case .joining, .resuming:
            nextReconnectAttempt(mode, immediate: true)
        case .idle, .disconnected:
            break
        }
    }

    // MARK: - Everything else

    mutating func regularMessage(_ message: LiveKit.SignalResponse) {
        switch message.message {
        case .join, .reconnect:
            stats.unexpectedSignalMessages += 1
        case .answer(let answer):
            output.append(.applyRemoteAnswer(answer, target: .publisher))
        case .offer(let offer):
            // Every offer is handed out and must be answered with its id (§7.1).
            if offer.sdp.contains("a=candidate:") { remoteCandidates.usable += 1 }
            pendingOfferIDs.insert(offer.id)
            lastRemoteOffer = offer
            output.append(.applyRemoteOffer(offer, target: .subscriber))
        case .trickle(let trickle):
            // A candidate that does not parse is dropped here, counted: when ICE then never
            // connects, garbage from the server is the reason, not the network.
            if let candidate = ICECandidateInit(json: trickle.candidateInit),
               candidate.isEndOfCandidates || (try? ICECandidate(parsing: candidate.candidate)) != nil {
                if !candidate.isEndOfCandidates { remoteCandidates.usable += 1 }
                output.append(.addRemoteCandidate(candidate, target: trickle.target))
            } else {
                stats.invalidCandidates += 1
                remoteCandidates.invalid += 1
            }
        case .update(let update):
            for info in update.participants { applyParticipantInfo(info) }
        case .trackPublished(let published):
            publishedTracks[published.cid] = published
            if let track = published.track { emit(.localTrackPublished(cid: published.cid, MeetingTrack(track))) }
        case .trackUnpublished(let unpublished):
            publishedTracks = publishedTracks.filter { $0.value.track?.sid != unpublished.trackSid }
            emit(.localTrackUnpublished(sid: unpublished.trackSid))
        case .leave(let leave):
            handleServerLeave(leave)
        case .mute(let mute):
            output.append(.setLocalTrackMuted(sid: mute.sid, muted: mute.muted))
            emit(.localTrackMutedByServer(sid: mute.sid, muted: mute.muted))
        case .speakersChanged(let changed):
            applySpeakers(changed.speakers, fullList: false)
        case .roomUpdate(let update):
            if let r = update.room { applyRoom(r) }
        case .connectionQuality(let quality):
            applyConnectionQuality(quality.updates)
        case .streamStateUpdate(let update):
            applyStreamStates(update.streamStates)
        case .subscriptionPermissionUpdate(let update):
            applySubscriptionPermission(update)
        case .refreshToken(let newToken):
            if !newToken.isEmpty { token = newToken }
        case .pongResp(let pong):
            if pong.lastPingTimestamp > 0, pong.lastPingTimestamp <= now.milliseconds {
                rttMs = now.milliseconds - pong.lastPingTimestamp
            }
        case .subscriptionResponse(let response):
            emit(.trackSubscriptionFailed(trackSid: response.trackSid, error: response.err))
        case .roomMoved(let moved):
            handleRoomMoved(moved)
        case .requestResponse(let response):
            // OK and QUEUED are not failures; anything else is, and the caller must hear it.
            if response.reason != .ok && response.reason != .queued { emit(.requestRefused(RefusedRequest(response))) }
        case .pong, .trackSubscribed, .subscribedQualityUpdate, .mediaSectionsRequirement:
            break  // liveness only, or publisher/single-PC concerns
        case .unknown, nil:
            stats.unknownSignalMessages += 1
        }
    }

    mutating func handleRoomMoved(_ moved: LiveKit.RoomMovedResponse) {
        if !moved.token.isEmpty { token = moved.token }
        if let r = moved.room { room = MeetingRoom(r) }
        if let info = moved.participant { becomeLocal(info) }
        clearSpeakers()
        emit(.roomMoved(room))
        replaceRoster(moved.otherParticipants)
    }

    /// Our own participant from `join` or `room_moved`. An identity is never both us
    /// and a remote participant.
    mutating func becomeLocal(_ info: LiveKit.ParticipantInfo) {
        if let old = localParticipant, old.sid != info.sid { retire(old.sid) }
        localParticipant = MeetingParticipant(info, isLocal: true)
        if remoteParticipants[info.identity] != nil {
            removeParticipant(info.identity, reason: .absentAfterRejoin)
        }
    }
}

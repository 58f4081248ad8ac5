import BedrudProtocol

// The vocabulary of RoomState: inputs the owner feeds in, actions it must perform,
// events it publishes, timers it must run. The contract is documented in
// RoomState.swift.

/// A point on the owner's monotonic clock, in milliseconds. Only differences matter.
public struct RoomInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func ms(_ value: Int64) -> RoomInstant { RoomInstant(milliseconds: value) }

    public func advanced(byMilliseconds delta: Int64) -> RoomInstant {
        RoomInstant(milliseconds: milliseconds &+ delta)
    }

    public static func < (a: RoomInstant, b: RoomInstant) -> Bool { a.milliseconds < b.milliseconds }

    public var description: String { "\(milliseconds)ms" }
}

/// The timers RoomState asks its owner to run. At most one of each kind is pending:
/// starting one replaces the earlier deadline.
public enum RoomTimer: Sendable, Hashable, CaseIterable {
    /// WebSocket upgrade must finish (`signalConnected` / `signalConnectFailed`).
    case signalHandshake
    /// The first message (`join` / `reconnect`) must arrive after the upgrade.
    case firstMessage
    /// The primary peer connection must connect after join or resume.
    case transportConnect
    /// Time to send `ping` + `ping_req`.
    case ping
    /// No message for `ping_timeout` seconds ⇒ the signal connection is dead.
    case pingTimeout
    /// Wait before the next reconnect or join attempt.
    case retry
    /// The Bedrud API must answer `fetchJoinToken`.
    case tokenFetch
    /// The primary peer connection failed while signalling is up: the server may be
    /// ending the session (it closes DTLS right after its `leave`), so the signal
    /// channel gets a moment to say why before we reconnect.
    case transportGrace
    /// The reconnect episode's deadline (`maxOutageMs` after the connection was lost):
    /// when it fires while still reconnecting, the session ends with `network`.
    case outage
}

/// Which kind of reconnect is under way (livekit-protocol.md §5.2, §5.3).
public enum ReconnectMode: Sendable, Equatable {
    /// Same session: `reconnect=1&sid=…`; peer connections are kept.
    case resume
    /// New session: fresh token, new participant SID, new peer connections.
    case full
}

/// How a reconnect ended well.
public enum ReconnectOutcome: Sendable, Equatable {
    /// Same participant SID, same peer connections.
    case resumed
    /// Joined again as a new session (new SID, new peer connections).
    case rejoined
}

/// The room's connection state as observers see it.
public enum RoomConnectionState: Sendable, Equatable {
    case idle
    /// First join in progress (including its retries).
    case connecting
    case connected
    case reconnecting(ReconnectMode, attempt: Int)
    case disconnected(RoomDisconnectReason)
}

/// Why the room ended for us. `kicked` is LiveKit's PARTICIPANT_REMOVED, which is how
/// Bedrud's kick and ban reach the removed client (bedrud-api.md §3.4).
public enum RoomDisconnectReason: Sendable, Equatable, CustomStringConvertible {
    /// We left (`leave` input).
    case left
    /// PARTICIPANT_REMOVED: a moderator kicked or banned us.
    case kicked
    case roomDeleted
    /// ROOM_CLOSED: the server closed the room (e.g. only dependent participants left).
    case roomClosed
    /// Another connection with our identity replaced us.
    case duplicateIdentity
    /// The server's own `leave` JOIN_FAILURE: the upgrade worked, then the join was refused
    /// (room full, never became active, …).
    case joinFailure
    /// LiveKit refused the `/rtc` WebSocket upgrade with this HTTP status and the join
    /// ended there: 403 (this join is not allowed), 400 and other 4xx (the request as
    /// given), a 404 without LiveKit's "requested room does not exist", 5xx after the
    /// retry, or any other answer than 101. 401 is ``notAllowed``; LiveKit's 404 is
    /// ``roomNotFound``.
    case refused(status: Int)
    case serverShutdown
    /// The token was rejected (401/403), or Bedrud refused a new one.
    case notAllowed
    /// `requested room does not exist` (the server does not auto-create it).
    case roomNotFound
    /// Bedrud says the meeting has ended (410 "room is no longer active": the idle sweep or
    /// LiveKit's room_finished made the room inactive) and no new one was started.
    case roomEnded
    /// Bedrud refused a fresh token with 403: a private room that no longer admits the
    /// bot (it was an active participant only until it dropped), or a ban.
    case forbidden
    /// The connection could not be kept or re-established within the retry schedule
    /// (the first join's retries, or `maxOutageMs` of a reconnect episode); the cause is
    /// what the last attempt ran into.
    case network(NetworkCause)
    /// The server broke the protocol (e.g. a first message that is neither join nor leave).
    case protocolError
    /// The join made the publisher connection primary (`subscriber_primary` false), so no
    /// subscriber offer would come and the bot would wait in silence. `canSubscribe` false:
    /// the token may not subscribe. Otherwise the server wants one peer connection
    /// (`/rtc/v1`), which this client does not speak: it stays on `/rtc` (v0) with a
    /// subscriber connection that receives everything (docs/ARCHITECTURE.md).
    case subscriberNotPrimary(canSubscribe: Bool)
    /// Any other server-side reason.
    case server(LiveKit.DisconnectReason)

    /// The reason a server `leave` (action DISCONNECT) carries, in our terms.
    public init(serverReason reason: LiveKit.DisconnectReason) {
        switch reason {
        case .clientInitiated: self = .left
        case .participantRemoved: self = .kicked
        case .roomDeleted: self = .roomDeleted
        case .roomClosed: self = .roomClosed
        case .duplicateIdentity: self = .duplicateIdentity
        case .joinFailure: self = .joinFailure
        case .serverShutdown: self = .serverShutdown
        default: self = .server(reason)
        }
    }

    public var description: String {
        switch self {
        case .left: "left"
        case .kicked: "kicked"
        case .roomDeleted: "room deleted"
        case .roomClosed: "room closed"
        case .duplicateIdentity: "duplicate identity"
        case .joinFailure: "join failure"
        case .refused(let status): "refused with HTTP \(status)"
        case .serverShutdown: "server shutdown"
        case .notAllowed: "not allowed"
        case .roomNotFound: "room not found"
        case .roomEnded: "room ended"
        case .forbidden: "forbidden"
        case .network: "network"
        case .protocolError: "protocol error"
        case .subscriberNotPrimary(let canSubscribe): canSubscribe ? "subscriber not primary" : "cannot subscribe"
        case .server(let reason): "server: \(reason)"
        }
    }
}

/// Why a remote participant is gone.
public enum ParticipantLeaveReason: Sendable, Equatable {
    /// The server said so (`update` with state DISCONNECTED and its `disconnect_reason`).
    case disconnected(LiveKit.DisconnectReason)
    /// Not in the room any more after our full rejoin or room move (left while we were away).
    case absentAfterRejoin
}

/// How a WebSocket upgrade failed, classified by the owner from the handshake and, if
/// needed, `/rtc/validate` (livekit-protocol.md §1.4).
public enum SignalConnectFailure: Sendable, Equatable {
    /// 401: the token is invalid or expired (LiveKit's auth middleware and grant checks).
    case unauthorized(status: Int)
    /// 403: LiveKit does not allow this join (a permission its session start denied).
    case forbidden
    /// 404 with `requested room does not exist`.
    case roomNotFound
    /// Any other HTTP status (400, other 4xx, a 404 without LiveKit's text, 5xx, 200).
    case rejected(status: Int)
    /// No answer, connection refused, DNS, TLS failure, timeout: which one is the cause.
    case unreachable(NetworkCause)
}

/// What a failed connection attempt ran into, so a final message can name the real
/// cause instead of a guess. The last attempt of a reconnect episode decides it.
public enum NetworkCause: Sendable, Equatable, CustomStringConvertible {
    /// TCP connection refused: nothing listens on the port (the server is down).
    case refused
    /// The host name did not resolve.
    case dns
    /// The TLS handshake failed or the certificate was not trusted.
    case tls
    /// No answer in time (TCP connect, WebSocket upgrade, first message).
    case timeout
    /// Host unreachable, connection reset or closed, other socket errors.
    case unreachable
    /// The server answered the upgrade with this HTTP status (e.g. 502 from a proxy).
    case rejected(status: Int)
    /// The signalling connection dropped or went silent (ping timeout).
    case signalLost
    /// The media connection (ICE/DTLS, possibly via TURN) failed or did not connect.
    case ice

    public var description: String {
        switch self {
        case .refused: "connection refused"
        case .dns: "DNS lookup failed"
        case .tls: "TLS handshake failed"
        case .timeout: "timed out"
        case .unreachable: "host unreachable"
        case .rejected(let status): "refused with HTTP \(status)"
        case .signalLost: "signalling connection lost"
        case .ice: "media connection (ICE/TURN) failed"
        }
    }
}

/// State of one of our peer connections, as the WebRTC layer reports it.
public enum TransportState: Sendable, Equatable {
    case new, connecting, connected, disconnected, failed, closed
}

/// What the owner needs to open the signalling WebSocket. The owner builds the URL
/// (livekit-protocol.md §1.1–§1.2) from its LiveKit host plus these values.
public struct SignalConnectRequest: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public enum Mode: Sendable, Equatable {
        /// A fresh join (no `reconnect`).
        case join
        /// `reconnect=1&sid=<participantSid>&reconnect_reason=<reason>`.
        case resume(participantSid: String, reason: LiveKit.ReconnectReason)
    }

    /// The newest LiveKit token (secret: never logged).
    public var token: String
    public var mode: Mode

    public init(token: String, mode: Mode) {
        self.token = token
        self.mode = mode
    }

    public var description: String { "SignalConnectRequest(\(mode), token: \(Redact.mask))" }
    public var debugDescription: String { description }
}

/// What the WebRTC layer needs to create the peer connections after a join.
public struct TransportConfiguration: Sendable, Equatable, CustomStringConvertible {
    public var iceServers: [LiveKit.ICEServer]
    /// `client_configuration.force_relay == ENABLED`: relay-only ICE.
    public var forceRelay: Bool
    /// True (the normal case): the server offers on the SUBSCRIBER PC, which is primary.
    public var subscriberPrimary: Bool

    public init(iceServers: [LiveKit.ICEServer], forceRelay: Bool, subscriberPrimary: Bool) {
        self.iceServers = iceServers
        self.forceRelay = forceRelay
        self.subscriberPrimary = subscriberPrimary
    }

    /// The PC whose connection makes the session connected.
    public var primary: LiveKit.SignalTarget { subscriberPrimary ? .subscriber : .publisher }

    public var description: String {
        "TransportConfiguration(iceServers: \(iceServers.count), forceRelay: \(forceRelay), subscriberPrimary: \(subscriberPrimary))"
    }
}

/// Inputs, in the order they happened. See the contract in RoomState.swift.
public enum RoomInput: Sendable {
    // Commands from the owner
    /// Start a fresh join with a LiveKit token from Bedrud's `/room/join`.
    case connect(token: String)
    /// Leave gracefully.
    case leave
    /// Send an application request (subscription, track settings, mute, metadata, …);
    /// held back (bounded) while the signal connection is not ready.
    case sendRequest(LiveKit.SignalRequest)

    // Signalling WebSocket
    case signalConnected
    case signalConnectFailed(SignalConnectFailure)
    /// One binary WebSocket message, not yet decoded.
    case signalData([UInt8])
    /// One decoded message (equivalent to `signalData` of its bytes).
    case signalMessage(LiveKit.SignalResponse)
    /// The socket ended (error, close frame, EOF).
    case signalClosed

    // Bedrud API (answers to `fetchJoinToken`)
    case joinTokenReceived(String)
    /// `permanent`: Bedrud refused (403, room gone, banned); else a transient failure.
    case joinTokenFailed(permanent: Bool)
    /// Bedrud refused a fresh token for good, and why the room therefore ends
    /// (`.roomEnded` for a 410, `.forbidden` for a private room or a ban, …).
    case joinTokenRefused(RoomDisconnectReason)

    // Peer connections
    case transportStateChanged(LiveKit.SignalTarget, TransportState)
    /// The answer to server offer `offerID` (from `applyRemoteOffer`).
    case answerCreated(sdp: String, offerID: UInt32)
    /// Our own PUBLISHER offer (publishing).
    case offerCreated(sdp: String)
    /// An offer/answer could not be applied.
    case negotiationFailed(LiveKit.SignalTarget)
    /// A server offer could not be applied or answered (no fingerprint, broken SDP);
    /// `reason` says why, in the WebRTC layer's words.
    case offerUnanswerable(LiveKit.SignalTarget, reason: String)
    case localCandidate(ICECandidateInit, LiveKit.SignalTarget)
    case dataChannelOpened(LiveKit.DataChannelInfo)
    /// One message from `_reliable` (`reliable: true`) or `_lossy`.
    case dataReceived([UInt8], reliable: Bool)

    // Timers
    case timerFired(RoomTimer)
}

/// What the owner must do, in order.
public enum RoomAction: Sendable, Equatable {
    /// Open the signalling WebSocket (closing any earlier one first).
    case openSignal(SignalConnectRequest)
    /// Close the signalling WebSocket (code 1000) after flushing earlier sends.
    case closeSignal
    /// Send one binary message on the current WebSocket.
    case send(LiveKit.SignalRequest)
    /// Ask Bedrud's API for a fresh LiveKit token (`/room/refresh-token`), answer with
    /// `joinTokenReceived`, `joinTokenFailed` or `joinTokenRefused`.
    case fetchJoinToken
    /// Run `timer`: deliver `timerFired(timer)` at `deadline` plus a random delay of up
    /// to `jitterMs`. Replaces a pending timer of the same kind.
    case startTimer(RoomTimer, deadline: RoomInstant, jitterMs: Int64)
    case cancelTimer(RoomTimer)
    /// Create the peer connections for a (re)joined session.
    case createTransports(TransportConfiguration)
    /// Apply fresh ICE servers to the existing peer connections (after a resume).
    case updateICEServers([LiveKit.ICEServer])
    /// Close all peer connections (full rejoin or disconnect). Deliver no more events
    /// from them afterwards.
    case closeTransports
    /// Set this server offer as remote description and answer it with
    /// `answerCreated(sdp:offerID: offer.id)`. Every offer, forever.
    case applyRemoteOffer(LiveKit.SessionDescription, target: LiveKit.SignalTarget)
    /// Set this server answer to our offer as remote description.
    case applyRemoteAnswer(LiveKit.SessionDescription, target: LiveKit.SignalTarget)
    /// Add a remote candidate (queue it until a remote description is set).
    case addRemoteCandidate(ICECandidateInit, target: LiveKit.SignalTarget)
    /// Restart ICE on our PUBLISHER PC (after a resume, when publishing).
    case restartICE(LiveKit.SignalTarget)
    /// The server muted (or unmuted) one of our published tracks.
    case setLocalTrackMuted(sid: String, muted: Bool)
    /// Publish this event to the room's observers.
    case emit(RoomEvent)
}

/// What happened in the room, for the recorder and the transcript.
public enum RoomEvent: Sendable, Equatable {
    /// The `join` arrived: the room and our own participant. The remote participants
    /// already present follow as `participantJoined`.
    case roomJoined(MeetingRoom, local: MeetingParticipant)
    /// The session is up (join + primary transport connected).
    case connected
    case reconnecting(ReconnectMode)
    case reconnected(ReconnectOutcome)
    case disconnected(RoomDisconnectReason)
    case roomUpdated(MeetingRoom)
    /// The server moved us to another room (protocol >= 16).
    case roomMoved(MeetingRoom)

    case participantJoined(MeetingParticipant)
    case participantLeft(MeetingParticipant, reason: ParticipantLeaveReason)
    /// A known identity came back as a new session (new SID).
    case participantRejoined(MeetingParticipant, previousSid: String)
    case participantUpdated(MeetingParticipant, changes: ParticipantChanges)

    case trackPublished(MeetingTrack, participant: String)
    case trackUnpublished(MeetingTrack, participant: String)
    case trackMuted(MeetingTrack, participant: String)
    case trackUnmuted(MeetingTrack, participant: String)
    /// MIME type, stereo, name or DTX changed.
    case trackUpdated(MeetingTrack, participant: String)
    case trackStreamStateChanged(MeetingTrack, participant: String)
    case trackSubscriptionPermissionChanged(MeetingTrack, participant: String)
    case trackSubscriptionFailed(trackSid: String, error: LiveKit.SubscriptionError)
    /// The server answered one of our requests with `request_response` other than OK or
    /// QUEUED (e.g. `add_track` NOT_ALLOWED when the token may not publish).
    case requestRefused(RefusedRequest)

    /// Everyone speaking now (loudest first), and who started / stopped (identities).
    case speakersChanged(active: [MeetingSpeaker], started: [String], stopped: [String])
    case connectionQualityChanged(participant: String, quality: LiveKit.ConnectionQuality, score: Float)

    case dataReceived(MeetingDataMessage)
    case chatReceived(MeetingChatMessage)
    case systemMessage(BedrudSystemMessage, sender: String)
    /// A chunked chat that was given up (limits, timeout); see ``ChatAssembler``.
    case chatDropped(ChatAssembler.Drop)
    /// `reaction` on the chat topic; `sender` is the server-stamped identity.
    case reactionReceived(BedrudReaction, sender: String)
    /// `poll_vote` on the chat topic.
    case pollVoteReceived(BedrudPollVote, sender: String)
    /// A packet on topic `presence` (`profile_changed`, `deafen_state`).
    case presenceReceived(BedrudPresence, sender: String)
    case transcriptionReceived(LiveKit.Transcription, sender: String)
    case dtmfReceived(code: UInt32, digit: String, sender: String)
    /// An RPC addressed to us (answering needs a publisher data channel).
    case rpcRequestReceived(LiveKit.RpcRequest, sender: String)

    /// Publishing: the server accepted `add_track` (`cid`) as this track.
    case localTrackPublished(cid: String, MeetingTrack)
    case localTrackUnpublished(sid: String)
    case localTrackMutedByServer(sid: String, muted: Bool)
}

/// A request the server refused (`request_response`, livekit-protocol.md: requests that
/// carry a `request_id`).
public struct RefusedRequest: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case trickle, addTrack = "add_track", mute, updateMetadata = "update_metadata"
        case updateAudioTrack = "update_audio_track", updateVideoTrack = "update_video_track", other
    }
    public var requestID: UInt32
    public var kind: Kind
    public var reason: LiveKit.RequestResponse.Reason
    /// The server's own words, as received (never printed raw).
    public var message: String
    /// For `add_track`: the `cid` we asked to publish.
    public var trackCid: String?

    public init(_ r: LiveKit.RequestResponse) {
        requestID = r.requestID
        reason = r.reason
        message = r.message
        switch r.request {
        case .trickle: kind = .trickle
        case .addTrack(let a): kind = .addTrack; trackCid = a.cid
        case .mute: kind = .mute
        case .updateMetadata: kind = .updateMetadata
        case .updateAudioTrack: kind = .updateAudioTrack
        case .updateVideoTrack: kind = .updateVideoTrack
        case .unknown, nil: kind = .other
        }
    }
}

/// Counters of things RoomState dropped or ignored (for logs and tests).
public struct RoomStateStats: Sendable, Equatable {
    public var undecodableSignalMessages = 0
    public var unknownSignalMessages = 0
    public var unexpectedSignalMessages = 0
    public var staleParticipantUpdates = 0
    public var unknownSpeakers = 0
    public var invalidCandidates = 0
    public var unmatchedAnswers = 0
    public var undecodableDataPackets = 0
    /// Chat reassembly and deduplication (``ChatAssembler/Stats``).
    public var chat = ChatAssembler.Stats()
    public var duplicateDataPackets = 0
    public var ignoredDataPackets = 0
    public var droppedRequests = 0
    public var staleTimers = 0
    /// Server offers the WebRTC layer could not apply or answer.
    public var unanswerableOffers = 0
    /// Reconnects that began less than `stableConnectionMs` after the previous one
    /// completed (a flapping connection).
    public var flappingReconnects = 0
    /// Times the connection was lost and the bot set out to get it back: one per outage,
    /// however it ended (a resume that turns into a full rejoin is one outage).
    public var outages = 0
    /// Reconnect attempts (resumes and rejoins) over all outages.
    public var reconnectAttempts = 0
    /// Participants not added because the room held `maxParticipants` already.
    public var droppedParticipants = 0
    /// Tracks beyond `maxTracksPerParticipant` left out of a participant.
    public var droppedTracks = 0
    /// Participant `metadata` or `attributes` larger than `maxMetadataBytes`, dropped.
    public var droppedMetadata = 0

    public init() {}
}

extension RoomInput: CustomStringConvertible, CustomDebugStringConvertible {
    /// Safe to log: tokens are masked and payloads shown by size only.
    public var description: String {
        switch self {
        case .connect: "connect(token: \(Redact.mask))"
        case .leave: "leave"
        case .sendRequest(let r): "sendRequest(\(r.message.map { "\($0)".prefix(40) } ?? "empty"))"
        case .signalConnected: "signalConnected"
        case .signalConnectFailed(let f): "signalConnectFailed(\(f))"
        case .signalData(let bytes): "signalData(\(bytes.count) bytes)"
        case .signalMessage(let m): "signalMessage(\(m))"
        case .signalClosed: "signalClosed"
        case .joinTokenReceived: "joinTokenReceived(\(Redact.mask))"
        case .joinTokenFailed(let permanent): "joinTokenFailed(permanent: \(permanent))"
        case .joinTokenRefused(let reason): "joinTokenRefused(\(reason))"
        case .transportStateChanged(let target, let state): "transportStateChanged(\(target), \(state))"
        case .answerCreated(_, let id): "answerCreated(offerID: \(id))"
        case .offerCreated: "offerCreated"
        case .negotiationFailed(let target): "negotiationFailed(\(target))"
        case .offerUnanswerable(let target, _): "offerUnanswerable(\(target))"
        case .localCandidate(_, let target): "localCandidate(\(target))"
        case .dataChannelOpened(let info): "dataChannelOpened(\(info.label))"
        case .dataReceived(let bytes, let reliable): "dataReceived(\(bytes.count) bytes, reliable: \(reliable))"
        case .timerFired(let timer): "timerFired(\(timer))"
        }
    }

    public var debugDescription: String { description }
}

extension RoomState: CustomStringConvertible, CustomDebugStringConvertible {
    /// A summary without secrets (the token is never shown).
    public var description: String {
        "RoomState(\(connectionState), room: \(room.name.isEmpty ? "?" : room.name), local: \(localParticipant?.sid ?? "none"), remote: \(remoteParticipants.count))"
    }

    public var debugDescription: String { description }
}

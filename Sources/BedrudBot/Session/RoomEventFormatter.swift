import BedrudCore
import BedrudProtocol
import FoundationEssentials

/// Turns room events into what a person reads (one line each) and into the JSON lines of
/// the event transcript (docs/EVENTS.md). Keeps the names of participants it has seen,
/// so later lines can say "Alice" instead of an identity.
public struct RoomEventFormatter: Sendable {
    private var names: [String: String] = [:]
    public private(set) var localIdentity: String?
    /// Option texts of recent polls by message id, for `poll_vote` lines (bounded).
    private var polls: [String: [String: String]] = [:]
    private var pollOrder: [String] = []
    static let rememberedPolls = 256

    public init() {}

    /// The most of one name (display name or identity) a line shows, in Unicode scalars.
    /// Bedrud's guest login caps nothing, so a name can be a megabyte; it is named on
    /// every event of its owner.
    public static let nameLimit = 64
    /// The most of one line, in Unicode scalars: room for a chat message of a few
    /// sentences. events.jsonl keeps the whole text (bounded by ``BoundedText/limitBytes``).
    public static let lineLimit = 1000

    func name(_ identity: String) -> String {
        if identity == localIdentity { return "(bot)" }
        if let n = names[identity], !n.isEmpty { return Self.cut(n) }
        return identity.isEmpty ? "(server)" : Self.cut(identity)
    }

    /// A name from someone else, sanitised and cut to ``nameLimit``.
    static func cut(_ name: String) -> String { TerminalText.line(name, limit: nameLimit) }

    /// The display name announced for `identity` ("" when none is known), for event objects.
    func displayName(_ identity: String) -> String { names[identity] ?? "" }

    mutating func remember(_ p: MeetingParticipant) {
        names[p.identity] = p.name
    }

    /// The text of option `optionId` of the poll in message `messageId`, if it was seen.
    func pollOption(messageId: String, optionId: String) -> String? { polls[messageId]?[optionId] }

    private mutating func remember(poll: BedrudChatPoll, messageId: String) {
        if polls[messageId] == nil {
            pollOrder.append(messageId)
            if pollOrder.count > Self.rememberedPolls { polls[pollOrder.removeFirst()] = nil }
        }
        polls[messageId] = Dictionary(poll.options.map { ($0.id, $0.text) }, uniquingKeysWith: { a, _ in a })
    }

    static func trackLabel(_ t: MeetingTrack) -> String {
        switch t.source {
        case .microphone: "microphone"
        case .camera: "camera"
        case .screenShare: "screen share"
        case .screenShareAudio: "screen share audio"
        default: t.kind == .audio ? "audio" : t.kind == .video ? "video" : "track"
        }
    }

    // MARK: - Text

    /// A human line for the event, or nil for events not worth a line. Names, chat text,
    /// topics and reasons come from other people: the line is passed through
    /// ``TerminalText`` so none of them can send escape sequences or break the line,
    /// each name is cut to ``nameLimit`` and the line to ``lineLimit``.
    public mutating func text(_ event: RoomEvent) -> String? {
        rawText(event).map { TerminalText.line($0, limit: Self.lineLimit) }
    }

    private mutating func rawText(_ event: RoomEvent) -> String? {
        switch event {
        case .roomJoined(let room, let local):
            localIdentity = local.identity
            names[local.identity] = local.name
            return "joined room '\(Self.cut(room.name))' as \(Self.cut(local.name.isEmpty ? local.identity : local.name)) (\(Self.cut(local.sid)))"
        case .connected: return "connected"
        case .reconnecting(let mode): return "connection lost; reconnecting (\(mode == .resume ? "resume" : "full rejoin"))…"
        case .reconnected(let outcome): return outcome == .resumed ? "reconnected (session resumed)" : "reconnected (joined again as a new session)"
        case .disconnected(let reason): return "disconnected: \(Self.explain(reason))"
        case .roomUpdated: return nil
        case .roomMoved(let room): return "moved to room '\(Self.cut(room.name))'"
        case .participantJoined(let p):
            remember(p)
            let tracks = p.tracks.filter { $0.kind == .audio }.map { Self.trackLabel($0) + ($0.muted ? " (muted)" : "") }
            return "+ \(name(p.identity)) joined" + (tracks.isEmpty ? "" : " with \(tracks.joined(separator: ", "))")
        case .participantLeft(let p, let reason):
            let why: String
            switch reason {
            case .disconnected(let r): why = r == .clientInitiated ? "" : " (\(r))"
            case .absentAfterRejoin: why = " (while we were away)"
            }
            return "- \(name(p.identity)) left\(why)"
        case .participantRejoined(let p, _):
            remember(p)
            return "~ \(name(p.identity)) rejoined"
        case .participantUpdated(let p, _):
            remember(p)
            return nil
        case .trackPublished(let t, let who): return "\(name(who)) published \(Self.trackLabel(t))\(t.muted ? " (muted)" : "")"
        case .trackUnpublished(let t, let who): return "\(name(who)) stopped \(Self.trackLabel(t))"
        case .trackMuted(let t, let who): return "\(name(who)) muted \(Self.trackLabel(t))"
        case .trackUnmuted(let t, let who): return "\(name(who)) unmuted \(Self.trackLabel(t))"
        case .trackUpdated, .trackStreamStateChanged, .trackSubscriptionPermissionChanged: return nil
        case .trackSubscriptionFailed(let sid, let error): return "could not subscribe to \(sid): \(error)"
        case .requestRefused(let r):
            // The server's message goes to events.jsonl only (JSON-escaped), not to the terminal.
            return "the server refused our \(r.kind.rawValue) request\(r.trackCid.map { " for track \($0)" } ?? ""): \(r.reason)"
        case .speakersChanged(_, let started, let stopped):
            var parts: [String] = []
            if !started.isEmpty { parts.append("speaking: " + started.map(name).joined(separator: ", ")) }
            if !stopped.isEmpty { parts.append("stopped: " + stopped.map(name).joined(separator: ", ")) }
            return parts.isEmpty ? nil : parts.joined(separator: "; ")
        case .connectionQualityChanged: return nil
        case .dataReceived(let d) where d.topic.map({ BedrudChatWire.chatTopics.contains($0) || $0 == "system" || $0 == BedrudPresence.topic }) == true:
            return nil  // shown decoded
        case .dataReceived(let d): return "data from \(name(d.senderIdentity)) on topic '\(d.topic ?? "")' (\(d.payload.count) bytes)"
        case .chatReceived(let c):
            let attachments = c.attachments.isEmpty ? "" : " [\(c.attachments.count) attachment\(c.attachments.count == 1 ? "" : "s")]"
            let who = c.senderName.isEmpty ? name(c.senderIdentity) : Self.cut(c.senderName)
            if let poll = c.poll {
                remember(poll: poll, messageId: c.id)
                return "chat \(who): \(c.text)\(attachments) — poll: \(poll.question) (" + poll.options.map(\.text).joined(separator: " / ") + ")"
            }
            return "chat \(who): \(c.text)\(attachments)"
        case .chatDropped(let d):
            return "a chat from \(name(d.sender)) was lost: \(d.reason.rawValue) (\(d.receivedChunks) of \(d.expectedChunks) parts)"
        case .reactionReceived(let r, let sender):
            return "\(name(sender)) reacted \(r.emoji)"
        case .pollVoteReceived(let v, let sender):
            return "\(name(sender)) voted " + (pollOption(messageId: v.messageId, optionId: v.optionId).map { "'\($0)'" } ?? "option \(v.optionId)")
        case .presenceReceived(.profileChanged(let identity, let newName, _), let sender):
            // Only a participant renames itself (the packet's sender is stamped by the server).
            guard identity == sender else { return nil }
            let old = name(identity)
            names[identity] = newName
            return old == newName ? nil : "\(old) is now called \(Self.cut(newName))"
        case .presenceReceived(.deafenState(let identity, let deafened), _):
            return "\(name(identity)) \(deafened ? "deafened" : "undeafened") themselves"
        case .systemMessage(let m, _) where m.event.endsRoom:
            return "the room ended (\(m.event.name))" + (m.message.isEmpty ? "" : ": \(m.message)")
        case .systemMessage(let m, _) where m.event == .stage:
            return "stage: \(m.message)"
        case .systemMessage(let m, _):
            return "moderation: \(m.event.name)" + (m.target.isEmpty ? "" : " → \(name(m.target))") + (m.actor.isEmpty ? "" : " by \(name(m.actor))")
        case .transcriptionReceived(_, let sender): return "transcription from \(name(sender))"
        case .dtmfReceived(_, let digit, let sender): return "DTMF \(digit) from \(name(sender))"
        case .rpcRequestReceived(let r, let sender): return "RPC '\(r.method)' from \(name(sender)) (not supported)"
        case .localTrackPublished, .localTrackUnpublished: return nil
        case .localTrackMutedByServer(_, let muted): return muted ? "the server muted our track" : "the server unmuted our track"
        }
    }

    public static func explain(_ reason: RoomDisconnectReason) -> String {
        switch reason {
        case .left: "left the room"
        case .kicked: "removed from the room by a moderator (kicked or banned)"
        case .roomDeleted: "the room was deleted"
        case .roomClosed: "the server closed the room"
        case .duplicateIdentity: "another connection with the same account replaced this one (give the bot its own account)"
        case .joinFailure: "the server refused the join (room full?)"
        case .refused(403): "the server does not allow this join (HTTP 403)"
        case .refused(404): "the media server has no such room or route (HTTP 404)"
        case .refused(let status) where (500..<600).contains(status): "the media server failed (HTTP \(status))"
        case .refused(let status) where (400..<500).contains(status): "the media server refused the join request as given (HTTP \(status))"
        case .refused(let status): "the media server answered the join with HTTP \(status), not a WebSocket upgrade"
        case .serverShutdown: "the server shut down"
        case .notAllowed: "the join token was refused"
        case .roomNotFound: "the room does not exist on the media server"
        case .roomEnded: "the meeting ended (Bedrud says the room is no longer active)"
        case .forbidden: "Bedrud no longer lets the bot into the room"
        case .network(let cause): "the connection could not be re-established (last attempt: \(cause))"
        case .protocolError: "the server broke the signalling protocol"
        case .subscriberNotPrimary(let canSubscribe):
            canSubscribe
                ? "the server wants a single peer connection (subscriber_primary is false); bedrud-bot receives on LiveKit's subscriber connection (/rtc v0) only"
                : "the join token does not allow subscribing (can_subscribe is false), so there is nothing to record"
        case .server(let r): "server reason \(r)"
        }
    }
}

extension RoomDisconnectReason {
    /// How a run that ended this way exits: the code of its ``EndReason`` (a plain `left`
    /// is success, a room the server ended is 10), or for an error, the error's class.
    var exitCode: ExitCode {
        let end = EndReason(self)
        guard end == .error else { return end.exitCode }
        switch self {
        case .forbidden, .joinFailure: return .forbidden
        case .refused(let status): return ExitCode(refusedUpgrade: status)
        case .notAllowed: return .auth
        case .roomNotFound: return .notFound
        case .subscriberNotPrimary(let canSubscribe): return canSubscribe ? .server : .forbidden
        default: return .server  // protocolError, any other server reason
        }
    }
}

extension ExitCode {
    /// The class of a refused `/rtc` upgrade (``SignalClient``'s classification says what
    /// each status means in LiveKit): 401 the token (4), 403 forbidden (6), 404 not found
    /// (5), other 4xx the request as given (12), 5xx and anything else that is not an
    /// upgrade the server (9). Pure.
    init(refusedUpgrade status: Int) {
        switch status {
        case 401: self = .auth
        case 403: self = .forbidden
        case 404: self = .notFound
        case 400..<500: self = .rejected
        default: self = .server
        }
    }
}

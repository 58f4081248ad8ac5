import BedrudProtocol

/// One line of `events.jsonl` and of `join --json` (docs/EVENTS.md, docs/events.schema.json):
/// what ``TranscriptWriter`` writes and `repair` reads back.
///
/// An enum with a case per type, each with its own payload, rather than a struct of the
/// type and optional payloads: a line cannot name one type and carry another's fields,
/// the writer and `repair` switch over it exhaustively, and decoding picks the payload
/// from `type` in one place. Every case's keys are written flat beside `type`.
///
/// Texts that come from outside (names, identities, ids, chat, reasons and details a
/// server gave) are ``BoundedText``, an event's `message` ``BoundedMessage``: cut to their
/// limit when the event is built (and when a line is read back), so no line is written
/// with a megabyte name. Texts the bot makes itself from its own enums (`kind`, `reason`,
/// `cause`, `quality`) stay `String`.
///
/// Reading is lenient where lines from older versions differ: a missing text, number,
/// flag or list reads as empty (``Defaulted``), a participant written as a bare identity
/// (before issue 11) reads as one with no name. A participant or a file's `participant`
/// that is missing makes the line unreadable as its type.
enum TranscriptEvent: Equatable {
    case sessionStarted(SessionStarted)
    case joined(Joined)
    case connected
    case reconnecting(Reconnecting)
    case reconnected(Reconnected)
    case disconnected(Disconnected)
    case roomMoved(RoomMoved)
    case participantJoined(ParticipantJoined)
    case participantLeft(ParticipantLeft)
    case participantRejoined(ParticipantRejoined)
    case participantUpdated(ParticipantOnly)
    case trackPublished(TrackChange)
    case trackUnpublished(TrackChange)
    case trackMuted(TrackChange)
    case trackUnmuted(TrackChange)
    case subscriptionFailed(SubscriptionFailed)
    case requestRefused(RequestRefused)
    case speakersChanged(SpeakersChanged)
    case connectionQuality(ConnectionQuality)
    case data(DataMessage)
    case chat(Chat)
    case chatDropped(ChatDropped)
    case reaction(Reaction)
    case poll(PollPosted)
    case pollVote(PollVote)
    case profileChanged(ProfileChanged)
    case deafenState(DeafenState)
    case moderation(Moderation)
    case transcription(Transcription)
    case dtmf(DTMF)
    case rpcRequest(RPCRequest)
    case fileStarted(FileStarted)
    case fileFinished(FileFinished)
    case fileRotated(FileRotated)
    case gap(Gap)
    case speakingTurn(SpeakingTurn)
    case warning(Warning)
    case sessionEnded(SessionEnded)
    case runEnded(RunEnded)

    // MARK: - Shared shapes

    /// `participant`: one shape in every event, `identity` and `name` (the display name
    /// known when the line was written, "" if none); the `participant_*` and `joined`
    /// events add `sid` and `accesses`.
    struct Participant: Codable, Equatable {
        var identity: BoundedText
        var name: BoundedText
        var sid: BoundedText? = nil
        var accesses: [BoundedText]? = nil

        init(identity: BoundedText, name: BoundedText, sid: BoundedText? = nil, accesses: [BoundedText]? = nil) {
            (self.identity, self.name, self.sid, self.accesses) = (identity, name, sid, accesses)
        }

        /// Also a bare identity, as transcripts before issue 11 wrote it (its name was a
        /// `name` key beside it: ``TranscriptLine/legacyName``).
        init(from decoder: any Decoder) throws {
            if let identity = try? decoder.singleValueContainer().decode(BoundedText.self) {
                self.init(identity: identity, name: "")
                return
            }
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(identity: try c.decode(BoundedText.self, forKey: .identity), name: try c.decodeIfPresent(BoundedText.self, forKey: .name) ?? "",
                      sid: try c.decodeIfPresent(BoundedText.self, forKey: .sid), accesses: try c.decodeIfPresent([BoundedText].self, forKey: .accesses))
        }
    }

    struct Track: Codable, Equatable {
        @Defaulted var sid: BoundedText
        @Defaulted var kind: String
        @Defaulted var source: String
        @Defaulted var muted: Bool
        @Defaulted var mime: BoundedText
    }

    struct PollOption: Codable, Equatable {
        @Defaulted var id: BoundedText
        @Defaulted var text: BoundedText
    }

    /// A chat's `poll`.
    struct Poll: Codable, Equatable {
        @Defaulted var pollId: BoundedText
        @Defaulted var question: BoundedText
        @Defaulted var options: [PollOption]
        enum CodingKeys: String, CodingKey { case question, options, pollId = "poll_id" }
    }

    /// One of a chat's `attachments` (docs/EVENTS.md): a link keeps `url` and `size`; an
    /// inline (`data:`) one has `bytes` and `saved`, and `path` once saved, or `error`.
    struct Attachment: Codable, Equatable, Sendable {
        @Defaulted var kind: BoundedText
        @Defaulted var mime: BoundedText
        var name: BoundedText? = nil
        var url: BoundedText? = nil
        var size: Int? = nil
        var bytes: Int? = nil
        var saved: Bool? = nil
        var path: BoundedText? = nil
        var error: BoundedText? = nil
    }

    // MARK: - Payloads

    struct SessionStarted: Codable, Equatable {
        @Defaulted var room: BoundedText
        @Defaulted var server: String
        @Defaulted var livekitHost: BoundedText
        @Defaulted var botIdentity: BoundedText
        @Defaulted var botName: BoundedText
        @Defaulted var version: String
        @Defaulted var note: String
        enum CodingKeys: String, CodingKey {
            case room, server, version, note
            case livekitHost = "livekit_host", botIdentity = "bot_identity", botName = "bot_name"
        }
    }

    struct Joined: Codable, Equatable {
        @Defaulted var room: BoundedText
        @Defaulted var roomSid: BoundedText
        var participant: Participant
        enum CodingKeys: String, CodingKey { case room, participant, roomSid = "room_sid" }
    }

    struct Reconnecting: Codable, Equatable { @Defaulted var mode: String }
    struct Reconnected: Codable, Equatable { @Defaulted var outcome: String }
    struct Disconnected: Codable, Equatable { @Defaulted var reason: String }
    struct RoomMoved: Codable, Equatable { @Defaulted var room: BoundedText }

    struct ParticipantJoined: Codable, Equatable {
        var participant: Participant
        @Defaulted var tracks: [Track]
    }

    struct ParticipantLeft: Codable, Equatable {
        var participant: Participant
        @Defaulted var reason: String
    }

    struct ParticipantRejoined: Codable, Equatable {
        var participant: Participant
        @Defaulted var previousSid: BoundedText
        enum CodingKeys: String, CodingKey { case participant, previousSid = "previous_sid" }
    }

    struct ParticipantOnly: Codable, Equatable { var participant: Participant }

    struct TrackChange: Codable, Equatable {
        var participant: Participant
        var track: Track
    }

    struct SubscriptionFailed: Codable, Equatable {
        @Defaulted var trackSid: BoundedText
        @Defaulted var error: String
        enum CodingKeys: String, CodingKey { case error, trackSid = "track_sid" }
    }

    struct RequestRefused: Codable, Equatable {
        @Defaulted var request: String
        @Defaulted var requestId: Int
        @Defaulted var reason: String
        @Defaulted var message: BoundedMessage
        @Defaulted var trackCid: BoundedText
        enum CodingKeys: String, CodingKey { case request, reason, message, requestId = "request_id", trackCid = "track_cid" }
    }

    struct SpeakersChanged: Codable, Equatable {
        struct Speaker: Codable, Equatable {
            var participant: Participant
            @Defaulted var level: Double
        }
        @Defaulted var active: [Speaker]
        @Defaulted var started: [BoundedText]
        @Defaulted var stopped: [BoundedText]
    }

    struct ConnectionQuality: Codable, Equatable {
        var participant: Participant
        @Defaulted var quality: String
        @Defaulted var score: Double
    }

    struct DataMessage: Codable, Equatable {
        var participant: Participant
        @Defaulted var topic: BoundedText
        @Defaulted var bytes: Int
        @Defaulted var reliable: Bool
    }

    struct Chat: Codable, Equatable {
        var participant: Participant
        @Defaulted var message: BoundedMessage
        @Defaulted var id: BoundedText
        @Defaulted var sentMs: Int64
        @Defaulted var attachments: [Attachment]
        var poll: Poll? = nil
        enum CodingKeys: String, CodingKey { case participant, message, id, attachments, poll, sentMs = "sent_ms" }
    }

    struct ChatDropped: Codable, Equatable {
        var participant: Participant
        @Defaulted var id: BoundedText
        @Defaulted var reason: String
        @Defaulted var receivedChunks: Int
        @Defaulted var expectedChunks: Int
        enum CodingKeys: String, CodingKey { case participant, id, reason, receivedChunks = "received_chunks", expectedChunks = "expected_chunks" }
    }

    struct Reaction: Codable, Equatable {
        var participant: Participant
        @Defaulted var messageId: BoundedText
        @Defaulted var emoji: BoundedText
        @Defaulted var voterIdentity: BoundedText
        enum CodingKeys: String, CodingKey { case participant, emoji, messageId = "message_id", voterIdentity = "voter_identity" }
    }

    /// `poll`: a chat message's poll, as a line of its own.
    struct PollPosted: Codable, Equatable {
        var participant: Participant
        @Defaulted var messageId: BoundedText
        @Defaulted var pollId: BoundedText
        @Defaulted var question: BoundedText
        @Defaulted var options: [PollOption]
        enum CodingKeys: String, CodingKey { case participant, question, options, messageId = "message_id", pollId = "poll_id" }
    }

    struct PollVote: Codable, Equatable {
        var participant: Participant
        @Defaulted var messageId: BoundedText
        @Defaulted var optionId: BoundedText
        @Defaulted var option: BoundedText
        @Defaulted var voterIdentity: BoundedText
        enum CodingKeys: String, CodingKey {
            case participant, option
            case messageId = "message_id", optionId = "option_id", voterIdentity = "voter_identity"
        }
    }

    struct ProfileChanged: Codable, Equatable {
        var participant: Participant
        @Defaulted var sender: BoundedText
        @Defaulted var avatarUrl: BoundedText
        @Defaulted var applied: Bool
        enum CodingKeys: String, CodingKey { case participant, sender, applied, avatarUrl = "avatar_url" }
    }

    struct DeafenState: Codable, Equatable {
        var participant: Participant
        @Defaulted var sender: BoundedText
        @Defaulted var deafened: Bool
    }

    struct Moderation: Codable, Equatable {
        @Defaulted var event: BoundedText
        @Defaulted var actor: BoundedText
        @Defaulted var target: BoundedText
        @Defaulted var sender: BoundedText
        @Defaulted var message: BoundedMessage
        @Defaulted var deletedIdentity: BoundedText
        enum CodingKeys: String, CodingKey { case event, actor, target, sender, message, deletedIdentity = "deleted_identity" }
    }

    struct Transcription: Codable, Equatable {
        struct Segment: Codable, Equatable {
            @Defaulted var text: BoundedText
            @Defaulted var final: Bool
            @Defaulted var language: BoundedText
        }
        var participant: Participant
        @Defaulted var sender: BoundedText
        @Defaulted var segments: [Segment]
    }

    struct DTMF: Codable, Equatable {
        var participant: Participant
        @Defaulted var code: Int
        @Defaulted var digit: BoundedText
    }

    struct RPCRequest: Codable, Equatable {
        var participant: Participant
        @Defaulted var method: BoundedText
    }

    /// The room file's `file_*` lines have `participant: null`.
    struct FileStarted: Codable, Equatable {
        var participant: Nullable<Participant>
        @Defaulted var output: BoundedText
    }

    struct FileFinished: Codable, Equatable {
        var participant: Nullable<Participant>
        @Defaulted var output: BoundedText
        @Defaulted var startOffsetMs: Int64
        @Defaulted var durationMs: Int64
        enum CodingKeys: String, CodingKey { case participant, output, startOffsetMs = "start_offset_ms", durationMs = "duration_ms" }
    }

    struct FileRotated: Codable, Equatable {
        var participant: Nullable<Participant>
        @Defaulted var output: BoundedText
        @Defaulted var segment: Int
        @Defaulted var reason: String
    }

    struct Gap: Codable, Equatable {
        var participant: Nullable<Participant>
        @Defaulted var trackSid: BoundedText
        @Defaulted var durationMs: Int64
        @Defaulted var cause: String
        enum CodingKeys: String, CodingKey { case participant, cause, trackSid = "track_sid", durationMs = "duration_ms" }
    }

    struct SpeakingTurn: Codable, Equatable {
        var participant: Participant
        @Defaulted var startMs: Int64
        @Defaulted var endMs: Int64
        enum CodingKeys: String, CodingKey { case participant, startMs = "start_ms", endMs = "end_ms" }
    }

    struct Warning: Codable, Equatable { @Defaulted var message: BoundedMessage }

    struct SessionEnded: Codable, Equatable {
        @Defaulted var reason: String
        /// Absent in transcripts written before `end_reason` existed (`repair` reads `reason` then).
        var endReason: String? = nil
        /// Absent only in a line from elsewhere: `repair` writes `exit_code: null` then.
        var exitCode: Int? = nil
        @Defaulted var detail: BoundedText
        @Defaulted var durationMs: Int64
        enum CodingKeys: String, CodingKey { case reason, detail, endReason = "end_reason", exitCode = "exit_code", durationMs = "duration_ms" }
    }

    /// `run_ended`: the last line of `join A B --json` (written by ``MultiRoomRun``).
    struct RunEnded: Codable, Equatable {
        struct Room: Codable, Equatable {
            @Defaulted var sessionRoom: String
            @Defaulted var exitCode: Int
            /// null: the room never started a session.
            var endReason: Nullable<String>
            @Defaulted var detail: BoundedText
            /// null: nothing was recorded.
            var folder: Nullable<String>
            enum CodingKeys: String, CodingKey { case detail, folder, sessionRoom = "session_room", exitCode = "exit_code", endReason = "end_reason" }
        }
        @Defaulted var exitCode: Int
        @Defaulted var detail: BoundedText
        @Defaulted var durationMs: Int64
        @Defaulted var rooms: [Room]
        enum CodingKeys: String, CodingKey { case detail, rooms, exitCode = "exit_code", durationMs = "duration_ms" }
    }

    // MARK: - Type and coding

    var type: TranscriptEventType {
        switch self {
        case .sessionStarted: .sessionStarted
        case .joined: .joined
        case .connected: .connected
        case .reconnecting: .reconnecting
        case .reconnected: .reconnected
        case .disconnected: .disconnected
        case .roomMoved: .roomMoved
        case .participantJoined: .participantJoined
        case .participantLeft: .participantLeft
        case .participantRejoined: .participantRejoined
        case .participantUpdated: .participantUpdated
        case .trackPublished: .trackPublished
        case .trackUnpublished: .trackUnpublished
        case .trackMuted: .trackMuted
        case .trackUnmuted: .trackUnmuted
        case .subscriptionFailed: .subscriptionFailed
        case .requestRefused: .requestRefused
        case .speakersChanged: .speakersChanged
        case .connectionQuality: .connectionQuality
        case .data: .data
        case .chat: .chat
        case .chatDropped: .chatDropped
        case .reaction: .reaction
        case .poll: .poll
        case .pollVote: .pollVote
        case .profileChanged: .profileChanged
        case .deafenState: .deafenState
        case .moderation: .moderation
        case .transcription: .transcription
        case .dtmf: .dtmf
        case .rpcRequest: .rpcRequest
        case .fileStarted: .fileStarted
        case .fileFinished: .fileFinished
        case .fileRotated: .fileRotated
        case .gap: .gap
        case .speakingTurn: .speakingTurn
        case .warning: .warning
        case .sessionEnded: .sessionEnded
        case .runEnded: .runEnded
        }
    }

    private var payload: (any Encodable)? {
        switch self {
        case .connected: nil
        case .sessionStarted(let p): p
        case .joined(let p): p
        case .reconnecting(let p): p
        case .reconnected(let p): p
        case .disconnected(let p): p
        case .roomMoved(let p): p
        case .participantJoined(let p): p
        case .participantLeft(let p): p
        case .participantRejoined(let p): p
        case .participantUpdated(let p): p
        case .trackPublished(let p), .trackUnpublished(let p), .trackMuted(let p), .trackUnmuted(let p): p
        case .subscriptionFailed(let p): p
        case .requestRefused(let p): p
        case .speakersChanged(let p): p
        case .connectionQuality(let p): p
        case .data(let p): p
        case .chat(let p): p
        case .chatDropped(let p): p
        case .reaction(let p): p
        case .poll(let p): p
        case .pollVote(let p): p
        case .profileChanged(let p): p
        case .deafenState(let p): p
        case .moderation(let p): p
        case .transcription(let p): p
        case .dtmf(let p): p
        case .rpcRequest(let p): p
        case .fileStarted(let p): p
        case .fileFinished(let p): p
        case .fileRotated(let p): p
        case .gap(let p): p
        case .speakingTurn(let p): p
        case .warning(let p): p
        case .sessionEnded(let p): p
        case .runEnded(let p): p
        }
    }
}

enum TranscriptTypeKey: String, CodingKey { case type }

extension TranscriptEvent: Codable {
    /// `type` and the payload's keys, side by side in one object.
    func encode(to encoder: any Encoder) throws {
        try payload?.encode(to: encoder)
        var c = encoder.container(keyedBy: TranscriptTypeKey.self)
        try c.encode(type.rawValue, forKey: .type)
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: TranscriptTypeKey.self)
        let name = try c.decode(String.self, forKey: .type)
        guard let type = TranscriptEventType(rawValue: name) else {
            throw DecodingError.dataCorruptedError(forKey: .type, in: c, debugDescription: "no event type \(name)")
        }
        func p<P: Decodable>(_: P.Type = P.self) throws -> P { try P(from: decoder) }
        switch type {
        case .sessionStarted: self = .sessionStarted(try p())
        case .joined: self = .joined(try p())
        case .connected: self = .connected
        case .reconnecting: self = .reconnecting(try p())
        case .reconnected: self = .reconnected(try p())
        case .disconnected: self = .disconnected(try p())
        case .roomMoved: self = .roomMoved(try p())
        case .participantJoined: self = .participantJoined(try p())
        case .participantLeft: self = .participantLeft(try p())
        case .participantRejoined: self = .participantRejoined(try p())
        case .participantUpdated: self = .participantUpdated(try p())
        case .trackPublished: self = .trackPublished(try p())
        case .trackUnpublished: self = .trackUnpublished(try p())
        case .trackMuted: self = .trackMuted(try p())
        case .trackUnmuted: self = .trackUnmuted(try p())
        case .subscriptionFailed: self = .subscriptionFailed(try p())
        case .requestRefused: self = .requestRefused(try p())
        case .speakersChanged: self = .speakersChanged(try p())
        case .connectionQuality: self = .connectionQuality(try p())
        case .data: self = .data(try p())
        case .chat: self = .chat(try p())
        case .chatDropped: self = .chatDropped(try p())
        case .reaction: self = .reaction(try p())
        case .poll: self = .poll(try p())
        case .pollVote: self = .pollVote(try p())
        case .profileChanged: self = .profileChanged(try p())
        case .deafenState: self = .deafenState(try p())
        case .moderation: self = .moderation(try p())
        case .transcription: self = .transcription(try p())
        case .dtmf: self = .dtmf(try p())
        case .rpcRequest: self = .rpcRequest(try p())
        case .fileStarted: self = .fileStarted(try p())
        case .fileFinished: self = .fileFinished(try p())
        case .fileRotated: self = .fileRotated(try p())
        case .gap: self = .gap(try p())
        case .speakingTurn: self = .speakingTurn(try p())
        case .warning: self = .warning(try p())
        case .sessionEnded: self = .sessionEnded(try p())
        case .runEnded: self = .runEnded(try p())
        }
    }
}

/// A whole line: the event and where it sits in time. `written_ms` only on events
/// reported after they happened (docs/EVENTS.md).
struct TranscriptLine: Codable {
    /// nil when read back: a type this version does not know, or fields not of its type's shape.
    var event: TranscriptEvent?
    /// The line's `type` as written (also for an event this version cannot read).
    var type: String
    var time: String
    var offsetMs: Int64
    var writtenMs: Int64? = nil
    /// Which room the line is of, on stdout when one process records several rooms.
    var sessionRoom: String? = nil
    /// A top-level `name`: where transcripts before issue 11 put the participant's name.
    var legacyName: String? = nil
    /// Every key of a line this version cannot read as its type (``event`` is nil), as it
    /// was: the report still lists such a line with what it says. Nil for a read event.
    var unreadFields: [String: JSONValue]? = nil

    enum CodingKeys: String, CodingKey { case type, time, name, offsetMs = "offset_ms", writtenMs = "written_ms", sessionRoom = "session_room" }

    init(event: TranscriptEvent, time: String, offsetMs: Int64, writtenMs: Int64? = nil, sessionRoom: String? = nil) {
        (self.event, self.type, self.time, self.offsetMs, self.writtenMs, self.sessionRoom) = (event, event.type.rawValue, time, offsetMs, writtenMs, sessionRoom)
    }

    func encode(to encoder: any Encoder) throws {
        if let event { try event.encode(to: encoder) }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(time, forKey: .time)
        try c.encode(offsetMs, forKey: .offsetMs)
        try c.encodeIfPresent(writtenMs, forKey: .writtenMs)
        try c.encodeIfPresent(sessionRoom, forKey: .sessionRoom)
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(String.self, forKey: .type)
        time = (try? c.decodeIfPresent(String.self, forKey: .time)) ?? ""
        offsetMs = (try? c.decodeIfPresent(Int64.self, forKey: .offsetMs)) ?? 0
        writtenMs = try? c.decodeIfPresent(Int64.self, forKey: .writtenMs)
        sessionRoom = try? c.decodeIfPresent(String.self, forKey: .sessionRoom)
        legacyName = try? c.decodeIfPresent(String.self, forKey: .name)
        event = try? TranscriptEvent(from: decoder)
        if event == nil { unreadFields = (try? JSONValue(from: decoder))?.object }
    }
}

/// A field of an event that reads as empty ("", 0, false, []) when its key is missing, as
/// in lines from older versions; written as the value itself.
@propertyWrapper
struct Defaulted<Value: Codable & Equatable & EmptyValue>: Codable, Equatable {
    var wrappedValue: Value
    init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
    init(from decoder: any Decoder) throws { wrappedValue = try Value(from: decoder) }
    func encode(to encoder: any Encoder) throws { try wrappedValue.encode(to: encoder) }
}

extension Defaulted: Sendable where Value: Sendable {}

protocol EmptyValue { static var emptyValue: Self { get } }
extension String: EmptyValue { static var emptyValue: String { "" } }
extension Int: EmptyValue { static var emptyValue: Int { 0 } }
extension Int64: EmptyValue { static var emptyValue: Int64 { 0 } }
extension Double: EmptyValue { static var emptyValue: Double { 0 } }
extension Bool: EmptyValue { static var emptyValue: Bool { false } }
extension Array: EmptyValue { static var emptyValue: [Element] { [] } }

extension KeyedDecodingContainer {
    /// A missing or null ``Defaulted`` field is its empty value (used by the synthesized decoders).
    func decode<V>(_ type: Defaulted<V>.Type, forKey key: Key) throws -> Defaulted<V> {
        try decodeIfPresent(type, forKey: key) ?? Defaulted(wrappedValue: .emptyValue)
    }
}

extension Nullable: Decodable where Wrapped: Decodable {
    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        self.init(c.decodeNil() ? nil : try c.decode(Wrapped.self))
    }
}

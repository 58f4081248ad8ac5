import FoundationEssentials

/// A poll carried by a chat message (Bedrud web v0.12, MeetingContext.tsx
/// `normalizeChatPoll`): `{id, question, options: [{id, text}], votes: {identity: optionId}}`.
/// It is shown only with an `id`, a `question` and at least two well-formed options.
public struct BedrudChatPoll: Sendable, Equatable {
    public struct Option: Sendable, Equatable {
        public var id: String
        public var text: String
        public init(id: String, text: String) {
            self.id = id
            self.text = text
        }
    }

    public var id: String
    public var question: String
    public var options: [Option]

    public init(id: String, question: String, options: [Option]) {
        self.id = id
        self.question = question
        self.options = options
    }

    /// The poll as the web client writes it (no votes yet).
    public var json: String {
        "{\"id\":\(JSONText.quoted(id)),\"question\":\(JSONText.quoted(question)),\"options\":["
            + options.map { "{\"id\":\(JSONText.quoted($0.id)),\"text\":\(JSONText.quoted($0.text))}" }.joined(separator: ",")
            + "],\"votes\":{}}"
    }

    /// A poll from the JSON text of a chunked chat's `poll` section; nil when the web client
    /// would not show it.
    public init?(json: [UInt8]) {
        guard !json.isEmpty, let p = (try? JSONDecoder().decode(Lenient.self, from: Data(json)))?.poll else { return nil }
        self = p
    }

    struct Lenient: Decodable {
        var poll: BedrudChatPoll?
        enum CodingKeys: String, CodingKey { case id, question, options }
        struct LenientOption: Decodable {
            var option: Option?
            enum CodingKeys: String, CodingKey { case id, text }
            init(from decoder: any Decoder) throws {
                guard let c = try? decoder.container(keyedBy: CodingKeys.self),
                      let id = try? c.decode(String.self, forKey: .id), !id.isEmpty,
                      let text = try? c.decode(String.self, forKey: .text), !text.isEmpty else { return }
                option = Option(id: id, text: text)
            }
        }
        init(from decoder: any Decoder) throws {
            guard let c = try? decoder.container(keyedBy: CodingKeys.self),
                  let id = try? c.decode(String.self, forKey: .id), !id.isEmpty,
                  let question = try? c.decode(String.self, forKey: .question), !question.isEmpty else { return }
            let options = ((try? c.decode([LenientOption].self, forKey: .options)) ?? []).compactMap(\.option)
            guard options.count >= 2 else { return }
            poll = BedrudChatPoll(id: id, question: question, options: options)
        }
    }
}

/// `{type: "reaction", messageId, emoji, voterIdentity}` on the chat topic: a participant
/// toggles an emoji on a message (MeetingContext.tsx, `reactToMessage`).
public struct BedrudReaction: Sendable, Equatable {
    public var messageId: String
    public var emoji: String
    public var voterIdentity: String
    public init(messageId: String, emoji: String, voterIdentity: String) {
        self.messageId = messageId
        self.emoji = emoji
        self.voterIdentity = voterIdentity
    }

    /// The payload as the web client sends it.
    public var payload: [UInt8] {
        Array(("{\"type\":\"reaction\",\"messageId\":\(JSONText.quoted(messageId)),\"emoji\":\(JSONText.quoted(emoji)),"
            + "\"voterIdentity\":\(JSONText.quoted(voterIdentity))}").utf8)
    }
}

/// `{type: "poll_vote", messageId, optionId, voterIdentity}` on the chat topic.
public struct BedrudPollVote: Sendable, Equatable {
    public var messageId: String
    public var optionId: String
    public var voterIdentity: String
    public init(messageId: String, optionId: String, voterIdentity: String) {
        self.messageId = messageId
        self.optionId = optionId
        self.voterIdentity = voterIdentity
    }
}

/// The header of a chat sent in pieces (chatDataChannel.ts `ChatChunkMetaWire`): how many
/// `chat_chunk` parts each section has.
public struct BedrudChatChunkMeta: Sendable, Equatable {
    public var id: String
    public var timestampMs: Int64
    public var senderName: String
    public var senderIdentity: String
    public var messageChunks: Int
    public var attachmentChunks: Int
    public var pollChunks: Int

    public init(id: String, timestampMs: Int64, senderName: String, senderIdentity: String,
                messageChunks: Int, attachmentChunks: Int, pollChunks: Int) {
        self.id = id
        self.timestampMs = timestampMs
        self.senderName = senderName
        self.senderIdentity = senderIdentity
        self.messageChunks = messageChunks
        self.attachmentChunks = attachmentChunks
        self.pollChunks = pollChunks
    }

    public var totalChunks: Int { messageChunks + attachmentChunks + pollChunks }
}

/// One piece of a chunked chat: `{type: "chat_chunk", id, kind, index, part}`. `part` is
/// kept as UTF-16 code units: the sender cut the text with JavaScript's `slice`.
public struct BedrudChatChunk: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case message, attachments, poll
    }
    public var id: String
    public var kind: Kind
    public var index: Int
    public var part: [UInt16]
    public init(id: String, kind: Kind, index: Int, part: [UInt16]) {
        self.id = id
        self.kind = kind
        self.index = index
        self.part = part
    }
}

/// A packet on Bedrud's chat wire, as the web client v0.12 reads it (MeetingContext.tsx,
/// the `DataReceived` handler; chat/chatTopic.ts).
public enum BedrudChatWire: Sendable, Equatable {
    case chat(BedrudChatPayload)
    case chunkMeta(BedrudChatChunkMeta)
    case chunk(BedrudChatChunk)
    case reaction(BedrudReaction)
    case pollVote(BedrudPollVote)

    /// Topics the web client treats as chat, whatever the JSON `type` (chatTopic.ts).
    public static let chatTopics: Set<String> = ["chat", "lk-chat-topic", "lk.chat"]

    /// chatTopic.ts `isMeetingChatDataTopic`: a chat topic, or a `type` of `chat` / `chat_*`.
    public static func isChatTopic(_ topic: String?, type: String?) -> Bool {
        if let topic, chatTopics.contains(topic) { return true }
        guard let type else { return false }
        return type == "chat" || type.hasPrefix("chat_")
    }

    /// Decodes a user packet the web client would act on as chat, a chat chunk, a reaction
    /// or a vote; nil for anything else (other topics, unknown types, missing fields).
    public init?(topic: String?, payload: [UInt8]) {
        guard !payload.isEmpty, payload.count <= BedrudChatPayload.maxPayloadBytes else { return nil }
        // Cheap check first: most packets on other topics are not JSON objects of ours.
        guard let json = JSONValue16(parsing: payload), case .object = json else { return nil }
        let type = json["type"]?.string
        guard Self.isChatTopic(topic, type: type) else { return nil }
        func text(_ key: String) -> String? {
            guard let s = json[key]?.string, !s.isEmpty else { return nil }
            return s
        }
        switch type {
        case "chat", nil:
            guard let chat = BedrudChatPayload(topic: topic, payload: payload) else { return nil }
            self = .chat(chat)
        case "chat_chunk_meta":
            guard let id = text("id"),
                  let m = json["messageChunks"]?.integer, let a = json["attachmentChunks"]?.integer, let p = json["pollChunks"]?.integer,
                  m >= 0, a >= 0, p >= 0, m + a + p >= 1
            else { return nil }
            let ts = json["timestamp"]?.number.flatMap { $0.isFinite && abs($0) < 9e15 ? Int64($0) : nil } ?? 0
            self = .chunkMeta(BedrudChatChunkMeta(
                id: id, timestampMs: ts, senderName: json["senderName"]?.string ?? "", senderIdentity: json["senderIdentity"]?.string ?? "",
                messageChunks: m, attachmentChunks: a, pollChunks: p))
        case "chat_chunk":
            guard let id = text("id"), let kind = json["kind"]?.string.flatMap(BedrudChatChunk.Kind.init(rawValue:)),
                  let index = json["index"]?.integer, let part = json["part"]?.utf16
            else { return nil }
            self = .chunk(BedrudChatChunk(id: id, kind: kind, index: index, part: part))
        case "reaction":
            guard let m = text("messageId"), let e = text("emoji"), let v = text("voterIdentity") else { return nil }
            self = .reaction(BedrudReaction(messageId: m, emoji: e, voterIdentity: v))
        case "poll_vote":
            guard let m = text("messageId"), let o = text("optionId"), let v = text("voterIdentity") else { return nil }
            self = .pollVote(BedrudPollVote(messageId: m, optionId: o, voterIdentity: v))
        default:
            return nil
        }
    }
}

/// A packet on topic `presence` (MeetingContext.tsx: `notifyProfileChanged`,
/// `advertiseDeafenedState`).
public enum BedrudPresence: Sendable, Equatable {
    /// `{type: "profile_changed", identity, name, avatarUrl}`: the participant renamed itself.
    case profileChanged(identity: String, name: String, avatarURL: String)
    /// `{type: "deafen_state", identity, deafened}`: the participant deafened itself (or not).
    case deafenState(identity: String, deafened: Bool)

    public static let topic = "presence"

    /// Decodes a packet on topic `presence` the web client acts on; nil for anything else.
    /// A `profile_changed` whose name is blank after trimming carries no name change.
    public init?(topic: String?, payload: [UInt8]) {
        guard topic == Self.topic, !payload.isEmpty, payload.count <= BedrudChatPayload.maxPayloadBytes,
              let json = JSONValue16(parsing: payload), let identity = json["identity"]?.string, !identity.isEmpty
        else { return nil }
        switch json["type"]?.string {
        case "profile_changed":
            guard let name = json["name"]?.string?.trimmingWhitespaceScalars(), !name.isEmpty else { return nil }
            self = .profileChanged(identity: identity, name: name, avatarURL: json["avatarUrl"]?.string?.trimmingWhitespaceScalars() ?? "")
        case "deafen_state":
            self = .deafenState(identity: identity, deafened: json["deafened"]?.bool == true)
        default:
            return nil
        }
    }
}

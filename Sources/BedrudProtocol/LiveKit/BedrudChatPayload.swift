import FoundationEssentials

/// Bedrud's chat message: a reliable LiveKit user packet on topic `chat` carrying
/// UTF-8 JSON (bedrud-api.md §3.1):
/// `{type: "chat", id, timestamp (Unix ms), senderName, senderIdentity, message, attachments?}`.
///
/// Decoding is tolerant, like the most lenient Bedrud client (Android): the packet is
/// chat if its topic is `chat` or its JSON says `type == "chat"`; a JSON `type` other
/// than `chat` is never chat; every other key may be missing or wrongly typed.
public struct BedrudChatPayload: Sendable, Equatable {
    public var id: String
    /// Unix milliseconds as the sender stamped them (0 when absent).
    public var timestampMs: Int64
    public var senderName: String
    public var senderIdentity: String
    public var message: String
    public var attachments: [Attachment]
    /// A poll the message carries (web client v0.12: `poll`), when it is one the web
    /// client would show.
    public var poll: BedrudChatPoll?

    public struct Attachment: Sendable, Equatable {
        /// "image" (Android's default when missing).
        public var kind: String
        public var url: String
        public var mime: String
        public var width: Int
        public var height: Int
        public var size: Int
        /// The file name (`kind: "file"` attachments carry one; chat_upload.go:40-47), "" if none.
        public var name: String

        public init(kind: String = "image", url: String, mime: String = "", width: Int = 0, height: Int = 0, size: Int = 0, name: String = "") {
            self.kind = kind
            self.name = name
            self.url = url
            self.mime = mime
            self.width = width
            self.height = height
            self.size = size
        }
    }

    public init(
        id: String, timestampMs: Int64, senderName: String, senderIdentity: String,
        message: String, attachments: [Attachment] = [], poll: BedrudChatPoll? = nil
    ) {
        self.poll = poll
        self.id = id
        self.timestampMs = timestampMs
        self.senderName = senderName
        self.senderIdentity = senderIdentity
        self.message = message
        self.attachments = attachments
    }

    /// The topic Bedrud clients publish chat on.
    public static let topic = "chat"
    /// Payloads larger than this are not chat (LiveKit data packets are far smaller).
    public static let maxPayloadBytes = 1 << 20

    /// Decodes a user packet's payload, or nil when it is not a Bedrud chat message.
    public init?(topic: String?, payload: [UInt8]) {
        guard !payload.isEmpty, payload.count <= Self.maxPayloadBytes,
              let wire = try? JSONDecoder().decode(Wire.self, from: Data(payload))
        else { return nil }
        if let type = wire.type {
            guard type == "chat" else { return nil }
        } else {
            guard topic == Self.topic else { return nil }
        }
        id = wire.id ?? ""
        timestampMs = wire.timestamp ?? 0
        senderName = wire.senderName ?? ""
        senderIdentity = wire.senderIdentity ?? ""
        message = wire.message ?? ""
        attachments = wire.attachments ?? []
        poll = wire.poll
    }

    /// Attachments from the JSON text of an array (a chunked chat's `attachments` section);
    /// items without a URL are left out, and text that is no array gives none.
    public static func attachments(json: [UInt8]) -> [Attachment] {
        guard !json.isEmpty, let items = try? JSONDecoder().decode([LenientAttachment].self, from: Data(json)) else { return [] }
        return items.compactMap(\.attachment)
    }

    /// The payload as Bedrud's clients send it (`attachments` omitted when empty, as
    /// the iOS and Android apps do).
    public var payload: [UInt8] { payload(listingEmptyAttachments: false) }

    /// The payload; with `listingEmptyAttachments`, `"attachments":[]` is written when there
    /// are none, as the web client sends it.
    public func payload(listingEmptyAttachments: Bool) -> [UInt8] {
        var out = "{\"type\":\"chat\",\"id\":" + JSONText.quoted(id)
        out += ",\"timestamp\":\(timestampMs)"
        out += ",\"message\":" + JSONText.quoted(message)
        out += ",\"senderName\":" + JSONText.quoted(senderName)
        out += ",\"senderIdentity\":" + JSONText.quoted(senderIdentity)
        if !attachments.isEmpty || listingEmptyAttachments {
            out += ",\"attachments\":[" + attachments.map { a in
                a.json
            }.joined(separator: ",") + "]"
        }
        if let poll { out += ",\"poll\":" + poll.json }
        return Array((out + "}").utf8)
    }

    /// The JSON text of the `attachments` array as the web client writes it.
    public var attachmentsJSON: String { "[" + attachments.map(\.json).joined(separator: ",") + "]" }

    // MARK: - Tolerant wire form

    private struct Wire: Decodable {
        var type: String?
        var id: String?
        var timestamp: Int64?
        var senderName: String?
        var senderIdentity: String?
        var message: String?
        var attachments: [Attachment]?
        var poll: BedrudChatPoll?

        enum CodingKeys: String, CodingKey { case type, id, timestamp, senderName, senderIdentity, message, attachments, poll }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            type = try? c.decodeIfPresent(String.self, forKey: .type)
            id = LenientJSON.string(c, .id)
            timestamp = LenientJSON.int64(c, .timestamp)
            senderName = try? c.decodeIfPresent(String.self, forKey: .senderName)
            senderIdentity = try? c.decodeIfPresent(String.self, forKey: .senderIdentity)
            message = try? c.decodeIfPresent(String.self, forKey: .message)
            if let items = try? c.decodeIfPresent([LenientAttachment].self, forKey: .attachments) {
                attachments = items.compactMap(\.attachment)
            }
            poll = (try? c.decodeIfPresent(BedrudChatPoll.Lenient.self, forKey: .poll))?.poll
        }
    }

    /// Drops attachments without a URL (every client does); defaults the rest.
    private struct LenientAttachment: Decodable {
        var attachment: Attachment?

        enum CodingKeys: String, CodingKey { case kind, url, mime, w, h, size, name }

        init(from decoder: any Decoder) throws {
            guard let c = try? decoder.container(keyedBy: CodingKeys.self),
                  let url = try? c.decodeIfPresent(String.self, forKey: .url), !url.isEmpty
            else { return }
            attachment = Attachment(
                kind: (try? c.decodeIfPresent(String.self, forKey: .kind)) ?? "image",
                url: url,
                mime: (try? c.decodeIfPresent(String.self, forKey: .mime)) ?? "",
                width: LenientJSON.int64(c, .w).map { Int(clamping: $0) } ?? 0,
                height: LenientJSON.int64(c, .h).map { Int(clamping: $0) } ?? 0,
                size: LenientJSON.int64(c, .size).map { Int(clamping: $0) } ?? 0,
                name: (try? c.decodeIfPresent(String.self, forKey: .name))?.trimmingWhitespaceScalars() ?? "")
        }
    }
}

extension BedrudChatPayload.Attachment {
    /// One attachment as the web client writes it (`name` only when there is one).
    var json: String {
        "{\"kind\":\(JSONText.quoted(kind)),\"url\":\(JSONText.quoted(url)),\"mime\":\(JSONText.quoted(mime)),\"w\":\(width),\"h\":\(height),\"size\":\(size)"
            + (name.isEmpty ? "" : ",\"name\":" + JSONText.quoted(name)) + "}"
    }
}

/// Key readers that accept the shapes JavaScript senders produce.
enum LenientJSON {
    /// An integer written as an integer, a float (truncated) or a numeric string.
    static func int64<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) -> Int64? {
        if let v = try? c.decodeIfPresent(Int64.self, forKey: key) { return v }
        if let d = try? c.decodeIfPresent(Double.self, forKey: key), d.isFinite,
           d > -9.2e18, d < 9.2e18 { return Int64(d) }
        if let s = try? c.decodeIfPresent(String.self, forKey: key) { return Int64(s) }
        return nil
    }

    /// A string, or a number rendered as a string.
    static func string<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) -> String? {
        if let s = try? c.decodeIfPresent(String.self, forKey: key) { return s }
        return int64(c, key).map { String($0) }
    }
}

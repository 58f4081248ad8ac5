/// Puts Bedrud chats back together and drops repeats: a pure value, fed every decoded chat
/// packet with the time on the owner's clock, returning what became whole or was given up.
///
/// The wire (Bedrud web v0.12, chatDataChannel.ts `buildChatWirePackets`): a chat whose JSON
/// is over 60,000 bytes goes as one `chat_chunk_meta` (counts per section) followed by
/// `chat_chunk`s (`kind` message|attachments|poll, `index`, `part`). Each section's text is
/// cut on UTF-16 code units, so parts are joined as UTF-16 before they become text; the
/// `attachments` and `poll` sections are the JSON text of those fields.
///
/// As the web client: a chunk for an id with no meta is ignored, a repeated index is
/// ignored, a second meta with the same counts keeps what arrived, other counts start over,
/// and a message untouched for `timeoutMs` is forgotten. Unlike it, everything is bounded
/// (chunks per message, UTF-16 units per message and in flight, messages in flight), a
/// chunk is taken only from the meta's sender, and chats are deduplicated by `id` (web
/// retries resend with the same id).
public struct ChatAssembler: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Chunks one message may announce (64 × 60,000 bytes ≈ 3.8 MB of JSON).
        public var maxChunksPerMessage = 64
        /// UTF-16 code units one message may hold across all sections (2 bytes each in memory).
        public var maxMessageUnits = 2_000_000
        /// UTF-16 code units held for all messages in flight together.
        public var maxInFlightUnits = 6_000_000
        /// Messages in flight at once; a new meta beyond this evicts the stalest one.
        public var maxPendingMessages = 32
        /// A message with no new chunk for this long is given up (the web client's 120 s).
        public var timeoutMs: Int64 = 120_000
        /// Chat ids remembered to drop repeats.
        public var rememberedIds = 2048
        public init() {}
    }

    /// Why a chunked message was given up.
    public enum DropReason: String, Sendable, Equatable {
        /// The meta announced more than `maxChunksPerMessage`.
        case tooManyChunks = "too_many_chunks"
        /// The parts grew past `maxMessageUnits`.
        case tooLarge = "too_large"
        /// All messages in flight together would pass `maxInFlightUnits`.
        case inFlightFull = "in_flight_full"
        /// Too many messages in flight: the stalest was dropped for a new one.
        case evicted
        /// No chunk came for `timeoutMs`.
        case timedOut = "timed_out"
        /// The parts were all there but the attachments or poll section was not valid JSON.
        case undecodable
        /// The session ended before the message was complete.
        case incomplete
    }

    /// A chunked message given up, for the transcript.
    public struct Drop: Sendable, Equatable {
        public var id: String
        /// The identity the server stamped on the meta.
        public var sender: String
        public var reason: DropReason
        public var receivedChunks: Int
        public var expectedChunks: Int

        public init(id: String, sender: String, reason: DropReason, receivedChunks: Int, expectedChunks: Int) {
            self.id = id
            self.sender = sender
            self.reason = reason
            self.receivedChunks = receivedChunks
            self.expectedChunks = expectedChunks
        }
    }

    public enum Output: Sendable, Equatable {
        /// A whole chat (single packet or reassembled), seen for the first time; `sender` is
        /// the server-stamped identity of the packet (or meta).
        case chat(BedrudChatPayload, sender: String)
        case dropped(Drop)
    }

    /// Counters for logs and the summary.
    public struct Stats: Sendable, Equatable {
        public var chats = 0
        public var reassembled = 0
        public var duplicateChats = 0
        /// Chunks with no meta in flight (or from another sender than the meta's).
        public var orphanChunks = 0
        /// Chunks whose index was out of range or already filled.
        public var ignoredChunks = 0
        public var dropped = 0
        public init() {}
    }

    private struct Pending {
        var meta: BedrudChatChunkMeta
        var sender: String
        var parts: [BedrudChatChunk.Kind: [[UInt16]?]]
        var received = 0
        var units = 0
        var updatedAt: Int64

        init(meta: BedrudChatChunkMeta, sender: String, at now: Int64) {
            self.meta = meta
            self.sender = sender
            parts = [
                .message: Array(repeating: nil, count: meta.messageChunks),
                .attachments: Array(repeating: nil, count: meta.attachmentChunks),
                .poll: Array(repeating: nil, count: meta.pollChunks),
            ]
            updatedAt = now
        }

        func joined(_ kind: BedrudChatChunk.Kind) -> [UInt16] { (parts[kind] ?? []).reduce(into: []) { $0 += $1 ?? [] } }
    }

    public let limits: Limits
    public private(set) var stats = Stats()
    private var pending: [String: Pending] = [:]
    private var inFlightUnits = 0
    private var seen: Set<String> = []
    private var seenOrder: [String] = []
    private var seenHead = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Messages in flight now.
    public var pendingCount: Int { pending.count }
    /// UTF-16 code units held now.
    public var heldUnits: Int { inFlightUnits }

    /// Takes one decoded packet from `sender` (the server-stamped identity) at `nowMs`.
    /// Reactions and votes pass through untouched (they are not chats): the caller handles them.
    public mutating func handle(_ packet: BedrudChatWire, from sender: String, at nowMs: Int64) -> [Output] {
        var out = expire(at: nowMs)
        switch packet {
        case .chat(let chat):
            if admit(chat.id) { out.append(.chat(chat, sender: sender)) }
        case .chunkMeta(let meta):
            out += start(meta, from: sender, at: nowMs)
        case .chunk(let chunk):
            out += add(chunk, from: sender, at: nowMs)
        case .reaction, .pollVote:
            break
        }
        return out
    }

    /// Gives up messages with no chunk for `timeoutMs` (call it on a timer too: a meta
    /// whose chunks never come is reported even if nothing else arrives).
    public mutating func expire(at nowMs: Int64) -> [Output] {
        let stale = pending.filter { nowMs - $0.value.updatedAt >= limits.timeoutMs }.map(\.key).sorted()
        return stale.compactMap { drop($0, .timedOut) }
    }

    /// Gives up everything in flight (the session is ending).
    public mutating func finish() -> [Output] {
        pending.keys.sorted().compactMap { drop($0, .incomplete) }
    }

    // MARK: -

    /// True the first time an id is seen (an empty id is never a repeat).
    private mutating func admit(_ id: String) -> Bool {
        guard !id.isEmpty else {
            stats.chats += 1
            return true
        }
        guard !seen.contains(id) else {
            stats.duplicateChats += 1
            return false
        }
        remember(id)
        stats.chats += 1
        return true
    }

    private mutating func remember(_ id: String) {
        if seenOrder.count < limits.rememberedIds {
            seenOrder.append(id)
        } else {
            seen.remove(seenOrder[seenHead])
            seenOrder[seenHead] = id
            seenHead = (seenHead + 1) % seenOrder.count
        }
        seen.insert(id)
    }

    private mutating func start(_ meta: BedrudChatChunkMeta, from sender: String, at now: Int64) -> [Output] {
        if seen.contains(meta.id) {  // a retry of a message already shown
            stats.duplicateChats += 1
            return []
        }
        if var existing = pending[meta.id], existing.sender == sender {
            let same = existing.meta.messageChunks == meta.messageChunks && existing.meta.attachmentChunks == meta.attachmentChunks
                && existing.meta.pollChunks == meta.pollChunks
            if same {
                existing.updatedAt = now
                pending[meta.id] = existing
                return []
            }
            release(meta.id)
        } else if pending[meta.id] != nil {
            return []  // someone else's message id: keep the first sender's
        }
        guard meta.totalChunks <= limits.maxChunksPerMessage else {
            return [.dropped(record(Drop(id: meta.id, sender: sender, reason: .tooManyChunks, receivedChunks: 0, expectedChunks: meta.totalChunks)))]
        }
        var out: [Output] = []
        if pending.count >= limits.maxPendingMessages,
           let stalest = pending.min(by: { ($0.value.updatedAt, $0.key) < ($1.value.updatedAt, $1.key) })?.key,
           let d = drop(stalest, .evicted) {
            out.append(d)
        }
        pending[meta.id] = Pending(meta: meta, sender: sender, at: now)
        return out
    }

    private mutating func add(_ chunk: BedrudChatChunk, from sender: String, at now: Int64) -> [Output] {
        guard var entry = pending[chunk.id], entry.sender == sender else {
            stats.orphanChunks += 1
            return []
        }
        guard var section = entry.parts[chunk.kind], chunk.index >= 0, chunk.index < section.count, section[chunk.index] == nil else {
            stats.ignoredChunks += 1
            return []
        }
        if entry.units + chunk.part.count > limits.maxMessageUnits {
            return drop(chunk.id, .tooLarge).map { [$0] } ?? []
        }
        if inFlightUnits + chunk.part.count > limits.maxInFlightUnits {
            return drop(chunk.id, .inFlightFull).map { [$0] } ?? []
        }
        section[chunk.index] = chunk.part
        entry.parts[chunk.kind] = section
        entry.received += 1
        entry.units += chunk.part.count
        entry.updatedAt = now
        inFlightUnits += chunk.part.count
        pending[chunk.id] = entry
        guard entry.received == entry.meta.totalChunks else { return [] }
        release(chunk.id)
        return complete(entry)
    }

    private mutating func complete(_ entry: Pending) -> [Output] {
        let meta = entry.meta
        var attachments: [BedrudChatPayload.Attachment] = []
        var poll: BedrudChatPoll?
        if meta.attachmentChunks > 0 {
            let json = Array(String(decoding: entry.joined(.attachments), as: UTF16.self).utf8)
            guard Self.isJSONArray(json) else {
                return [.dropped(record(Drop(id: meta.id, sender: entry.sender, reason: .undecodable,
                                             receivedChunks: entry.received, expectedChunks: meta.totalChunks)))]
            }
            attachments = BedrudChatPayload.attachments(json: json)
        }
        if meta.pollChunks > 0 {
            poll = BedrudChatPoll(json: Array(String(decoding: entry.joined(.poll), as: UTF16.self).utf8))
        }
        let chat = BedrudChatPayload(
            id: meta.id, timestampMs: meta.timestampMs, senderName: meta.senderName, senderIdentity: meta.senderIdentity,
            message: String(decoding: entry.joined(.message), as: UTF16.self), attachments: attachments, poll: poll)
        guard admit(meta.id) else { return [] }
        stats.reassembled += 1
        return [.chat(chat, sender: entry.sender)]
    }

    /// `JSON.parse(...)` of the section would throw in the web client: the message is lost there.
    private static func isJSONArray(_ json: [UInt8]) -> Bool {
        guard let v = JSONValue16(parsing: json), case .array = v else { return false }
        return true
    }

    private mutating func release(_ id: String) {
        guard let entry = pending.removeValue(forKey: id) else { return }
        inFlightUnits -= entry.units
    }

    private mutating func drop(_ id: String, _ reason: DropReason) -> Output? {
        guard let entry = pending[id] else { return nil }
        release(id)
        return .dropped(record(Drop(id: id, sender: entry.sender, reason: reason,
                                    receivedChunks: entry.received, expectedChunks: entry.meta.totalChunks)))
    }

    private mutating func record(_ d: Drop) -> Drop {
        stats.dropped += 1
        return d
    }
}

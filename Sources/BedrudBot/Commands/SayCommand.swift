import BedrudCore
import BedrudProtocol
import FoundationEssentials
import Dispatch
import Glibc

/// `bedrud-bot say ROOM|LINK "text"`: joins, sends one Bedrud chat message on the
/// publisher's reliable data channel, waits until the server has acknowledged it, leaves.
/// What goes on the wire is what Bedrud's web client v0.12 sends: one `chat` packet, or a
/// `chat_chunk_meta` and `chat_chunk`s when its JSON is over 60,000 bytes (``ChatChunker``);
/// `--image` inline as a `data:` URL; `--react` a `reaction` packet.
enum SayCommand {
    static let spec = CommandSpec(
        "say", summary: "send one chat message to a room and leave",
        discussion: """
            Joins ROOM (a room name or meeting link, as for 'join'), sends TEXT as a Bedrud chat
            message (a reliable LiveKit data packet on topic "chat" with the JSON the web client
            sends: type, id, timestamp, senderName, senderIdentity, message, attachments), waits
            until the server has acknowledged it, and leaves. Bedrud keeps no chat history: only
            participants in the room at that moment see it.

            --attach URL adds an image attachment (kind "image"); the web client shows only
            http(s) URLs, so other schemes are refused.

            --image FILE adds a PNG, JPEG, GIF or WebP image inline, as a data: URL, the way
            Bedrud sends images under 512,000 bytes; a message over 60,000 bytes is sent in
            chunks, as the web client sends it. Larger images are refused (say does not
            upload them to the server).

            --react EMOJI --to ID toggles a reaction on the chat message with that id (the
            'id' of a chat event in events.jsonl) instead of sending TEXT.

            Examples:
              bedrud-bot say standup "Recording starts in 1 minute"
              bedrud-bot say https://meet.example.com/m/standup "Build is green" --attach https://ci.example.com/badge.png
              bedrud-bot say standup "Today's chart" --image chart.png
              bedrud-bot say standup --react 👍 --to 3f0c2a9e-5b1d-4c8e-9a77-4d2f1b7e9c11
            """,
        arguments: [ArgumentSpec("ROOM|LINK", help: "room name or meeting link"), ArgumentSpec("TEXT", optional: true, help: "the message")],
        options: [
            OptionSpec("attach", value: "URL", help: "Add an image attachment (http or https URL)."),
            OptionSpec("image", value: "FILE", help: "Add an image file inline (PNG, JPEG, GIF or WebP under 512,000 bytes)."),
            OptionSpec("react", value: "EMOJI", help: "Send a reaction to the message given by --to instead of TEXT."),
            OptionSpec("to", value: "ID", help: "With --react: the id of the chat message to react to."),
            OptionSpec("timeout", value: "DURATION", help: "Give up joining and sending after this long (default 30s)."),
        ] + OptionGroups.link,
        action: run)

    /// The attachment for `--attach`: an http(s) image URL, MIME type from its extension.
    static func attachment(_ text: String) throws -> BedrudChatPayload.Attachment {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw CommandFailure(.usage, "--attach expects an http or https image URL, got '\(text)'")
        }
        let mime: String
        switch url.pathExtension.lowercased() {
        case "png": mime = "image/png"
        case "jpg", "jpeg": mime = "image/jpeg"
        case "gif": mime = "image/gif"
        case "webp": mime = "image/webp"
        case "svg": mime = "image/svg+xml"
        default: mime = "image/*"
        }
        return BedrudChatPayload.Attachment(kind: "image", url: text, mime: mime)
    }

    /// Bedrud inlines images smaller than this as data: URLs (chat_upload.go, `InlineMaxBytes` default).
    static let inlineImageLimit = 512_000

    /// The attachment for `--image`: the file as a data: URL, MIME type from its first bytes
    /// (the types Bedrud's upload accepts), width and height for PNG and GIF.
    static func inlineImage(path: String, bytes: [UInt8]) throws -> BedrudChatPayload.Attachment {
        guard bytes.count < inlineImageLimit else {
            throw CommandFailure(.usage, "--image \(TerminalText.quoted(path)) is \(bytes.count) bytes; Bedrud sends only images under \(inlineImageLimit) bytes inline, and say does not upload larger ones")
        }
        let mime: String
        var width = 0, height = 0
        func be32(_ i: Int) -> Int { bytes.count >= i + 4 ? Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) : 0 }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            mime = "image/png"
            if bytes.count >= 24, Array(bytes[12..<16]) == Array("IHDR".utf8) { (width, height) = (be32(16), be32(20)) }
        } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            mime = "image/jpeg"
        } else if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) {
            mime = "image/gif"
            if bytes.count >= 10 { (width, height) = (Int(bytes[6]) | Int(bytes[7]) << 8, Int(bytes[8]) | Int(bytes[9]) << 8) }
        } else if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            mime = "image/webp"
        } else {
            throw CommandFailure(.usage, "--image \(TerminalText.quoted(path)) is not a PNG, JPEG, GIF or WebP image")
        }
        return BedrudChatPayload.Attachment(kind: "image", url: "data:\(mime);base64," + Data(bytes).base64EncodedString(), mime: mime,
                                            width: width, height: height, size: bytes.count)
    }

    static func readImage(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandFailure(.usage, "--image \(TerminalText.quoted(path)): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while out.count <= inlineImageLimit {  // read one byte past the limit at most: a huge file is refused, not loaded
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw CommandFailure(.usage, "--image \(TerminalText.quoted(path)): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return out
    }

    /// The reliable data packet carrying `chat` (topic `chat`, bedrud-api.md §3.1).
    static func packet(_ chat: BedrudChatPayload, sequence: UInt32) -> LiveKit.DataPacket {
        packet(chat.payload(listingEmptyAttachments: true), from: chat.senderIdentity, sequence: sequence)
    }

    /// A reliable data packet on topic `chat` with `payload`.
    static func packet(_ payload: [UInt8], from identity: String, sequence: UInt32) -> LiveKit.DataPacket {
        var user = LiveKit.UserPacket()
        user.payload = payload
        user.topic = BedrudChatPayload.topic
        user.participantIdentity = identity
        var p = LiveKit.DataPacket()
        p.kind = .reliable
        p.participantIdentity = identity
        p.sequence = sequence
        p.value = .user(user)
        return p
    }

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let text = inv.positionals.count > 1 ? inv.positionals[1] : ""
        var attachments = try inv.value("attach").map { [try attachment($0)] } ?? []
        if let path = inv.value("image") { attachments.append(try inlineImage(path: path, bytes: try readImage(path))) }
        let reaction = inv.value("react")
        let target = inv.value("to")
        if let reaction {
            guard !reaction.isEmpty, let target, !target.isEmpty else { throw CommandFailure(.usage, "--react needs --to ID, the id of the message to react to") }
            guard text.isEmpty && attachments.isEmpty else { throw CommandFailure(.usage, "--react sends only a reaction: give no TEXT, --attach or --image with it") }
        } else if target != nil {
            throw CommandFailure(.usage, "--to goes with --react")
        } else if text.isEmpty && attachments.isEmpty {
            throw CommandFailure(.usage, "nothing to say: TEXT is empty and there is no --attach, --image or --react")
        }
        let timeout = try JoinCommand.parseDuration(inv, "timeout") ?? 30
        guard timeout > 0 else { throw CommandFailure(.usage, "--timeout must be longer than 0") }

        let plan = try JoinPlan.make(ctx, target: inv.positionals[0])
        let join = try await plan.requestToken()
        let claims = JWTClaims(token: join.token)
        let session = RoomSession(plan: plan, join: join, timeout: timeout, publishData: true)
        await session.connect()
        guard await session.waitForDataChannel(timeout: timeout) else {
            if let f = await session.leave() { throw f }
            throw CommandFailure(.network, "the data channel to the server did not open within \(ConfigValues.formatDuration(timeout))"
                                 + (session.transport.lastError.map { ": \($0)" } ?? "") + "; check that UDP to the media server is allowed")
        }
        let local = session.joined
        let who = local ?? (claims?.subject ?? "", claims?.name ?? "")
        let payloads: [[UInt8]]
        if let reaction, let target {
            payloads = [BedrudReaction(messageId: target, emoji: reaction, voterIdentity: who.identity).payload]
        } else {
            let chat = BedrudChatPayload(
                id: UUID().uuidString.lowercased(), timestampMs: Int64(Date().timeIntervalSince1970 * 1000),
                senderName: who.name.isEmpty ? who.identity : who.name, senderIdentity: who.identity, message: text, attachments: attachments)
            do {
                payloads = try ChatChunker.packets(for: chat)
            } catch {
                _ = await session.leave()
                throw CommandFailure(.usage, "the message cannot be split into data packets (the sender name is too long)")
            }
        }
        var sent = true
        for (i, payload) in payloads.enumerated() where sent {
            sent = await session.sendData(packet(payload, from: who.identity, sequence: UInt32(i + 1)).protobufBytes(), reliable: true)
        }
        let acknowledged = sent ? await session.transport.waitUntilDataSent(timeoutSeconds: min(timeout, 10)) : false
        let ended = await session.leave()
        guard sent else { throw CommandFailure(.network, "the message could not be sent on the data channel (too large, or the channel closed)") }
        guard acknowledged else { throw CommandFailure(.network, "the server did not acknowledge the message in time; it may not have arrived") }
        if let ended { throw ended }
        if let reaction {
            inv.console.err(TerminalText.sanitize("Reacted \(reaction) in '\(join.room.name)' as \(who.identity)."))
        } else {
            let pieces = payloads.count > 1 ? " in \(payloads.count) packets" : ""
            inv.console.err("Said \(text.isEmpty ? "nothing" : "\(text.count) characters")\(attachments.isEmpty ? "" : " with an image") in '\(join.room.name)' as \(who.identity)\(pieces).")
        }
        return .success
    }
}


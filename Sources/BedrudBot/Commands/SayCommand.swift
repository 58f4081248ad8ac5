import BedrudCore
import BedrudProtocol
import FoundationEssentials
import Dispatch
import Glibc

/// `bedrud-bot say ROOM|LINK "text"`: joins, sends one Bedrud chat message on the
/// publisher's reliable data channel, waits until the server has acknowledged it, leaves.
/// What goes on the wire is what Bedrud's web client v0.12 sends: one `chat` packet, or a
/// `chat_chunk_meta` and `chat_chunk`s when its JSON is over 60,000 bytes (``ChatChunker``);
/// `--image` uploaded and sent as the server answers (a `data:` URL under 512,000 bytes, else
/// its `/uploads/chat/` URL); `--react` a `reaction` packet.
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

            --image FILE adds a PNG, JPEG, GIF or WebP image the way the web client does: it
            checks the file against the server's limits (chatUploadMaxBytes, 10 MiB by
            default, and chatUploadMaxDimension, 8192 pixels; exit 12 naming the limit),
            uploads it to the room (POST /api/room/ID/chat/upload, after joining: only
            participants may) and sends the attachment the server answers. The server puts
            an image under 512,000 bytes inline, as a data: URL, so the message is usually
            sent in chunks (a message over 60,000 bytes is); a larger one it keeps, and the
            message carries its /uploads/chat/... URL (relative to the server; participants
            fetch it with their token). An upload the server refuses exits with its class:
            401 → 4, 403 (not a participant, chat disabled) → 6, 400/413/429 and a full
            upload quota (507) → 12.

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
            Options.attach.spec,
            Options.image.spec,
            Options.react.spec,
            Options.to.spec,
            Options.timeout.spec,
        ] + OptionGroups.link,
        action: run)

    /// Declared once: the spec lists them and the command reads them through these.
    enum Options {
        static let attach = ValueOption("attach", value: "URL", help: "Add an image attachment (http or https URL).")
        static let image = ValueOption("image", value: "FILE", help: "Add an image file (PNG, JPEG, GIF or WebP), uploaded to the room as the web client does.")
        static let react = ValueOption("react", value: "EMOJI", help: "Send a reaction to the message given by --to instead of TEXT.")
        static let to = ValueOption("to", value: "ID", help: "With --react: the id of the chat message to react to.")
        static let timeout = ValueOption("timeout", value: "DURATION",
                                         help: "Give up joining and sending after this long (default \(ConfigValues.formatDuration(defaultTimeout))).")
        static let defaultTimeout: Double = 30
    }

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

    /// Bedrud's server answers an upload of an image smaller than this with a `data:` URL
    /// (storage/chat_upload.go:241-245 `InlineMaxBytes` default, :383-388), so that the image
    /// travels inside the chat message; from this size on it stores the file. (The server
    /// decides; `say` only reads at least this much of a file.)
    static let inlineImageLimit = 512_000

    /// An `--image` file: its bytes, and the type and pixel size read from its first bytes.
    struct ImageFile {
        var path: String
        var bytes: [UInt8]
        /// The file's size (fstat), which may be more than the bytes read.
        var fileSize: Int
        var mime: String
        /// From a PNG's IHDR or a GIF's screen descriptor; 0 when not read (JPEG, WebP).
        var width = 0, height = 0
        var fileName: String { path.split(separator: "/").last.map(String.init) ?? "image" }
    }

    /// The type Bedrud's upload accepts (PNG, JPEG, GIF or WebP, sniffed as chat_upload.go:141-160
    /// does) and the pixel size, read from the first bytes; nil for any other file.
    static func sniff(_ bytes: [UInt8]) -> (mime: String, width: Int, height: Int)? {
        func be32(_ i: Int) -> Int { bytes.count >= i + 4 ? Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) : 0 }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            guard bytes.count >= 24, Array(bytes[12..<16]) == Array("IHDR".utf8) else { return ("image/png", 0, 0) }
            return ("image/png", be32(16), be32(20))
        } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            return ("image/jpeg", 0, 0)
        } else if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) {
            guard bytes.count >= 10 else { return ("image/gif", 0, 0) }
            return ("image/gif", Int(bytes[6]) | Int(bytes[7]) << 8, Int(bytes[8]) | Int(bytes[9]) << 8)
        } else if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            return ("image/webp", 0, 0)
        }
        return nil
    }

    /// The web client's checks before it uploads (ChatInput.tsx:186-212): the file's size
    /// against the server's `chatUploadMaxBytes`, its pixel size against
    /// `chatUploadMaxDimension`. A refusal is exit 12, naming the limit.
    static func check(_ image: ImageFile, against limits: ChatUploadLimits) throws {
        let name = TerminalText.quoted(image.path)
        if max(image.fileSize, image.bytes.count) > limits.maxBytes {
            throw CommandFailure(.rejected, "--image \(name) is \(max(image.fileSize, image.bytes.count)) bytes; the server takes chat images of at most \(limits.maxBytes) bytes")
        }
        if image.width > limits.maxDimension || image.height > limits.maxDimension {
            throw CommandFailure(.rejected, "--image \(name) is \(image.width)×\(image.height) pixels; the server takes chat images of at most \(limits.maxDimension)×\(limits.maxDimension)")
        }
    }

    /// The attachment for the upload's answer, field for field (the web client sends the
    /// answer as it came, after normalizeChatAttachment: MeetingContext.tsx:100-132).
    static func attachment(_ upload: ChatUpload) -> BedrudChatPayload.Attachment {
        BedrudChatPayload.Attachment(kind: upload.kind ?? "image", url: upload.url, mime: upload.mime, width: upload.w, height: upload.h,
                                     size: upload.size, name: upload.name ?? "")
    }

    /// Uploads `image` as the web client does (ChatPanel.tsx:119-129); a refusal becomes
    /// ``uploadFailure(_:image:limits:)``.
    static func upload(_ image: ImageFile, roomID: String, auth: AuthManager, limits: ChatUploadLimits) async throws -> BedrudChatPayload.Attachment {
        do {
            let answer = try await RoomAPI(auth: auth).uploadChatImage(roomID: roomID, filename: image.fileName, mime: image.mime, data: image.bytes)
            return attachment(answer)
        } catch let e as APIError where e.status != nil {
            throw uploadFailure(e, image: image, limits: limits)
        }
    }

    /// An upload the server refused, in its exit class (401 → 4, 403 → 6, 404 → 5,
    /// 400/413/429 → 12, 5xx → 9) with what was refused; a 413 names the limit, and a 507
    /// (the server's upload quota, handlers/room.go:2707-2729) is 12: the request as given
    /// is refused, the server has not failed.
    static func uploadFailure(_ e: APIError, image: ImageFile, limits: ChatUploadLimits) -> CommandFailure {
        let name = TerminalText.quoted(image.path)
        let text = TerminalText.sanitize(String(e.message.prefix(200)))
        switch e.status ?? 0 {
        case 413:
            return CommandFailure(.rejected, "the server refused --image \(name) (\(image.bytes.count) bytes) as too large (HTTP 413: \(text)); it takes chat images of at most \(limits.maxBytes) bytes, with the request's framing")
        case 507:
            return CommandFailure(.rejected, "the server refused --image \(name): its upload storage is full (HTTP 507: \(text))")
        default:
            return CommandFailure(ErrorReporting.exitCode(for: e), "the server refused the upload of --image \(name) (HTTP \(e.status ?? 0): \(text))")
        }
    }

    /// Reads the file, at most `limit + 1` bytes: a file larger than the limit is refused,
    /// not loaded whole.
    static func readImage(_ path: String, limit: Int) throws -> (bytes: [UInt8], fileSize: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandFailure(.usage, "--image \(TerminalText.quoted(path)): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var st = stat()
        let known = fstat(fd, &st) == 0
        if known, (st.st_mode & S_IFMT) == S_IFDIR { throw CommandFailure(.usage, "--image \(TerminalText.quoted(path)) is a directory") }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while out.count <= limit {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, min($0.count, limit + 1 - out.count)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw CommandFailure(.usage, "--image \(TerminalText.quoted(path)): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return (out, known && (st.st_mode & S_IFMT) == S_IFREG ? Int(st.st_size) : out.count)
    }

    /// Sniffs `--image` from its first bytes: exit 2 for a file that cannot be read or is not
    /// an image Bedrud accepts, before anything is asked of the server.
    static func sniffImage(_ path: String) throws {
        guard sniff(try readImage(path, limit: 63).bytes) != nil else {
            throw CommandFailure(.usage, "--image \(TerminalText.quoted(path)) is not a PNG, JPEG, GIF or WebP image")
        }
    }

    /// Reads `--image` (at most `limit + 1` bytes) and what its first bytes say.
    static func loadImage(_ path: String, limit: Int) throws -> ImageFile {
        let (bytes, fileSize) = try readImage(path, limit: limit)
        guard let kind = sniff(bytes) else {
            throw CommandFailure(.usage, "--image \(TerminalText.quoted(path)) is not a PNG, JPEG, GIF or WebP image")
        }
        return ImageFile(path: path, bytes: bytes, fileSize: fileSize, mime: kind.mime, width: kind.width, height: kind.height)
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
        var attachments = try inv[Options.attach].map { [try attachment($0)] } ?? []
        let imagePath = inv[Options.image]
        if let imagePath { try sniffImage(imagePath) }
        let reaction = inv[Options.react]
        let target = inv[Options.to]
        if let reaction {
            guard !reaction.isEmpty, let target, !target.isEmpty else { throw CommandFailure(.usage, "--react needs --to ID, the id of the message to react to") }
            guard text.isEmpty && attachments.isEmpty && imagePath == nil else { throw CommandFailure(.usage, "--react sends only a reaction: give no TEXT, --attach or --image with it") }
        } else if target != nil {
            throw CommandFailure(.usage, "--to goes with --react")
        } else if text.isEmpty && attachments.isEmpty && imagePath == nil {
            throw CommandFailure(.usage, "nothing to say: TEXT is empty and there is no --attach, --image or --react")
        }
        let timeout = try inv.duration(Options.timeout) ?? Options.defaultTimeout
        guard timeout > 0 else { throw CommandFailure(.usage, "--timeout must be longer than 0") }

        let plan = try JoinPlan.make(ctx, target: inv.positionals[0])
        // --image: read and sniffed first (exit 2 before any request), then checked against the
        // server's limits as the web client checks it, before joining.
        var image: ImageFile?
        var limits = ChatUploadLimits()
        if let imagePath {
            limits = await RoomAPI.chatUploadLimits(api: plan.auth.api)
            image = try loadImage(imagePath, limit: max(limits.maxBytes, inlineImageLimit))
            try check(image!, against: limits)
        }
        let join = try await plan.requestToken()
        if let image {
            // As the web client: every image is uploaded (after the join: only participants
            // may) and the server's answer sent on (ChatPanel.tsx:119-129). The server decides
            // inline or stored: under 512,000 bytes a data: URL, else its /uploads/chat/ URL.
            attachments.append(try await upload(image, roomID: join.room.id, auth: plan.auth, limits: limits))
        }
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
            let uploaded = image != nil && attachments.last.map { !$0.url.lowercased().hasPrefix("data:") } == true
            inv.console.err("Said \(text.isEmpty ? "nothing" : "\(text.count) characters")\(attachments.isEmpty ? "" : " with an image")\(uploaded ? " (uploaded to the server)" : "") in '\(join.room.name)' as \(who.identity)\(pieces).")
        }
        return .success
    }
}


import BedrudCore
import BedrudProtocol
import FoundationEssentials
import Dispatch
import Glibc

/// `bedrud-bot say ROOM|LINK "text"`: joins, sends one Bedrud chat message on the
/// publisher's reliable data channel, waits until the server has acknowledged it, leaves.
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

            Examples:
              bedrud-bot say standup "Recording starts in 1 minute"
              bedrud-bot say https://meet.example.com/m/standup "Build is green" --attach https://ci.example.com/badge.png
            """,
        arguments: [ArgumentSpec("ROOM|LINK", help: "room name or meeting link"), ArgumentSpec("TEXT", help: "the message")],
        options: [
            OptionSpec("attach", value: "URL", help: "Add an image attachment (http or https URL)."),
            OptionSpec("timeout", value: "DURATION", help: "Give up joining and sending after this long (default 30s)."),
            OptionSpec("guest-name", value: "NAME", help: "Display name when joining a link's server as a guest (default: bedrud-bot)."),
            OptionSpec("ca-file", value: "FILE", help: "For a link to an unconfigured server: trust this PEM CA."),
            OptionSpec("pin-sha256", value: "FINGERPRINT", help: "For a link to an unconfigured server: trust this certificate."),
            OptionSpec("tls-insecure", help: "For a link to an unconfigured server: skip certificate checks."),
        ],
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

    /// The reliable data packet carrying `chat` (topic `chat`, bedrud-api.md §3.1).
    static func packet(_ chat: BedrudChatPayload, sequence: UInt32) -> LiveKit.DataPacket {
        var user = LiveKit.UserPacket()
        user.payload = chat.payload(listingEmptyAttachments: true)
        user.topic = BedrudChatPayload.topic
        user.participantIdentity = chat.senderIdentity
        var p = LiveKit.DataPacket()
        p.kind = .reliable
        p.participantIdentity = chat.senderIdentity
        p.sequence = sequence
        p.value = .user(user)
        return p
    }

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let text = inv.positionals[1]
        let attachments = try inv.value("attach").map { [try attachment($0)] } ?? []
        if text.isEmpty && attachments.isEmpty { throw CommandFailure(.usage, "nothing to say: TEXT is empty and there is no --attach") }
        let timeout = try JoinCommand.parseDuration(inv, "timeout") ?? 30
        guard timeout > 0 else { throw CommandFailure(.usage, "--timeout must be longer than 0") }

        let plan = try JoinPlan.make(ctx, target: inv.positionals[0])
        let join = try await plan.requestToken()
        let claims = JWTClaims(token: join.token)
        let transport = WebRTCTransport(
            router: nil, localAddresses: RoomRun.isLoopback(join.livekitHost) ? ["127.0.0.1"] : [], connectTimeoutSeconds: timeout,
            publishData: true)
        let room = RoomManager(livekitHost: join.livekitHost, tls: plan.instance.tls, clientVersion: BedrudBotVersion.string,
                               transport: transport, tokenProvider: { try await plan.requestToken().token })
        let local = LocalIdentity()
        let watch = Task {
            for await event in room.events {
                if case .roomJoined(_, let me) = event { local.set(identity: me.identity, name: me.name) }
                if case .disconnected = event { transport.cancelDataChannelWaits() }
            }
        }
        defer { watch.cancel() }
        await room.connect(token: join.token)
        let opened = await transport.waitForDataChannel("_reliable", timeoutSeconds: timeout)
        guard opened else {
            let ended = await room.leave()
            await transport.shutdown()
            if ended != .left { throw CommandFailure(ended.exitCode, RoomEventFormatter.explain(ended) + (await room.lastConnectError.map { ": \($0)" } ?? "")) }
            throw CommandFailure(.network, "the data channel to the server did not open within \(ConfigValues.formatDuration(timeout))"
                                 + (transport.lastError.map { ": \($0)" } ?? "") + "; check that UDP to the media server is allowed")
        }
        let who = local.value ?? (claims?.subject ?? "", claims?.name ?? "")
        let chat = BedrudChatPayload(
            id: UUID().uuidString.lowercased(), timestampMs: Int64(Date().timeIntervalSince1970 * 1000),
            senderName: who.name.isEmpty ? who.identity : who.name, senderIdentity: who.identity, message: text, attachments: attachments)
        let sent = await transport.sendData(packet(chat, sequence: 1).protobufBytes(), reliable: true)
        let acknowledged = sent ? await transport.waitUntilDataSent(timeoutSeconds: min(timeout, 10)) : false
        let ended = await room.leave()
        await transport.shutdown()
        guard sent else { throw CommandFailure(.network, "the message could not be sent on the data channel (too large, or the channel closed)") }
        guard acknowledged else { throw CommandFailure(.network, "the server did not acknowledge the message in time; it may not have arrived") }
        guard ended == .left else { throw CommandFailure(ended.exitCode, RoomEventFormatter.explain(ended)) }
        inv.console.err("Said \(text.isEmpty ? "nothing" : "\(text.count) characters")\(attachments.isEmpty ? "" : " with an image") in '\(join.room.name)' as \(who.identity).")
        return .success
    }
}

/// Our identity and name from the `join` (set by the event task, read after).
private final class LocalIdentity: Sendable {
    private let v = Mutex<(identity: String, name: String)?>(nil)
    func set(identity: String, name: String) { v.withLock { $0 = (identity, name) } }
    var value: (identity: String, name: String)? { v.withLock { $0 } }
}

import Synchronization

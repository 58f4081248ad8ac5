import BedrudCore
import BedrudNet
import BedrudProtocol
import Foundation

/// How `join` gets into a room: which server, which account, which room.
struct JoinPlan: Sendable {
    var instance: ResolvedInstance
    var roomName: String
    var auth: AuthManager
    /// True when logged in as a throwaway guest because no instance matched a link.
    var isThrowawayGuest: Bool

    /// Resolves `ROOM|LINK`: a link whose server is a configured instance uses that
    /// instance's account; a link to any other server logs in as a guest there (like the
    /// iOS app's join-by-link); a bare name uses the selected instance.
    static func make(_ ctx: BotContext, target text: String) throws -> JoinPlan {
        guard let target = MeetingTarget(text) else {
            throw CommandFailure(.usage, "'\(text)' is neither a room name nor a meeting link like https://meet.example.com/m/ROOM")
        }
        switch target {
        case .roomName(let room):
            let inst = try ctx.instance()
            return JoinPlan(instance: inst, roomName: room, auth: try ctx.authManager(for: inst), isThrowawayGuest: false)
        case .link(let server, let room):
            if let match = ctx.config.instance(matching: server) {
                let inst = try ctx.instance(named: match.name)
                return JoinPlan(instance: inst, roomName: room, auth: try ctx.authManager(for: inst), isThrowawayGuest: false)
            }
            var tls = TLSConfiguration()
            tls.caFile = ctx.invocation.value("ca-file")
            if let pin = ctx.invocation.value("pin-sha256") {
                guard let fp = CertificateFingerprint.parse(pin) else {
                    throw CommandFailure(.usage, "--pin-sha256 expects a SHA-256 fingerprint, got '\(pin)'")
                }
                tls.pinnedSHA256 = [fp]
            }
            tls.insecure = ctx.invocation.flag("tls-insecure")
            let guestName = ctx.invocation.value("guest-name") ?? "bedrud-bot"
            let inst = ResolvedInstance(name: "link-\(InstanceCommands.defaultName(for: server))", url: server, displayName: nil, email: nil,
                                        passwordFile: nil, guestName: guestName, tls: tls, isAdHoc: true, origins: [:])
            ctx.warnIfInsecure(inst)
            let api = try ctx.apiClient(for: inst)
            let auth = AuthManager(instanceKey: inst.name, api: api, store: MemoryCredentialStore(), fallbackLogin: .guest(name: guestName),
                                   now: { Date().timeIntervalSince1970 })
            return JoinPlan(instance: inst, roomName: room, auth: auth, isThrowawayGuest: true)
        }
    }

    /// Asks Bedrud for a LiveKit token (`POST /room/join`), logging in first if needed.
    func requestToken() async throws -> JoinRoomResponse {
        try await RoomAPI(auth: auth).join(roomName: roomName)
    }
}

/// `bedrud-bot join ROOM|LINK`.
enum JoinCommand {
    static let spec = CommandSpec(
        "join", summary: "join a room by name or meeting link and follow what happens",
        discussion: """
            ROOM is a room name on the selected instance, or a meeting link such as
            https://meet.example.com/m/standup (also /c/ROOM, with or without https://). A link to a
            server that is not a configured instance joins as a guest there.

            Prints one line per room event (joins, leaves, mutes, who speaks, chat, moderation,
            reconnects) until the room ends, --duration passes, or Ctrl-C (which leaves cleanly).

            --dry-run resolves the room, logs in and asks the server for a LiveKit token, prints
            what it would join (never the token), and stops. --no-media joins the signalling only
            (no audio); LiveKit removes such a participant after about 60 s.

            Examples:
              bedrud-bot join standup --dry-run
              bedrud-bot join https://meet.example.com/m/standup --no-media --duration 30s
            """,
        arguments: [ArgumentSpec("ROOM|LINK", help: "room name or meeting link")],
        options: [
            OptionSpec("dry-run", help: "Only resolve, log in and get the join token; print the plan."),
            OptionSpec("no-media", help: "Signalling only: room events without audio."),
            OptionSpec("duration", short: "d", value: "DURATION", help: "Leave after this long (e.g. 30s, 90m); default: until the room ends or Ctrl-C."),
            OptionSpec("guest-name", value: "NAME", help: "Display name when joining a link's server as a guest (default: bedrud-bot)."),
            OptionSpec("ca-file", value: "FILE", help: "For a link to an unconfigured server: trust this PEM CA."),
            OptionSpec("pin-sha256", value: "FINGERPRINT", help: "For a link to an unconfigured server: trust this certificate."),
            OptionSpec("tls-insecure", help: "For a link to an unconfigured server: skip certificate checks."),
        ],
        action: run)

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        var duration: Double?
        if let d = inv.value("duration") {
            guard let v = ConfigValues.duration(d), v > 0 else {
                throw CommandFailure(.usage, "--duration expects a duration like 30s, 10m or 1h30m, got '\(d)'")
            }
            duration = v
        }
        let plan = try JoinPlan.make(ctx, target: inv.positionals[0])
        let join = try await plan.requestToken()
        let claims = JWTClaims(token: join.token)
        let who = claims?.subject ?? "?"
        let name = claims?.name.map { " '\($0)'" } ?? ""
        let valid = claims?.expiresAt.map { " (token valid \(ConfigValues.formatDuration(max(0, ($0 - Date().timeIntervalSince1970).rounded()))))" } ?? ""
        let via = plan.isThrowawayGuest ? " as a guest" : " via instance '\(plan.instance.name)'"
        let summary = "Room '\(join.room.name)' on \(plan.instance.server)\(via): LiveKit at \(join.livekitHost), joining as \(who)\(name)\(valid)."
        if inv.flag("dry-run") {
            inv.console.out(summary)
            return .success
        }
        guard inv.flag("no-media") else {
            throw CommandFailure(.failure, "recording media is not available in this build yet; use --no-media (room events only) or --dry-run")
        }
        inv.console.err(summary)

        var options = RoomManagerOptions()
        options.waitForTransport = false
        options.signalConnectTimeout = try ctx.config.duration("network", "connect_timeout") + 5
        let room = RoomManager(
            livekitHost: join.livekitHost, tls: plan.instance.tls, clientVersion: BedrudBotVersion.string, options: options,
            transport: nil, tokenProvider: { try await plan.requestToken().token })
        return try await follow(room, token: join.token, duration: duration, console: inv.console)
    }

    /// Runs the room until it ends, `duration` passes or a signal arrives, printing events.
    static func follow(_ room: RoomManager, token: String, duration: Double?, console: Console) async throws -> ExitCode {
        let stoppedBySignal = SignalFlag()
        let watcher = SignalWatcher { _ in
            stoppedBySignal.set()
            Task { await room.leave() }
        }
        defer { watcher.cancel() }
        let start = Date()
        let printer = Task {
            var formatter = RoomEventFormatter()
            for await event in room.events {
                if let line = formatter.text(event) { console.out(Self.stamp(Date()) + " " + line) }
            }
        }
        await room.connect(token: token)
        var timer: Task<Void, Never>?
        if let duration {
            timer = Task {
                try? await Task.sleep(for: .milliseconds(Int(duration * 1000)))
                if !Task.isCancelled { await room.leave() }
            }
        }
        let reason = await room.waitUntilFinished() ?? .left
        timer?.cancel()
        await printer.value
        let elapsed = Date().timeIntervalSince(start)
        switch reason {
        case .left:
            if stoppedBySignal.isSet, let duration, elapsed < duration { return .interrupted }
            return .success
        case .kicked, .roomDeleted, .roomClosed, .duplicateIdentity:
            throw CommandFailure(.removed, RoomEventFormatter.explain(reason))
        case .notAllowed:
            throw CommandFailure(.auth, RoomEventFormatter.explain(reason) + (await room.lastConnectError.map { ": \($0)" } ?? ""))
        case .roomNotFound:
            throw CommandFailure(.notFound, RoomEventFormatter.explain(reason))
        case .joinFailure:
            throw CommandFailure(.forbidden, RoomEventFormatter.explain(reason))
        case .network:
            throw CommandFailure(.network, RoomEventFormatter.explain(reason) + (await room.lastConnectError.map { ": \($0)" } ?? ""))
        case .protocolError, .serverShutdown, .server:
            throw CommandFailure(.server, RoomEventFormatter.explain(reason))
        }
    }

    static func stamp(_ d: Date) -> String {
        var t = time_t(d.timeIntervalSince1970)
        var tmv = tm()
        localtime_r(&t, &tmv)
        let ms = Int((d.timeIntervalSince1970 - floor(d.timeIntervalSince1970)) * 1000)
        return String(format: "%02d:%02d:%02d.%03d", tmv.tm_hour, tmv.tm_min, tmv.tm_sec, ms)
    }
}

/// A flag set from a signal handler and read later.
final class SignalFlag: Sendable {
    private let flag = Mutex<Bool>(false)
    func set() { flag.withLock { $0 = true } }
    var isSet: Bool { flag.withLock { $0 } }
}

import Synchronization

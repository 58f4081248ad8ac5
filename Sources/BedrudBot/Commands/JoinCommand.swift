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
        "join", summary: "join a room by name or meeting link",
        discussion: """
            ROOM is a room name on the selected instance, or a meeting link such as
            https://meet.example.com/m/standup (also /c/ROOM, with or without https://). A link to a
            server that is not a configured instance joins as a guest there.

            --dry-run resolves the room, logs in and asks the server for a LiveKit token, prints
            what it would join (never the token), and stops.

            Examples:
              bedrud-bot join standup --dry-run
              bedrud-bot join https://meet.example.com/m/standup --dry-run --guest-name "Recorder"
            """,
        arguments: [ArgumentSpec("ROOM|LINK", help: "room name or meeting link")],
        options: [
            OptionSpec("dry-run", help: "Only resolve, log in and get the join token; print the plan."),
            OptionSpec("guest-name", value: "NAME", help: "Display name when joining a link's server as a guest (default: bedrud-bot)."),
            OptionSpec("ca-file", value: "FILE", help: "For a link to an unconfigured server: trust this PEM CA."),
            OptionSpec("pin-sha256", value: "FINGERPRINT", help: "For a link to an unconfigured server: trust this certificate."),
            OptionSpec("tls-insecure", help: "For a link to an unconfigured server: skip certificate checks."),
        ],
        action: run)

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let plan = try JoinPlan.make(ctx, target: inv.positionals[0])
        let join = try await plan.requestToken()
        let claims = JWTClaims(token: join.token)
        let who = claims?.subject ?? "?"
        let name = claims?.name.map { " '\($0)'" } ?? ""
        let valid = claims?.expiresAt.map { " (token valid \(ConfigValues.formatDuration(max(0, ($0 - Date().timeIntervalSince1970).rounded()))))" } ?? ""
        let via = plan.isThrowawayGuest ? " as a guest" : " via instance '\(plan.instance.name)'"
        inv.console.out("Room '\(join.room.name)' on \(plan.instance.server)\(via): LiveKit at \(join.livekitHost), joining as \(who)\(name)\(valid).")
        guard inv.flag("dry-run") else {
            throw CommandFailure(.failure, "joining the media session is not available in this build yet; use --dry-run")
        }
        return .success
    }
}

import BedrudCore
import BedrudNet
import BedrudProtocol
import FoundationEssentials

/// `login`, `register`, `logout`, `whoami`.
enum AuthCommands {
    static let login = CommandSpec(
        "login", summary: "log in to the selected instance and keep the session",
        discussion: """
            The session (tokens, never the password) is kept in a 0600 file under state_dir and
            refreshed automatically. The password comes from --password-file, BEDRUD_BOT_PASSWORD,
            the instance's password_file, or a prompt when run in a terminal.

            Examples:
              bedrud-bot login --email me@example.com
              bedrud-bot -i work login --password-file /run/secrets/bedrud
              bedrud-bot login --guest "Meeting recorder"
            """,
        options: [
            LoginOptions.email.spec,
            LoginOptions.passwordFile.spec,
            LoginOptions.guest.spec,
        ],
        action: runLogin)

    /// Declared once: the spec lists them and the command reads them through these.
    enum LoginOptions {
        static let email = ValueOption("email", short: "e", value: "EMAIL", help: "Account email (default: the instance's email).")
        static let passwordFile = ValueOption("password-file", value: "FILE", help: "Read the password from FILE (mode 0600).")
        static let guest = ValueOption("guest", value: "NAME", help: "Log in as a Bedrud guest with this display name instead.")
    }

    static let register = CommandSpec(
        "register", summary: "create an account on the selected instance and log in",
        discussion: "Bedrud requires passwords of 12 to 128 characters.",
        options: [
            RegisterOptions.email.spec,
            RegisterOptions.name.spec,
            RegisterOptions.passwordFile.spec,
            RegisterOptions.invite.spec,
        ],
        action: runRegister)

    /// Declared once: the spec lists them and the command reads them through these.
    enum RegisterOptions {
        static let email = ValueOption("email", short: "e", value: "EMAIL", help: "Email of the new account (default: the instance's email).")
        static let name = ValueOption("name", short: "n", value: "NAME", help: "Display name (required, at least 2 characters).")
        static let passwordFile = ValueOption("password-file", value: "FILE", help: "Read the password from FILE (mode 0600).")
        static let invite = ValueOption("invite", value: "TOKEN", help: "Invite token, if the server requires one.")
    }

    static let logout = CommandSpec(
        "logout", summary: "revoke the session on the server and forget it",
        action: runLogout)

    static let whoami = CommandSpec(
        "whoami", summary: "show the account of the selected instance's session",
        options: [WhoamiOptions.json.spec],
        action: runWhoami)

    /// Declared once: the spec lists them and the command reads them through these.
    enum WhoamiOptions {
        static let json = Flag("json", help: "Print the instance, its URL, the user and the token's expiry as JSON.")
    }

    /// `whoami --json`: what the text line shows, as values (never a token).
    struct WhoamiJSON: Encodable {
        var instance: String
        var url: String
        var user: User
        // Unknown is null, not missing: a consumer can tell "no expiry known" from an old version.
        /// When the access token expires (UTC), if known; it is refreshed on use.
        @Nullable var tokenExpiresAt: String?
        /// Seconds the access token is still valid (0 when expired), if known.
        @Nullable var tokenValidSeconds: Int?
        @Nullable var tokenExpired: Bool?

        enum CodingKeys: String, CodingKey {
            case instance, url, user
            case tokenExpiresAt = "token_expires_at", tokenValidSeconds = "token_valid_seconds", tokenExpired = "token_expired"
        }
    }

    /// Reads a password: configured source, else a prompt on a terminal.
    static func password(_ ctx: BotContext, _ inst: ResolvedInstance, account: String, confirm: Bool = false) throws -> String {
        if let source = ctx.passwordSource(for: inst) { return try source() }
        guard ctx.console.isInteractive else {
            throw CommandFailure(.auth, "no password available for \(account): use --password-file FILE, set password_file for the instance, or BEDRUD_BOT_PASSWORD (or run in a terminal to be asked).")
        }
        guard let pw = ctx.console.readSecret(prompt: "Password for \(account) on \(inst.server): "), !pw.isEmpty else {
            throw CommandFailure(.auth, "no password entered")
        }
        if confirm {
            guard ctx.console.readSecret(prompt: "Repeat the password: ") == pw else {
                throw CommandFailure(.usage, "the passwords do not match")
            }
        }
        return pw
    }

    static func runLogin(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let inst = try ctx.instance()
        let auth = try ctx.authManager(for: inst)
        let user: User
        if let guest = inv[LoginOptions.guest] {
            user = try await auth.guestLogin(name: guest)
        } else {
            var email = inv[LoginOptions.email] ?? inst.email
            if email == nil, ctx.console.isInteractive { email = ctx.console.readLine(prompt: "Email for \(inst.server): ") }
            guard let email, !email.isEmpty else {
                throw CommandFailure(.usage, "no email: use --email EMAIL or set email for the instance (or --guest NAME for a guest login)")
            }
            do {
                user = try await auth.login(email: email, password: try password(ctx, inst, account: email))
            } catch let e as APIError where e.code == .unauthorized {
                // The first thing a new user meets: point at register, not only at the password.
                throw CommandFailure(.auth, "\(e.description) Wrong password, or no account yet? Create one with: bedrud-bot register --email \(email) --name NAME")
            }
        }
        inv.console.out("Logged in to \(inst.name) (\(inst.server)) as \(describe(user)).")
        return .success
    }

    static func runRegister(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let inst = try ctx.instance()
        guard let email = inv[RegisterOptions.email] ?? inst.email else {
            throw CommandFailure(.usage, "register needs --email EMAIL (or an email set for the instance)")
        }
        guard let name = inv[RegisterOptions.name] else { throw CommandFailure(.usage, "register needs --name NAME") }
        let pw = try password(ctx, inst, account: email, confirm: true)
        guard (12...128).contains(pw.count) else {
            throw CommandFailure(.usage, "Bedrud requires a password of 12 to 128 characters")
        }
        let auth = try ctx.authManager(for: inst)
        let user = try await auth.register(email: email, password: pw, name: name, inviteToken: inv[RegisterOptions.invite])
        inv.console.out("Registered and logged in to \(inst.name) (\(inst.server)) as \(describe(user)).")
        return .success
    }

    static func runLogout(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let inst = try ctx.instance()
        let auth = try ctx.authManager(for: inst)
        guard try await auth.restore() != nil else {
            inv.console.out("Not logged in to \(inst.name) (\(inst.server)).")
            return .success
        }
        do {
            try await auth.logout()
            inv.console.out("Logged out of \(inst.name) (\(inst.server)); the session was revoked on the server.")
        } catch {
            inv.console.out("Forgot the session for \(inst.name) locally.")
            throw CommandFailure(ErrorReporting.exitCode(for: error), "could not revoke the session on the server: \(ErrorReporting.message(for: error))")
        }
        return .success
    }

    static func runWhoami(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let inst = try ctx.instance()
        let auth = try ctx.authManager(for: inst)
        let user = try await auth.me()
        let expiry = await auth.accessTokenExpiry
        let left = expiry.map { $0 - Date().timeIntervalSince1970 }
        if inv[WhoamiOptions.json] {
            try JSONOutput.print(WhoamiJSON(instance: inst.name, url: inst.server, user: user,
                                            tokenExpiresAt: expiry.map { JSONOutput.time(unixSeconds: $0) },
                                            tokenValidSeconds: left.map { Int(max(0, $0.rounded())) }, tokenExpired: left.map { $0 <= 0 }),
                                 to: inv.console)
            return .success
        }
        var line = "\(describe(user)) on \(inst.name) (\(inst.server))"
        if !user.accesses.isEmpty { line += ", access: \(user.accesses.joined(separator: ", "))" }
        if let left {
            line += left > 0 ? "; token valid for \(ConfigValues.formatDuration(left.rounded()))" : "; token expired"
        }
        inv.console.out(line)
        return .success
    }

    static func describe(_ user: User) -> String {
        if user.isGuest { return "\(user.name) (guest)" }
        return user.name.isEmpty ? user.email : "\(user.name) <\(user.email)>"
    }
}

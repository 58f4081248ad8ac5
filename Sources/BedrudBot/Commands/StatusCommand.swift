import BedrudCore
import BedrudProtocol
import FoundationEssentials

/// `status` (and bare `bedrud-bot` on a terminal): the Bedrud apps' first screens as text.
/// No instance: what `instance add` needs. An instance but no session: how to log in, with
/// what the server allows. Logged in: who, the token's expiry, the rooms, the last
/// recordings. Reads only: it never logs in, refreshes a token or writes a file.
enum StatusCommand {
    static let spec = CommandSpec(
        "status", summary: "where you are: the server, your session, your rooms and your last recordings",
        discussion: """
            What the Bedrud apps show first, as text. With no server configured it says what
            'instance add' needs; with a server but no session, how to log in (and whether the
            server requires email verification or allows guests); when logged in, who you are,
            when the access token expires, your rooms and your last recordings.

            It changes nothing: no login, no token refresh (an expired token is refreshed by the
            next command that needs it), no file written. A server that does not answer is
            reported within the HTTP timeouts (http.connect_timeout, http.request_timeout).
            Bare 'bedrud-bot' on a terminal runs this; 'bedrud-bot --help' prints the help.

            Exit status: 0, whatever the state (the state is in the text and in --json's
            "state": no_instance, logged_out or logged_in); 3 for a broken configuration.

            Examples:
              bedrud-bot status
              bedrud-bot -i work status --json | jq .state
            """,
        options: OptionGroups.recordingsRoot + [
            Options.json.spec,
        ],
        action: run)

    /// Declared once: the spec lists them and the command reads them through these.
    enum Options {
        static let json = Flag("json", help: "Print the state as one JSON object.")
    }

    /// The `--json` answer; the text is made from it (``lines(_:)``).
    struct Report: Encodable, Equatable {
        enum State: String, Encodable { case noInstance = "no_instance", loggedOut = "logged_out", loggedIn = "logged_in" }
        struct Instance: Encodable, Equatable {
            var name: String
            var url: String
        }
        /// What `GET /api/auth/settings` said (nil fields: the server did not say).
        struct Server: Encodable, Equatable {
            var reachable: Bool
            @Nullable var error: String? = nil
            @Nullable var requireEmailVerification: Bool? = nil
            @Nullable var guestLoginEnabled: Bool? = nil
            @Nullable var registrationEnabled: Bool? = nil
            enum CodingKeys: String, CodingKey {
                case reachable, error
                case requireEmailVerification = "require_email_verification", guestLoginEnabled = "guest_login_enabled"
                case registrationEnabled = "registration_enabled"
            }
        }
        struct Account: Encodable, Equatable {
            var name: String
            var email: String
            var guest: Bool
        }
        struct RoomLine: Encodable, Equatable {
            var name: String
            var isActive: Bool?
            var isPublic: Bool?
            enum CodingKeys: String, CodingKey { case name, isActive = "is_active", isPublic = "is_public" }
        }

        var state: State
        @Nullable var instance: Instance? = nil
        /// Instances configured (names), for the no-default case.
        var instances: [String]
        @Nullable var problem: String? = nil
        @Nullable var server: Server? = nil
        @Nullable var user: Account? = nil
        @Nullable var tokenExpiresAt: String? = nil
        @Nullable var tokenValidSeconds: Int? = nil
        @Nullable var rooms: [RoomLine]? = nil
        @Nullable var roomsError: String? = nil
        var recordings: [RecordingsCommand.Entry]
        /// The instance's password file is one others may read: nothing was sent to the
        /// server, and the run ends with exit 3 after what is known locally (not encoded).
        var unsafeCredentials: String?

        enum CodingKeys: String, CodingKey {
            case state, instance, instances, problem, server, user, rooms, recordings
            case tokenExpiresAt = "token_expires_at", tokenValidSeconds = "token_valid_seconds", roomsError = "rooms_error"
        }
    }

    // MARK: - Pure: the report as text

    static func lines(_ r: Report) -> [String] {
        var out: [String] = []
        switch r.state {
        case .noInstance where !r.instances.isEmpty:
            // Instances exist but none is selected (several, no default), or the named one is missing.
            out.append(r.problem ?? "No instance is selected.")
            out.append("Configured: \(r.instances.joined(separator: ", ")). Pick one with: bedrud-bot instance use NAME (or -i NAME)")
        case .noInstance:
            if let p = r.problem {
                out.append(p)
            } else {
                out.append("No Bedrud server is set up yet.")
            }
            out.append("")
            out.append("Add one with its address (a meeting link works too):")
            out.append("  bedrud-bot instance add https://meet.example.com --name work --email you@example.com")
            out.append("instance add needs the server's URL; --name names it (default: the host name), --email is the")
            out.append("account to log in with (or --guest-name NAME to join as a guest), --ca-file or --pin-sha256 for a")
            out.append("self-signed server. Then: bedrud-bot login")
        case .loggedOut, .loggedIn:
            guard let i = r.instance else { break }
            out.append("Server: \(i.name) (\(i.url))")
            if let s = r.server, !s.reachable {
                out.append("  not answering: \(s.error ?? "no answer")")
            }
            if r.state == .loggedOut {
                out.append("Not logged in.")
                if let s = r.server, s.reachable {
                    if let v = s.requireEmailVerification {
                        out.append(v ? "  The server requires a verified email address: verify the account's email before logging in."
                                     : "  The server does not require email verification.")
                    }
                    if let g = s.guestLoginEnabled {
                        out.append(g ? "  Guests are allowed: bedrud-bot login --guest \"Meeting recorder\""
                                     : "  Guests are not allowed on this server: log in with an account.")
                    }
                    if s.registrationEnabled == true { out.append("  New accounts can register: bedrud-bot register --name \"Meeting recorder\"") }
                }
                out.append("Log in with: bedrud-bot login --email you@example.com")
            } else if let u = r.user {
                var who = u.guest ? "\(u.name) (guest)" : (u.name.isEmpty ? u.email : "\(u.name) <\(u.email)>")
                if let left = r.tokenValidSeconds {
                    who += left > 0 ? "; access token valid for \(ConfigValues.formatDuration(Double(left))) (until \(r.tokenExpiresAt ?? "?"))"
                                    : "; access token expired (the next command refreshes it)"
                }
                out.append("Logged in as \(who)")
            }
            if r.state == .loggedIn {
                if let rooms = r.rooms {
                    out.append(rooms.isEmpty ? "Rooms: none yet (bedrud-bot rooms create NAME)" : "Rooms:")
                    for room in rooms {
                        let flags = [room.isActive == true ? "active" : nil, room.isPublic == true ? "public" : nil].compactMap { $0 }
                        out.append("  \(room.name)" + (flags.isEmpty ? "" : " (" + flags.joined(separator: ", ") + ")"))
                    }
                } else if let e = r.roomsError {
                    out.append("Rooms: \(e)")
                }
            }
        }
        out.append("")
        if r.recordings.isEmpty {
            out.append("Recordings: none yet (bedrud-bot join ROOM --record)")
        } else {
            out.append("Last recordings (bedrud-bot recordings for all):")
            out += RecordingsCommand.table(r.recordings)
        }
        return out
    }

    // MARK: - The shell

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let root = PathText.fixingSlashes(try ctx.config.value(Settings.Record.outputDir, flag: OptionGroups.output))
        let recordings = Array(RecordingsCommand.entries(under: root).prefix(3))
        var report = Report(state: .noInstance, instances: ctx.config.instances.map(\.name), recordings: recordings)
        let envInstance = !(inv.environment["BEDRUD_BOT_URL"] ?? "").isEmpty
        if !ctx.config.instances.isEmpty || envInstance {
            do {
                let inst = try ctx.instance()
                report.instance = .init(name: inst.name, url: inst.server)
                try await fill(&report, ctx, inst)
            } catch let e as CommandFailure {
                throw e
            } catch {
                report.problem = ErrorReporting.message(for: error)
            }
        }
        if inv[Options.json] {
            try JSONOutput.print(report, to: inv.console)
        } else {
            for line in lines(report) { inv.console.out(line) }
        }
        // As every other command: a password file others may read is refused (exit 3).
        if let unsafe = report.unsafeCredentials { throw CommandFailure(.config, unsafe) }
        return .success
    }

    /// The session from the credential store (read only), then the server's settings or
    /// the rooms, each with the configured HTTP timeouts.
    static func fill(_ r: inout Report, _ ctx: BotContext, _ inst: ResolvedInstance) async throws {
        let api = try ctx.apiClient(for: inst)
        var unsafe: String?
        if let file = inst.passwordFile {
            do {
                try SecureFiles.checkPasswordFile(file, credentialsDirectory: ctx.invocation.environment["CREDENTIALS_DIRECTORY"])
            } catch {
                unsafe = ErrorReporting.message(for: error)
                r.unsafeCredentials = unsafe
                r.problem = unsafe
            }
        }
        var stored: StoredSession?
        do {
            stored = try ctx.credentialStore.load(inst.name)
        } catch {
            r.problem = "the stored session cannot be read: \(error)"
        }
        guard let stored, stored.server == inst.server || stored.server.isEmpty else {
            r.state = .loggedOut
            if unsafe != nil { return }
            do {
                let v = try await api.request(JSONValue.self, "GET", "/auth/settings")
                let o = v.object ?? [:]
                r.server = .init(reachable: true, requireEmailVerification: o["requireEmailVerification"]?.bool,
                                 guestLoginEnabled: o["guestLoginEnabled"]?.bool, registrationEnabled: o["registrationEnabled"]?.bool)
            } catch {
                r.server = .init(reachable: false, error: ErrorReporting.message(for: error))
            }
            return
        }
        r.state = .loggedIn
        if let u = stored.user { r.user = .init(name: u.name, email: u.email, guest: u.isGuest) }
        let exp = JWTClaims(token: stored.tokens.accessToken)?.expiresAt
        let left = exp.map { $0 - Date().timeIntervalSince1970 }
        r.tokenExpiresAt = exp.map { JSONOutput.time(unixSeconds: $0) }
        r.tokenValidSeconds = left.map { Int(max(0, $0.rounded())) }
        if let left, left <= 0 {
            r.roomsError = "not fetched: the access token has expired (bedrud-bot rooms refreshes it)"
            return
        }
        if unsafe != nil {
            r.roomsError = "not fetched: the password file is refused (above)"
            return
        }
        do {
            let rooms = try await api.request([Room].self, "GET", "/room/list", bearer: stored.tokens.accessToken)
            r.rooms = rooms.map { .init(name: $0.name, isActive: $0.isActive, isPublic: $0.isPublic) }
            r.server = .init(reachable: true)
        } catch {
            let message = ErrorReporting.message(for: error)
            r.roomsError = "not fetched: \(message)"
            if case .network = ErrorReporting.exitCode(for: error) { r.server = .init(reachable: false, error: message) }
        }
    }
}

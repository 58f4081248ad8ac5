import BedrudCore
import BedrudNet
import BedrudProtocol
import Dispatch
import FoundationEssentials
import Glibc

/// `bedrud-bot instance add|list|use|remove`: the servers bedrud-bot knows, kept as
/// `[instance NAME]` sections of the config file.
enum InstanceCommands {
    static let spec = CommandSpec(
        "instance", summary: "add, list, use or remove Bedrud servers",
        discussion: """
            Instances are [instance NAME] sections of the config file. The CLI edits that file
            the way 'git config' does: your comments and other lines stay as they are.
            """,
        subcommands: [add, list, use, remove])

    static let add = CommandSpec(
        "add", summary: "check a Bedrud server and add it as an instance",
        discussion: """
            Checks that URL answers like a Bedrud server (GET /api/auth/settings), then appends an
            [instance NAME] section. The first instance added becomes the default.

            Examples:
              bedrud-bot instance add https://meet.example.com --name work --email rec@example.com
              bedrud-bot instance add https://10.0.0.5 --name lab --ca-file /etc/bedrud/ca.pem
            """,
        arguments: [ArgumentSpec("URL", help: "the server's address; https:// is assumed when no scheme is given")],
        options: [
            AddOptions.name.spec,
            AddOptions.displayName.spec,
            AddOptions.email.spec,
            AddOptions.passwordFile.spec,
            AddOptions.guestName.spec,
            AddOptions.caFile.spec,
            AddOptions.pinSha256.spec,
            AddOptions.tlsInsecure.spec,
            AddOptions.makeDefault.spec,
            AddOptions.noCheck.spec,
        ],
        action: runAdd)

    /// Declared once: the spec lists them and the command reads them through these.
    enum AddOptions {
        static let name = ValueOption("name", short: "n", value: "NAME", help: "Instance name (default: the host name).")
        static let displayName = ValueOption("display-name", value: "TEXT", help: "A friendlier name to show in 'instance list'.")
        static let email = ValueOption("email", value: "EMAIL", help: "Account to log in with.")
        static let passwordFile = ValueOption("password-file", value: "FILE", help: "File with the password (mode 0600), for unattended runs.")
        static let guestName = ValueOption("guest-name", value: "NAME", help: "Log in as a guest with this name when no email is set.")
        static let caFile = ValueOption("ca-file", value: "FILE", help: "Trust this PEM CA or certificate for this server.")
        static let pinSha256 = ValueOption("pin-sha256", value: "FINGERPRINT", help: "Trust exactly the certificate with this SHA-256 fingerprint.")
        static let tlsInsecure = Flag("tls-insecure", help: "Do not verify the server's certificate (not recommended).")
        static let makeDefault = Flag("default", help: "Make it the default instance even if there is one already.")
        static let noCheck = Flag("no-check", help: "Add it without contacting the server.")
    }

    static let list = CommandSpec(
        "list", summary: "list instances; * marks the default",
        options: [OptionGroups.tableJSON.spec],
        action: runList)

    static let use = CommandSpec(
        "use", summary: "make an instance the default",
        arguments: [ArgumentSpec("NAME", help: "an instance name from 'instance list'")],
        action: runUse)

    static let remove = CommandSpec(
        "remove", summary: "remove an instance and its stored session",
        arguments: [ArgumentSpec("NAME", help: "an instance name from 'instance list'")],
        action: runRemove)

    /// `meet.example.com` → `https://meet.example.com`; a pasted meeting link → its server.
    static func normalizeServerURL(_ text: String) throws -> WebURL {
        let t = text.trimmingWhitespaceScalars()
        let withScheme = t.contains("://") ? t : "https://" + t
        guard var url = WebURL(withScheme), url.scheme == "http" || url.scheme == "https" else {
            throw CommandFailure(.usage, "'\(text)' is not a server address; expected something like https://meet.example.com")
        }
        url.query = nil
        let parts = url.path.split(separator: "/")
        if url.path == "/" || (parts.count >= 2 && (parts[0] == "m" || parts[0] == "c")) {
            url.path = "/"
        } else if url.path.hasSuffix("/") {
            url.path.removeLast()
        }
        return url
    }

    static func defaultName(for url: WebURL) -> String {
        var n = url.host.replacingScalars(":", with: "-")
        if let p = url.explicitPort { n += "-\(p)" }
        return n
    }

    static func runAdd(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv, mayCreateConfig: true)
        let url = try normalizeServerURL(inv.positionals[0])
        let name = inv[AddOptions.name] ?? defaultName(for: url)
        guard InstanceName.isValid(name) else {
            throw CommandFailure(.usage, "invalid instance name '\(name)': use letters, digits, '-', '_' and '.'")
        }
        if let existing = ctx.config.instances.first(where: { $0.name == name }) {
            throw CommandFailure(.config, "an instance named '\(name)' exists already (\(existing.value("url") ?? "")). Remove it first or choose another --name.")
        }
        if let same = ctx.config.instance(matching: url) {
            throw CommandFailure(.config, "\(url.origin) is already configured as instance '\(same.name)'.")
        }
        let tls = try OptionGroups.tls(from: inv)
        if let f = inv[AddOptions.passwordFile] { try SecureFiles.checkPrivate(f) }
        var note = ""
        if !inv[AddOptions.noCheck] {
            let api = APIClient(server: url, http: HTTPClient(options: try ctx.config.httpOptions(tls: tls)))
            let settings = try await ServerProbe.check(api)
            note = " The server answers like Bedrud (registration \(settings.registrationEnabled ? "open" : "closed"))."
        }
        var settings: [(String, String)] = [("url", url.path == "/" ? url.origin : url.description)]
        if let v = inv[AddOptions.displayName] { settings.append(("display_name", v)) }
        if let v = inv[AddOptions.email] { settings.append(("email", v)) }
        if let v = inv[AddOptions.passwordFile] { settings.append(("password_file", v)) }
        if let v = inv[AddOptions.guestName] { settings.append(("guest_name", v)) }
        if let v = inv[AddOptions.caFile] { settings.append(("ca_file", v)) }
        if let v = inv[AddOptions.pinSha256] { settings.append(("pin_sha256", v)) }
        if tls.insecure { settings.append(("tls_insecure", "yes")) }
        let makeDefault = inv[AddOptions.makeDefault] || ctx.config.string("", "default_instance") == nil && ctx.config.instances.isEmpty
        let path = ConfigFileWriter.targetPath(ctx.config)
        try ConfigFileWriter.edit(path) { ed in
            ed.appendSection("instance", name: name, settings: settings)
            if makeDefault { ed.set("default_instance", name) }
        }
        inv.console.out("Added instance '\(name)' (\(url.origin)) to \(path).\(note)\(makeDefault ? " It is the default instance." : "")")
        if tls.insecure { inv.console.warning("TLS verification is off for '\(name)'. Prefer --ca-file or --pin-sha256.") }
        return .success
    }

    /// One row of `instance list`; `--json` prints these (never a token).
    struct ListedInstance: Encodable {
        /// The stored session's state, as a value.
        enum Session: String, Encodable {
            /// A session whose access token is still valid (or has no known expiry).
            case loggedIn = "logged_in"
            /// The access token expired; it is refreshed with the refresh token on use.
            case expired
            case loggedOut = "logged_out"
            /// The session file exists but cannot be read (`session_error` says why).
            case unreadable
        }
        let name: String
        let url: String
        @Nullable var displayName: String?
        let isDefault: Bool
        @Nullable var loggedInAs: String?
        let session: Session
        @Nullable var tokenExpiresAt: String?
        @Nullable var tokenValidSeconds: Int?
        /// Only when the session is unreadable (left out otherwise).
        let sessionError: String?

        enum CodingKeys: String, CodingKey {
            case name, url, session
            case displayName = "display_name", isDefault = "default", loggedInAs = "logged_in_as"
            case tokenExpiresAt = "token_expires_at", tokenValidSeconds = "token_valid_seconds", sessionError = "session_error"
        }

        /// The SESSION column of the table.
        var sessionText: String {
            switch session {
            case .loggedOut: "not logged in"
            case .unreadable: "session unreadable: \(sessionError ?? "")"
            case .expired: "logged in (token expired; refreshes on use)"
            case .loggedIn: tokenValidSeconds.map { "logged in (token valid \(ConfigValues.formatDuration(Double($0))))" } ?? "logged in"
            }
        }
    }

    static func runList(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let def = ctx.config.selectedInstanceName
        let store = ctx.credentialStore
        var rows: [ListedInstance] = []
        for i in ctx.config.instances {
            var session = ListedInstance.Session.loggedOut
            var who: String?
            var expiresAt: String?
            var validSeconds: Int?
            var problem: String?
            do {
                if let s = try store.load(i.name) {
                    who = s.user?.email
                    session = .loggedIn
                    if let exp = JWTClaims(token: s.tokens.accessToken)?.expiresAt {
                        let left = exp - Date().timeIntervalSince1970
                        expiresAt = JSONOutput.time(unixSeconds: exp)
                        validSeconds = Int(max(0, left.rounded()))
                        if left <= 0 { session = .expired }
                    }
                }
            } catch {
                session = .unreadable
                problem = "\(error)"
            }
            rows.append(ListedInstance(name: i.name, url: i.value("url") ?? "", displayName: i.value("display_name"), isDefault: i.name == def,
                                       loggedInAs: who, session: session, tokenExpiresAt: expiresAt, tokenValidSeconds: validSeconds, sessionError: problem))
        }
        if inv[OptionGroups.tableJSON] {
            try JSONOutput.print(rows, to: inv.console)
            return .success
        }
        if rows.isEmpty {
            inv.console.out("No instances configured. Add one with: bedrud-bot instance add https://meet.example.com")
            return .success
        }
        let w1 = max(4, rows.map(\.name.count).max() ?? 0) + 2
        let w2 = max(3, rows.map(\.url.count).max() ?? 0) + 2
        inv.console.out("  " + "NAME".padded(to: w1) + "URL".padded(to: w2) + "SESSION")
        for r in rows {
            let who = r.loggedInAs.map { " as \($0)" } ?? ""
            inv.console.out((r.isDefault ? "* " : "  ") + r.name.padded(to: w1) + r.url.padded(to: w2) + r.sessionText + who)
        }
        return .success
    }

    static func runUse(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let name = inv.positionals[0]
        guard ctx.config.instances.contains(where: { $0.name == name }) else {
            _ = try ctx.config.instance(named: name)  // throws the helpful "no instance named" error
            return .notFound
        }
        let path = ConfigFileWriter.targetPath(ctx.config)
        try ConfigFileWriter.edit(path) { $0.set("default_instance", name) }
        inv.console.out("Default instance is now '\(name)'.")
        return .success
    }

    static func runRemove(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let name = inv.positionals[0]
        guard ctx.config.instances.contains(where: { $0.name == name }) else {
            _ = try ctx.config.instance(named: name)
            return .notFound
        }
        let path = ConfigFileWriter.targetPath(ctx.config)
        let wasDefault = ctx.config.string("", "default_instance") == name
        let remaining = ctx.config.instances.filter { $0.name != name }
        try ConfigFileWriter.edit(path) { ed in
            ed.removeSection("instance", name: name)
            if wasDefault {
                if remaining.count == 1 { ed.set("default_instance", remaining[0].name) } else { ed.remove("default_instance") }
            }
        }
        try? ctx.credentialStore.delete(name)
        var msg = "Removed instance '\(name)' and its stored session."
        if wasDefault { msg += remaining.count == 1 ? " The default is now '\(remaining[0].name)'." : " There is no default instance now." }
        inv.console.out(msg)
        return .success
    }
}

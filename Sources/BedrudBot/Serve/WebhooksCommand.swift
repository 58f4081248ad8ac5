#if canImport(Glibc)
import Glibc
#endif
import BedrudCore
import BedrudProtocol
import FoundationEssentials

/// `bedrud-bot webhooks list|add|remove|test`: Bedrud's webhook endpoints (superadmin).
enum WebhooksCommand {
    /// The events `serve` needs: a meeting's people arriving, and a deleted room.
    static let serveEvents = [WebhookEnvelope.Kind.participantJoined.rawValue, WebhookEnvelope.Kind.roomEnded.rawValue]

    static let spec = CommandSpec(
        "webhooks", summary: "register serve's endpoint with Bedrud (superadmin)",
        discussion: """
            Bedrud sends every event to every registered endpoint, each signed with its own secret.
            These commands need an account with Bedrud's superadmin access.

            Examples:
              bedrud-bot webhooks add http://recorder.internal:8095/bedrud/webhook --secret-file /etc/bedrud-bot/webhook-secret
              bedrud-bot webhooks list
              bedrud-bot webhooks test 5b0c…      # Bedrud sends a signed ping
              bedrud-bot webhooks remove 5b0c…
            """,
        subcommands: [list, add, remove, test])

    static let list = CommandSpec(
        "list", summary: "list the webhook endpoints",
        options: [OptionGroups.tableJSON.spec],
        action: runList)

    static let add = CommandSpec(
        "add", summary: "register an endpoint for serve and store its secret",
        discussion: """
            Registers URL for the events serve needs (participant.joined, room.ended) and writes the
            secret Bedrud returns, shown only this once, into FILE (mode 0600; an existing file is
            replaced). Give serve the same file with --secret-file.
            """,
        arguments: [ArgumentSpec("URL", help: "serve's webhook URL, http(s)://HOST:PORT/bedrud/webhook")],
        options: [
            AddOptions.secretFile.spec,
            AddOptions.name.spec,
        ],
        action: runAdd)

    /// Declared once: the spec lists them and the command reads them through these.
    enum AddOptions {
        static let secretFile = ValueOption("secret-file", value: "FILE", help: "Where to write the endpoint's secret (required).")
        static let name = ValueOption("name", value: "NAME", help: "A name for the endpoint in Bedrud's admin pages (default: bedrud-bot serve).")
    }

    static let remove = CommandSpec(
        "remove", summary: "remove a webhook endpoint",
        arguments: [ArgumentSpec("ID", help: "the endpoint's id ('webhooks list')")],
        action: runRemove)

    static let test = CommandSpec(
        "test", summary: "ask Bedrud to send a signed ping to an endpoint",
        arguments: [ArgumentSpec("ID", help: "the endpoint's id ('webhooks list')")],
        action: runTest)

    static func adminAPI(_ ctx: BotContext) throws -> (AdminAPI, ResolvedInstance) {
        let inst = try ctx.instance()
        return (AdminAPI(auth: try ctx.authManager(for: inst)), inst)
    }

    /// Bedrud's 403 to an account without superadmin access, as a line that says so.
    static func asSuperadmin<T>(_ inst: ResolvedInstance, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let e as APIError where e.code == .forbidden {
            throw CommandFailure(.forbidden, "the account of instance '\(inst.name)' is not a superadmin on \(inst.server), and only a superadmin may manage webhooks")
        }
    }

    static func runList(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let (admin, inst) = try adminAPI(ctx)
        let hooks = try await asSuperadmin(inst) { try await admin.webhooks() }
        if inv[OptionGroups.tableJSON] {
            struct Row: Encodable { let id, name, url: String; let events: [String]; let isActive: Bool }
            try JSONOutput.print(hooks.map { Row(id: $0.id, name: $0.name, url: $0.url, events: $0.events, isActive: $0.isActive) }, to: inv.console)
            return .success
        }
        if hooks.isEmpty {
            inv.console.out("No webhook endpoints on \(inst.name). Add serve's with: bedrud-bot webhooks add URL --secret-file FILE")
            return .success
        }
        inv.console.out("ID".padded(to: 38) + "ACTIVE".padded(to: 8) + "EVENTS  URL")
        for h in hooks {
            inv.console.out(h.id.padded(to: 38) + (h.isActive ? "yes" : "no").padded(to: 8) + h.events.joined(separator: ",") + "  " + h.url)
        }
        return .success
    }

    static func runAdd(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let url = inv.positionals[0]
        guard let u = WebURL(url), u.scheme == "http" || u.scheme == "https" else {
            throw CommandFailure(.usage, "'\(TerminalText.quoted(url))' is not an http:// or https:// URL")
        }
        guard let file = inv[AddOptions.secretFile], !file.isEmpty else {
            throw CommandFailure(.usage, "webhooks add needs --secret-file FILE: Bedrud shows the endpoint's secret only once")
        }
        // The folder must take the file before Bedrud makes a secret it shows only once.
        let dir = PathText.deletingLastComponent(file)
        guard access(dir.isEmpty ? "." : dir, W_OK) == 0 else {
            throw CommandFailure(.config, "cannot write the secret into \(file): \(String(cString: strerror(errno)))")
        }
        let (admin, inst) = try adminAPI(ctx)
        let name = inv[AddOptions.name] ?? "bedrud-bot serve"
        let hook = try await asSuperadmin(inst) { try await admin.addWebhook(name: name, url: url, events: serveEvents) }
        guard let secret = hook.secret, !secret.isEmpty, !secret.hasPrefix("••••") else {
            throw CommandFailure(.server, "Bedrud registered the endpoint (\(hook.id)) but sent no secret; remove it and add it again")
        }
        do {
            try SecureFiles.writePrivate(Data((secret + "\n").utf8), to: file)
        } catch {
            throw CommandFailure(.config, "Bedrud registered the endpoint (\(hook.id)) but its secret could not be written to \(file) (\(error)); "
                + "remove it ('bedrud-bot webhooks remove \(hook.id)') and add it again")
        }
        inv.console.out("Registered \(hook.id) for \(serveEvents.joined(separator: ", ")) at \(hook.url); its secret is in \(file) (0600).")
        return .success
    }

    static func runRemove(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let (admin, inst) = try adminAPI(ctx)
        let id = inv.positionals[0]
        do {
            try await asSuperadmin(inst) { try await admin.removeWebhook(id: id) }
        } catch let e as APIError where e.code == .notFound {
            throw CommandFailure(.notFound, "no webhook endpoint '\(TerminalText.quoted(id))' on \(inst.name) ('bedrud-bot webhooks list' shows them)")
        }
        inv.console.note("Removed webhook endpoint \(TerminalText.quoted(id)).")
        return .success
    }

    static func runTest(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let (admin, inst) = try adminAPI(ctx)
        let id = inv.positionals[0]
        let r: WebhookTestResult
        do {
            r = try await asSuperadmin(inst) { try await admin.testWebhook(id: id) }
        } catch let e as APIError where e.code == .notFound {
            throw CommandFailure(.notFound, "no webhook endpoint '\(TerminalText.quoted(id))' on \(inst.name) ('bedrud-bot webhooks list' shows them)")
        }
        let latency = r.latencyMs.map { " in \($0) ms" } ?? ""
        switch r.status {
        case "success":
            inv.console.out("Bedrud's ping reached the endpoint: HTTP \(r.httpStatus ?? 200)\(latency).")
            return .success
        case "non_2xx":
            throw CommandFailure(.rejected, "the endpoint answered Bedrud's ping with HTTP \(r.httpStatus ?? 0)\(latency) (401: serve has another secret)")
        default:
            throw CommandFailure(.network, "Bedrud could not deliver the ping\(latency): \(TerminalText.sanitize(String((r.error ?? r.status).prefix(300))))")
        }
    }
}

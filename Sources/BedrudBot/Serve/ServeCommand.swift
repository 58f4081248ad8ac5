import BedrudCore
import BedrudProtocol
import FoundationEssentials

/// `bedrud-bot serve`: records every meeting Bedrud announces.
enum ServeCommand {
    static let spec = CommandSpec(
        "serve", summary: "record every meeting Bedrud announces (webhooks, reconcile, shards)",
        discussion: """
            A long-running recorder: it listens for Bedrud's signed webhooks and records each
            meeting it hears about, with everything 'join --record' does (one session folder per
            meeting, report.html, on_finish, the recording notice in the chat). Register its URL
            once with 'bedrud-bot webhooks add http://HOST:PORT/bedrud/webhook --secret-file FILE'.

            A participant.joined webhook for a room in --rooms and this replica's --shard starts
            a recording; room.ended (an owner deleted the room) finishes it at once. Otherwise a
            meeting ends as 'join --record' ends: alone for record.alone_timeout, or the room's
            end. Bedrud sends each webhook once: when the account is a superadmin, serve also lists
            the active rooms at start and every serve.reconcile_interval, and joins meetings it
            missed (a lost request, a restart). A room whose owner does not allow recording is
            never joined.

            The port (--listen) serves POST /bedrud/webhook (401 for a missing or wrong signature,
            400 for a timestamp more than 5 minutes off, 409 for a replay), GET /healthz (alive),
            GET /readyz (logged in and reconciled once) and GET /metrics (Prometheus). Bodies are
            capped at 64 KiB, slow clients time out, connections are limited.

            The secret comes from --secret-file (or serve.secret_file), else from
            $CREDENTIALS_DIRECTORY/webhook-secret: a file, mode 0600, never a config value.
            SIGTERM or Ctrl-C stops taking webhooks, finishes every recording and exits 0;
            SIGHUP re-reads the configuration and the secret. Several replicas share the work
            with --shard K/N, each registered as its own webhook endpoint (docs/OPERATIONS.md,
            "Recording every meeting").

            Examples:
              bedrud-bot serve --secret-file /etc/bedrud-bot/webhook-secret
              bedrud-bot serve --listen 0.0.0.0:8095 --rooms 'standup,team-*' --output /srv/rec
              bedrud-bot serve --shard 1/3      # the second of three replicas
            """,
        options: Options.all,
        action: run)

    /// `serve`'s options, declared once; help that states a default reads it from the table.
    enum Options {
        static let listen = ValueOption("listen", value: "HOST:PORT",
                                        help: "Where the webhook endpoint and health checks listen (default: \(SettingSpec.defaultText("serve", "listen"))).")
        static let secretFile = ValueOption("secret-file", value: "FILE", help: "The webhook secret, first line of a 0600 file (default: serve.secret_file, else $CREDENTIALS_DIRECTORY/webhook-secret).")
        static let rooms = ValueOption("rooms", value: "GLOB[,GLOB...]", help: "Record only rooms whose name matches (default: \(SettingSpec.defaultText("serve", "rooms"))).")
        static let shard = ValueOption("shard", value: "K/N",
                                       help: "Record only the rooms of shard K of N, by a stable hash of the room id (default: \(SettingSpec.defaultText("serve", "shard"))).")
        /// Read as `join`'s `--output` (``JoinCommand/roomRunOptions(_:_:)``).
        static let output = ValueOption("output", short: "o", value: "DIR", help: "Recording folder root (default: record.output_dir).")

        static let all: [OptionSpec] = [listen.spec, secretFile.spec, rooms.spec, shard.spec, output.spec]
    }

    /// The `[serve]` settings with their flags.
    static func serveOptions(_ inv: Invocation, _ config: Configuration) throws -> ServeOptions {
        var o = ServeOptions()
        o.listen = try config.value(Settings.Serve.listen, flag: Options.listen)
        o.secretFile = try config.valueIfSet(Settings.Serve.secretFile, flag: Options.secretFile).flatMap { $0.isEmpty ? nil : $0 }
        let rooms = ConfigValues.list(try config.value(Settings.Serve.rooms, flag: Options.rooms))
        guard !rooms.isEmpty else { throw CommandFailure(.usage, "--rooms needs at least one pattern, like * or 'standup,team-*'") }
        o.policy.rooms = rooms
        o.policy.shard = try config.value(Settings.Serve.shard, flag: Options.shard)
        o.policy.maxMeetings = try config.value(Settings.Serve.maxMeetings)
        o.reconcileInterval = try config.value(Settings.Serve.reconcileInterval)
        return o
    }

    /// The webhook secret: the file's first line. Refuses a file others may read (exit 3).
    static func readSecret(_ o: ServeOptions, environment: [String: String]) throws -> String {
        let credentials = environment["CREDENTIALS_DIRECTORY"]
        let path: String
        if let f = o.secretFile {
            path = f
        } else if let dir = credentials {
            path = dir + "/webhook-secret"
        } else {
            throw CommandFailure(.usage, "serve needs the webhook secret: --secret-file FILE (or serve.secret_file; 'bedrud-bot webhooks add' writes it)")
        }
        do {
            return try SecureFiles.readPassword(path, credentialsDirectory: credentials)
        } catch let e as ConfigError {
            throw ConfigError(e.description.replacing("password file", with: "webhook secret file"))
        }
    }

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        guard inv.positionals.isEmpty else { throw CommandFailure(.usage, "serve takes no arguments (it records the rooms --rooms names)") }
        let serve = try serveOptions(inv, ctx.config)
        let secret = try readSecret(serve, environment: inv.environment)
        var record = try JoinCommand.roomRunOptions(inv, ctx.config)
        record.record = true
        record.entry.record = true
        // Bedrud lists a room as occupied from its creator's row on (room_repository.go
        // counts participant rows, not LiveKit): a meeting nobody comes to is left after
        // alone_timeout instead of being waited in for ever.
        if record.rules.waitForParticipants == nil, record.rules.aloneTimeout > 0 { record.rules.waitForParticipants = record.rules.aloneTimeout }
        return try await ServeRun(ctx: ctx, record: record, serve: serve, secret: secret, console: inv.console).run()
    }
}

import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Glibc

/// The program: parses argv, sets up logging, runs the command, reports errors and
/// returns the exit code. `main.swift` only calls ``run(_:environment:)``.
public enum BedrudBotCLI {
    /// The command tree.
    public static var root: CommandSpec {
        CommandSpec(
            "bedrud-bot", summary: "a headless meeting bot and recorder for Bedrud.",
            discussion: """
                Logs in to Bedrud servers like the Bedrud apps do, joins rooms by name or meeting
                link, and records every participant's audio (one Ogg Opus file each, plus a mix)
                with an event transcript. Configured by a plain key = value file; see docs/CONFIG.md.

                Examples:
                  bedrud-bot instance add https://meet.example.com --name work --email rec@example.com
                  bedrud-bot register --name "Meeting recorder"     # a new account for the bot
                  bedrud-bot login                                   # or an existing one
                  bedrud-bot join standup --record --duration 90m
                  bedrud-bot join https://meet.example.com/m/standup --record
                  bedrud-bot verify ~/.local/share/bedrud-bot/recordings/standup/*/*.opus
                """,
            subcommands: [
                InstanceCommands.spec, AuthCommands.login, AuthCommands.register, AuthCommands.logout, AuthCommands.whoami,
                RoomCommands.spec, JoinCommand.spec, SayCommand.spec, SmokeCommand.spec, ConfigCommands.spec,
                MediaCommands.verify, MediaCommands.repair, MediaCommands.bench, MediaCommands.devRecord, PlayCommand.spec,
                CompletionCommands.spec, CompletionCommands.manpage,
                ReportCommand.spec, RecordingsCommand.spec, StatusCommand.spec, ServeCommand.spec, WebhooksCommand.spec,
                CommandSpec("version", summary: "print the version", action: { inv in
                    inv.console.out("bedrud-bot \(BedrudBotVersion.string)")
                    return .success
                }),
                CommandSpec("help", summary: "show help for a command", arguments: [ArgumentSpec("COMMAND", optional: true, variadic: true, help: "the command to explain")], action: { inv in
                    inv.console.out(HelpFormatter.help(for: inv.positionals, root: BedrudBotCLI.root))
                    return .success
                }),
            ])
    }

    public static func run(_ argv: [String], environment: [String: String]) async -> Int32 {
        let early = Console()
        let args = Array(argv.dropFirst())
        let tree = root
        if args == ["--version"] {
            early.out("bedrud-bot \(BedrudBotVersion.string)")
            return 0
        }
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentParser.parse(args, root: tree)
        } catch {
            early.err("bedrud-bot: \(error.message)")
            let p = (["bedrud-bot"] + error.path).joined(separator: " ")
            early.err("Run '\(p) --help' for usage.")
            return ExitCode.usage.rawValue
        }
        var command = ArgumentParser.command(at: parsed.path, in: tree)
        // Bare `bedrud-bot` (global options allowed) on a terminal shows where you are, as the
        // apps' first screen does; in a pipe or a script it stays the help.
        if parsed.path.isEmpty && parsed.positionals.isEmpty && !parsed[GlobalOptions.help] && isatty(1) != 0 {
            command = StatusCommand.spec
        }
        if parsed[GlobalOptions.help] || command.action == nil {
            early.out(HelpFormatter.help(for: parsed.path, root: tree))
            return ExitCode.success.rawValue
        }
        // Logging: flags first; the config file's log_level is applied by commands that load it.
        var level = LogLevel.info
        if let l = parsed[GlobalOptions.logLevel] {
            guard let ll = LogLevel(name: l) else {
                early.err("bedrud-bot: --log-level must be one of trace, debug, info, warning, error, off (got '\(l)')")
                return ExitCode.usage.rawValue
            }
            level = ll
        }
        if parsed[GlobalOptions.verbose] { level = .debug }
        if parsed[GlobalOptions.quiet] { level = .error }
        var jsonLogs = false
        if let f = parsed[GlobalOptions.logFormat] {
            guard f == "text" || f == "json" else {
                early.err("bedrud-bot: --log-format must be text or json (got '\(f)')")
                return ExitCode.usage.rawValue
            }
            jsonLogs = f == "json"
        }
        let console = Console(quiet: parsed[GlobalOptions.quiet], jsonLogs: jsonLogs)
        Logging.bootstrap(sink: StderrLogSink(console: console), level: level)
        let invocation = Invocation(arguments: parsed, environment: environment, console: console)
        do {
            return try await command.action!(invocation).rawValue
        } catch {
            console.error(ErrorReporting.message(for: error))
            return ErrorReporting.exitCode(for: error).rawValue
        }
    }
}

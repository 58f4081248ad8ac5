/// One option of a command: `--name VALUE`, `--name=VALUE`, `-n VALUE`, or a flag.
public struct OptionSpec: Sendable {
    /// Long name without dashes, e.g. `password-file`; the key in ``ParsedArguments``.
    public var name: String
    public var short: Character?
    /// Placeholder for the value (`FILE`); nil for a flag.
    public var valueName: String?
    public var help: String
    public var repeatable: Bool

    public init(_ name: String, short: Character? = nil, value: String? = nil, repeatable: Bool = false, help: String) {
        self.name = name
        self.short = short
        self.valueName = value
        self.help = help
        self.repeatable = repeatable
    }

    public var isFlag: Bool { valueName == nil }
}

/// A positional argument.
public struct ArgumentSpec: Sendable {
    public var name: String
    public var help: String
    public var optional: Bool
    public var variadic: Bool

    public init(_ name: String, optional: Bool = false, variadic: Bool = false, help: String) {
        self.name = name
        self.help = help
        self.optional = optional
        self.variadic = variadic
    }
}

/// A command or a group of subcommands. The command tree is data, so parsing is pure
/// and help text lives next to each option.
public struct CommandSpec: Sendable {
    public typealias Action = @Sendable (Invocation) async throws -> ExitCode

    public var name: String
    public var summary: String
    /// Longer help: examples, behaviour, what it prints.
    public var discussion: String
    public var arguments: [ArgumentSpec]
    public var options: [OptionSpec]
    public var subcommands: [CommandSpec]
    public var hidden: Bool
    public var action: Action?

    public init(
        _ name: String, summary: String, discussion: String = "", arguments: [ArgumentSpec] = [], options: [OptionSpec] = [],
        subcommands: [CommandSpec] = [], hidden: Bool = false, action: Action? = nil
    ) {
        self.name = name
        self.summary = summary
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.hidden = hidden
        self.action = action
    }

    func subcommand(_ name: String) -> CommandSpec? { subcommands.first { $0.name == name } }
}

/// Options every command accepts, before or after the command name.
public enum GlobalOptions {
    public static let config = ValueOption("config", short: "c", value: "FILE", help: "Read settings from FILE instead of the default locations.")
    public static let instance = ValueOption("instance", short: "i", value: "NAME", help: "Use the server configured as [instance NAME] (default: default_instance).")
    public static let logLevel = ValueOption("log-level", value: "LEVEL",
                                             help: "trace, debug, info, warning, error or off (default: \(SettingSpec.defaultText("", "log_level"))).")
    public static let verbose = Flag("verbose", short: "v", help: "Same as --log-level debug.")
    public static let logFormat = ValueOption("log-format", value: "FORMAT", help: "text (default) or json: every stderr line one JSON object (time, level, category, message).")
    public static let quiet = Flag("quiet", short: "q", help: "Print only errors and what the command was asked for: no room events, notes or warnings (a successful join prints nothing).")
    public static let help = Flag("help", short: "h", help: "Show help for the command.")

    public static let specs: [OptionSpec] = [config.spec, instance.spec, logLevel.spec, verbose.spec, logFormat.spec, quiet.spec, help.spec]
}

/// The result of parsing a command line: which command, its options and arguments.
public struct ParsedArguments: Sendable, Equatable {
    /// Command names from the root, e.g. `["instance", "add"]`.
    public var path: [String] = []
    public var values: [String: [String]] = [:]
    public var flags: Set<String> = []
    public var positionals: [String] = []

    public func value(_ name: String) -> String? { values[name]?.last }
    public func all(_ name: String) -> [String] { values[name] ?? [] }
    public func flag(_ name: String) -> Bool { flags.contains(name) }
}

/// A command-line mistake: one sentence, with a suggestion when there is one.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The command path the error belongs to, for pointing at the right help.
    public var path: [String]
    public var description: String { message }
}

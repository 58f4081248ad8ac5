import BedrudProtocol

/// Everything a command's action gets: its parsed arguments, the environment and the
/// console. Configuration is loaded on first use, so `--help` never touches files.
public struct Invocation: Sendable {
    public let arguments: ParsedArguments
    public let environment: [String: String]
    public let console: Console

    public init(arguments: ParsedArguments, environment: [String: String], console: Console) {
        self.arguments = arguments
        self.environment = environment
        self.console = console
    }

    // Options are read through their declarations (`inv[Options.duration]`, see
    // OptionDeclarations.swift), never by a name written at the read.
    public var positionals: [String] { arguments.positionals }

    /// Loads the configuration (file, environment, global flags).
    /// - Parameter mayCreate: see ``Configuration/load(flags:environment:mayCreate:)``.
    public func configuration(mayCreate: Bool = false) throws -> Configuration {
        try Configuration.load(flags: arguments, environment: environment, mayCreate: mayCreate)
    }
}

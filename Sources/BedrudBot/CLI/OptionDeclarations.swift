import BedrudProtocol

/// A flag declared once (`--stats`): its ``OptionSpec`` (what `--help`, the man page and the
/// completions say) and the one way a command reads it, `inv[Options.stats]`. A command reads
/// only what it declared: a name never declared is a compile error, not a silent nil.
public struct Flag: Sendable {
    public let spec: OptionSpec
    public init(_ name: String, short: Character? = nil, help: String) { spec = OptionSpec(name, short: short, help: help) }
    public var name: String { spec.name }
}

/// An option with one value (`--duration 90m`), declared once; the last value given wins.
public struct ValueOption: Sendable {
    public let spec: OptionSpec
    public init(_ name: String, short: Character? = nil, value: String, help: String) {
        spec = OptionSpec(name, short: short, value: value, help: help)
    }
    public var name: String { spec.name }
}

/// An option that may be given several times (`--include A --include B`), declared once.
public struct ListOption: Sendable {
    public let spec: OptionSpec
    public init(_ name: String, value: String, help: String) { spec = OptionSpec(name, value: value, repeatable: true, help: help) }
    public var name: String { spec.name }
}

extension ParsedArguments {
    public subscript(_ flag: Flag) -> Bool { self.flag(flag.name) }
    public subscript(_ option: ValueOption) -> String? { value(option.name) }
    public subscript(_ option: ListOption) -> [String] { all(option.name) }
}

extension Invocation {
    public subscript(_ flag: Flag) -> Bool { arguments[flag] }
    public subscript(_ option: ValueOption) -> String? { arguments[option] }
    public subscript(_ option: ListOption) -> [String] { arguments[option] }

    /// The value of a duration option in seconds; nil when it was not given. A value that
    /// is not a duration is a usage error (exit 2) that names the option.
    func duration(_ option: ValueOption) throws -> Double? {
        guard let d = self[option] else { return nil }
        guard let v = ConfigValues.duration(d) else {
            throw CommandFailure(.usage, "--\(option.name) expects a duration like 30s, 10m or 1h30m, got '\(d)'")
        }
        return v
    }
}

extension Invocation {
    /// The value of a whole-number option within `range`; nil when it was not given.
    func integer(_ option: ValueOption, in range: ClosedRange<Int>) throws -> Int? {
        guard let v = self[option] else { return nil }
        guard let i = Int(v), range.contains(i) else {
            throw CommandFailure(.usage, "--\(option.name) must be a whole number from \(range.lowerBound) to \(range.upperBound) (got '\(v)')")
        }
        return i
    }
}

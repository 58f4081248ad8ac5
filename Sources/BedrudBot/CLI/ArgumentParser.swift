import BedrudProtocol

/// Parses argv against a ``CommandSpec`` tree. Pure: no process, no output.
public enum ArgumentParser {
    /// - Parameter arguments: argv without the program name.
    public static func parse(_ arguments: [String], root: CommandSpec) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var command = root
        var optionTable = GlobalOptions.specs + root.options
        var rest = arguments[...]
        var onlyPositionals = false

        func spec(long: String) -> OptionSpec? { optionTable.first { $0.name == long } }
        func spec(short: Character) -> OptionSpec? { optionTable.first { $0.short == short } }

        func store(_ o: OptionSpec, _ value: String?) throws(UsageError) {
            if o.isFlag {
                result.flags.insert(o.name)
                return
            }
            guard let value else {
                throw UsageError(message: "option --\(o.name) needs a value (\(o.valueName ?? "VALUE"))", path: result.path)
            }
            if !o.repeatable, result.values[o.name] != nil {
                throw UsageError(message: "option --\(o.name) given more than once", path: result.path)
            }
            result.values[o.name, default: []].append(value)
        }

        while let arg = rest.popFirst() {
            if onlyPositionals || arg == "-" || !arg.hasPrefix("-") {
                // A subcommand name, while the command has subcommands and no positional was seen.
                if !onlyPositionals, result.positionals.isEmpty, !command.subcommands.isEmpty {
                    guard let sub = command.subcommand(arg) else {
                        let names = command.subcommands.filter { !$0.hidden }.map(\.name)
                        let hint = Suggest.closest(to: arg, in: names).map { " Did you mean '\($0)'?" } ?? ""
                        let whose = result.path.isEmpty ? "" : " for '\(result.path.joined(separator: " "))'"
                        throw UsageError(message: "unknown command '\(TerminalText.quoted(arg))'\(whose).\(hint)", path: result.path)
                    }
                    command = sub
                    result.path.append(sub.name)
                    optionTable = GlobalOptions.specs + sub.options
                    continue
                }
                result.positionals.append(arg)
                continue
            }
            if arg == "--" {
                onlyPositionals = true
                continue
            }
            if arg.hasPrefix("--") {
                var name = String(arg.dropFirst(2))
                var inline: String?
                if let eq = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                guard let o = spec(long: name) else {
                    let hint = Suggest.closest(to: name, in: optionTable.map(\.name)).map { " Did you mean '--\($0)'?" } ?? ""
                    throw UsageError(message: "unknown option '--\(TerminalText.quoted(name))'.\(hint)", path: result.path)
                }
                if o.isFlag {
                    if let inline {
                        guard let b = ConfigValues.bool(inline) else {
                            throw UsageError(message: "option --\(name) is a flag; it takes no value (got '\(TerminalText.quoted(inline))')", path: result.path)
                        }
                        if b { result.flags.insert(o.name) } else { result.flags.remove(o.name) }
                        continue
                    }
                    try store(o, nil)
                } else {
                    try store(o, inline ?? rest.popFirst())
                }
                continue
            }
            // Short options: -v, -qv, -i NAME, -iNAME
            var chars = Array(arg.dropFirst())[...]
            while let c = chars.popFirst() {
                guard let o = spec(short: c) else {
                    throw UsageError(message: "unknown option '-\(c)'", path: result.path)
                }
                if o.isFlag {
                    try store(o, nil)
                } else {
                    let v = chars.isEmpty ? rest.popFirst() : String(chars)
                    chars = []
                    try store(o, v)
                }
            }
        }

        if result[GlobalOptions.help] { return result }
        if command.action == nil && !command.subcommands.isEmpty {
            if result.path.isEmpty { return result }  // bare program name: the caller shows the overview
            let names = command.subcommands.filter { !$0.hidden }.map(\.name).joined(separator: ", ")
            throw UsageError(message: "'\(result.path.joined(separator: " "))' needs a subcommand: \(names)", path: result.path)
        }
        // Check positional counts.
        let required = command.arguments.filter { !$0.optional && !$0.variadic }.count
        let variadic = command.arguments.contains { $0.variadic }
        if result.positionals.count < required {
            let missing = command.arguments.filter { !$0.optional }[result.positionals.count]
            throw UsageError(message: "missing argument \(missing.name) for '\(result.path.joined(separator: " "))'", path: result.path)
        }
        if !variadic && result.positionals.count > command.arguments.count {
            let extra = result.positionals[command.arguments.count]
            throw UsageError(message: "unexpected argument '\(TerminalText.quoted(extra))' for '\(result.path.joined(separator: " "))'", path: result.path)
        }
        return result
    }

    /// Finds the spec for a command path.
    public static func command(at path: [String], in root: CommandSpec) -> CommandSpec {
        var c = root
        for p in path { if let s = c.subcommand(p) { c = s } }
        return c
    }
}

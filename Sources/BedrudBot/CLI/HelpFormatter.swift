/// Turns ``CommandSpec``s into help text that teaches: usage, what it does, every option,
/// examples, and for the top level the exit codes.
public enum HelpFormatter {
    static let width = 100

    public static func help(for path: [String], root: CommandSpec) -> String {
        let command = ArgumentParser.command(at: path, in: root)
        let fullName = (["bedrud-bot"] + path).joined(separator: " ")
        var out = ""
        if path.isEmpty {
            out += "bedrud-bot \(BedrudBotVersion.string) — \(root.summary)\n\n"
            out += "Usage: bedrud-bot [global options] COMMAND [options] [arguments]\n"
        } else {
            out += "\(fullName) — \(command.summary)\n\n"
            var usage = "Usage: \(fullName)"
            if !command.subcommands.isEmpty { usage += " COMMAND" }
            if !command.options.isEmpty { usage += " [options]" }
            for a in command.arguments {
                let n = a.variadic ? "\(a.name)..." : a.name
                usage += a.optional || a.variadic ? " [\(n)]" : " \(n)"
            }
            out += usage + "\n"
        }
        if !command.discussion.isEmpty { out += "\n" + command.discussion.trimmingTrailingNewlines() + "\n" }
        let subs = command.subcommands.filter { !$0.hidden }
        if !subs.isEmpty {
            out += "\nCommands:\n"
            let w = (subs.map(\.name.count).max() ?? 0) + 2
            for s in subs { out += "  " + s.name.padded(to: w) + s.summary + "\n" }
        }
        if !command.arguments.isEmpty {
            out += "\nArguments:\n"
            let w = (command.arguments.map(\.name.count).max() ?? 0) + 2
            for a in command.arguments { out += "  " + a.name.padded(to: w) + a.help + "\n" }
        }
        if !command.options.isEmpty {
            out += "\nOptions:\n" + options(command.options)
        }
        out += "\nGlobal options:\n" + options(GlobalOptions.specs)
        if path.isEmpty {
            out += "\nExit codes:\n"
            for c in ExitCode.allCases { out += "  " + String(c.rawValue).padded(to: 5) + c.meaning + "\n" }
            out += "\nRun 'bedrud-bot COMMAND --help' for a command's options and examples.\n"
            out += "Settings: docs/CONFIG.md. Config file: --config, $BEDRUD_BOT_CONFIG, ~/.config/bedrud-bot/config, /etc/bedrud-bot/config.\n"
        }
        return out
    }

    static func options(_ specs: [OptionSpec]) -> String {
        let heads = specs.map { o -> String in
            var h = o.short.map { "-\($0), " } ?? "    "
            h += "--\(o.name)"
            if let v = o.valueName { h += " \(v)" }
            return h
        }
        let w = min((heads.map(\.count).max() ?? 0) + 2, 34)
        var out = ""
        for (h, o) in zip(heads, specs) {
            let lines = wrap(o.help, width: width - w - 2)
            if h.count + 2 > w {
                out += "  \(h)\n" + lines.map { "  " + String(repeating: " ", count: w) + $0 + "\n" }.joined()
            } else {
                out += "  " + h.padded(to: w) + (lines.first ?? "") + "\n"
                out += lines.dropFirst().map { "  " + String(repeating: " ", count: w) + $0 + "\n" }.joined()
            }
        }
        return out
    }

    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += line.isEmpty ? String(word) : " " + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}

extension String {
    func padded(to n: Int) -> String { count >= n ? self + " " : self + String(repeating: " ", count: n - count) }
    func trimmingTrailingNewlines() -> String {
        var s = self
        while s.last == "\n" { s.removeLast() }
        return s
    }
}

/// Writes `bedrud-bot.1` (roff, man(7) macros) from the same ``CommandSpec`` tree that
/// `--help` prints, so the manual cannot drift from the program: every visible command,
/// its arguments, its options with their help, the global options and the exit codes.
/// Pure: returns text; `bedrud-bot manpage` prints it and `scripts/package` installs it.
public enum ManPage {
    /// The whole page for `root`. Hidden commands are left out, as in `--help`.
    /// - Parameter version: shown in the footer (`bedrud-bot 0.1.0`).
    public static func render(root: CommandSpec, version: String) -> String {
        var out = Roff()
        out.request(".TH BEDRUD\\-BOT 1 \"\" \"bedrud\\-bot \(Roff.escape(version))\" \"User Commands\"")
        out.request(".SH NAME")
        out.text("bedrud-bot - \(root.summary.trimmingSuffix("."))")
        out.request(".SH SYNOPSIS")
        out.request(".B bedrud\\-bot")
        out.raw("[\\fIglobal options\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]")
        out.request(".SH DESCRIPTION")
        out.discussion(root.discussion)

        out.request(".SH COMMANDS")
        for (path, command) in visibleCommands(root) where command.action != nil {
            out.request(".SS \"\(Roff.escape(usage(path: path, command: command)))\"")
            out.text(sentence(command.summary))
            if !command.discussion.isEmpty { out.discussion(command.discussion) }
            if !command.arguments.isEmpty {
                out.request(".PP")
                out.text("Arguments:")
                for a in command.arguments {
                    out.request(".TP")
                    out.request(".I \(Roff.escape(a.name))")
                    out.text(sentence(a.help))
                }
            }
            if !command.options.isEmpty {
                out.request(".PP")
                out.text("Options:")
                options(command.options, into: &out)
            }
        }

        out.request(".SH GLOBAL OPTIONS")
        out.text("Every command accepts these, before or after the command name.")
        options(GlobalOptions.specs, into: &out)

        out.request(".SH EXIT STATUS")
        for code in ExitCode.allCases {
            out.request(".TP")
            out.request(".B \(code.rawValue)")
            out.text(sentence(code.meaning))
        }

        out.request(".SH FILES")
        out.text("The config file is the first of:")
        for (place, what) in [("--config FILE", "given on the command line"), ("$BEDRUD_BOT_CONFIG", "the environment"),
                              ("~/.config/bedrud-bot/config", "the user's"), ("/etc/bedrud-bot/config", "the system's")] {
            out.request(".TP")
            out.request(".I \(Roff.escape(place))")
            out.text(what + ".")
        }
        out.text("Settings are described in CONFIG.md, shipped in /usr/share/doc/bedrud-bot/.")
        out.request(".SH SEE ALSO")
        out.request(".BR opusinfo (1),")
        out.request(".BR systemd.timer (5),")
        out.request(".BR crontab (5)")
        return out.text
    }

    /// Every command under `root` (root excluded) that `--help` would show, depth first,
    /// with its path of names.
    static func visibleCommands(_ root: CommandSpec) -> [([String], CommandSpec)] {
        var found: [([String], CommandSpec)] = []
        func walk(_ c: CommandSpec, _ path: [String]) {
            for s in c.subcommands where !s.hidden {
                found.append((path + [s.name], s))
                walk(s, path + [s.name])
            }
        }
        walk(root, [])
        return found
    }

    static func usage(path: [String], command: CommandSpec) -> String {
        var u = (["bedrud-bot"] + path).joined(separator: " ")
        if !command.options.isEmpty { u += " [options]" }
        for a in command.arguments {
            let n = a.variadic ? "\(a.name)..." : a.name
            u += a.optional || a.variadic ? " [\(n)]" : " \(n)"
        }
        return u
    }

    static func options(_ specs: [OptionSpec], into out: inout Roff) {
        for o in specs {
            out.request(".TP")
            var head = ""
            if let s = o.short { head += "\\fB\\-\(Roff.escape(String(s)))\\fR, " }
            head += "\\fB\\-\\-\(Roff.escape(o.name))\\fR"
            if let v = o.valueName { head += " \\fI\(Roff.escape(v))\\fR" }
            out.raw(head)
            out.text(sentence(o.help) + (o.repeatable ? " May be given more than once." : ""))
        }
    }

    static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        let s = first.uppercased() + text.dropFirst()
        return s.hasSuffix(".") || s.hasSuffix(")") && s.dropLast().hasSuffix(".") ? s : s + "."
    }
}

/// Builds roff text: escapes what roff would read as control characters or escapes, and
/// writes non-ASCII characters as `\[uXXXX]` so the page reads the same in any locale.
struct Roff {
    private(set) var text = ""

    /// A request or macro line, written as given.
    mutating func request(_ line: String) { text += line + "\n" }

    /// A line already holding roff escapes (font changes); guarded against a leading `.`/`'`.
    mutating func raw(_ line: String) { text += (line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" : "") + line + "\n" }

    /// Running text.
    mutating func text(_ plain: String) {
        for line in plain.split(separator: "\n", omittingEmptySubsequences: true) {
            raw(Roff.escape(String(line.drop { $0 == " " })))
        }
    }

    /// A `discussion` block from a spec: paragraphs of text, and indented lines (examples)
    /// kept as they are, in an indented no-fill block.
    mutating func discussion(_ body: String) {
        var paragraph: [String] = []
        var example: [String] = []
        func flushParagraph() {
            if paragraph.isEmpty { return }
            request(".PP")
            text(paragraph.joined(separator: " "))
            paragraph = []
        }
        func flushExample() {
            if example.isEmpty { return }
            request(".RS 4")
            request(".nf")
            for l in example { raw(Roff.escape(l)) }
            request(".fi")
            request(".RE")
            example = []
        }
        for line in body.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) {
                flushParagraph()
                flushExample()
            } else if line.hasPrefix(" ") {
                flushParagraph()
                example.append(String(line))
            } else {
                flushExample()
                paragraph.append(String(line))
            }
        }
        flushParagraph()
        flushExample()
    }

    /// Escapes `\` and `-` (a minus, so options can be copied from the page) and writes
    /// non-ASCII characters by code point.
    static func escape(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "\"": out += "\\(dq"
            case _ where u.value < 0x20: out += " "
            case _ where u.value > 0x7E:
                let hex = String(u.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: out.unicodeScalars.append(u)
            }
        }
        return out
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}

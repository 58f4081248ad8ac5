@testable import BedrudBot
import Foundation
import Testing
import TestSupport

/// The completion scripts as the shells run them: `bedrud-bot completion bash` sourced into
/// a bash without rc files, `complete -p`, then `_bedrud_bot` called with COMP_WORDS and
/// COMP_CWORD set the way readline sets them; fish's own `complete -C`; zsh's parser.
@Suite struct ShellCompletionTests {
    static let LogLevelNames = ["debug", "error", "info", "off", "trace", "warning"]

    /// A user with a config of two instances, and a folder with two files to complete.
    static func user() throws -> CLIUser {
        let u = try CLIUser()
        _ = try u.writeFile(".config/bedrud-bot/config", """
            default_instance = work
            [instance work]
            url = https://meet.example.com
            [instance lab]
            url = https://10.0.0.5
            """)
        _ = try u.writeFile("alt.conf", """
            [instance other]
            url = https://other.example.com
            """)
        _ = try u.writeFile("rec/first.opus", "x")
        _ = try u.writeFile("rec/fine.opus", "x")
        return u
    }

    /// Runs `_bedrud_bot` once per line of `cases` (the words of a command line, the last
    /// one being completed) and returns COMPREPLY of each, sorted and space-separated.
    static func bash(_ u: CLIUser, _ cases: [[String]]) async throws -> [String] {
        var script = """
            source <("$BOT" completion bash) || exit 9
            complete -p bedrud-bot
            t() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _bedrud_bot; printf '%s\\n' "$(printf '%s\\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\\n' ' ' | sed 's/ $//')"; }

            """
        for c in cases { script += "t " + ([Repo.binary.path] + c).map { "'\($0)'" }.joined(separator: " ") + "\n" }
        let program = script
        let env = u.environment.merging(["BOT": Repo.binary.path]) { $1 }
        let home = u.home
        let r = try await offPool {
            try Subprocess.run(URL(fileURLWithPath: "/bin/bash"), ["--norc", "--noprofile", "-c", program], environment: env,
                               currentDirectory: home, inheritEnvironment: false)
        }
        #expect(r.exitCode == 0 && r.stderr.isEmpty, "bash: exit \(r.exitCode)\n\(r.stderr)")
        var lines = r.stdout.components(separatedBy: "\n")
        #expect(lines.first == "complete -F _bedrud_bot bedrud-bot")
        lines.removeFirst()
        return Array(lines.prefix(cases.count))
    }

    @Test func bashCompletesCommandsFlagsAndInstanceNames() async throws {
        let u = try Self.user()
        let root = BedrudBotCLI.root
        let visible = root.subcommands.filter { !$0.hidden }.map(\.name).sorted().joined(separator: " ")
        let joinRe = (ArgumentParser.command(at: ["join"], in: root).options + GlobalOptions.specs)
            .map { "--" + $0.name }.filter { $0.hasPrefix("--re") }.sorted().joined(separator: " ")
        let got = try await Self.bash(u, [
            [""],
            ["in"],
            ["instance", "u"],
            ["join", "--re"],
            ["instance", "use", ""],
            ["-c", "alt.conf", "instance", "remove", ""],
            ["--instance", "w"],
            ["join", "-i", ""],
            ["verify", "rec/fi"],
            ["--log-level", "d"],
            ["--config", "=", ""],
            ["completion", ""],
            ["join", "standup", "--duration", ""],
        ])
        #expect(got == [
            visible,
            "instance",
            "use",
            joinRe,
            "lab work",
            "other",
            "work",
            "lab work",
            "rec/fine.opus rec/first.opus",
            "debug",
            ".config alt.conf rec",
            "bash fish zsh",
            "",
        ])
        #expect(joinRe.contains("--record"))
        #expect(!visible.contains("manpage") && !visible.contains("dev-record"))
    }

    @Test func fishCompletesCommandsAndInstanceNames() async throws {
        let u = try Self.user()
        let script = try await offPool { try Subprocess.bot(["completion", "fish"]) }
        #expect(script.exitCode == 0)
        let file = try u.writeFile("bedrud-bot.fish", script.stdout)
        let env = u.environment.merging(["PATH": Repo.binary.deletingLastPathComponent().path + ":/usr/bin:/bin"]) { $1 }
        let home = u.home
        let r = try await offPool {
            try Subprocess.run(URL(fileURLWithPath: "/usr/bin/fish"), ["--no-config", "-c", """
                source \(file); or exit 9
                complete -C 'bedrud-bot inst'
                echo ---
                complete -C 'bedrud-bot instance use '
                echo ---
                complete -C 'bedrud-bot join --dur'
                echo ---
                complete -C 'bedrud-bot --log-level '
                """], environment: env, currentDirectory: home, inheritEnvironment: false)
        }
        #expect(r.exitCode == 0 && r.stderr.isEmpty, "fish: \(r.stderr)")
        let parts = r.stdout.components(separatedBy: "---\n")
        #expect(parts.count == 4)
        guard parts.count == 4 else { return }
        #expect(parts[0] == "instance\tadd, list, use or remove Bedrud servers\n")
        #expect(Set(parts[1].split(separator: "\n")) == ["lab", "work"])
        #expect(parts[2].hasPrefix("--duration\t"))
        // A value with fixed words offers those words only, no file names.
        #expect(parts[3].split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }.sorted() == Self.LogLevelNames)
    }

    @Test func zshParsesAndRegistersTheScript() async throws {
        let u = try Self.user()
        let script = try await offPool { try Subprocess.bot(["completion", "zsh"]) }
        #expect(script.exitCode == 0 && script.stdout.hasPrefix("#compdef bedrud-bot\n"))
        let file = try u.writeFile("_bedrud-bot", script.stdout)
        let env = u.environment
        let r = try await offPool {
            try Subprocess.run(URL(fileURLWithPath: "/usr/bin/zsh"), ["-f", "-c", """
                zsh -n \(file) || exit 9
                autoload -U compinit && compinit -u -D
                source \(file)
                print -r -- $_comps[bedrud-bot]
                """], environment: env, inheritEnvironment: false)
        }
        #expect(r.exitCode == 0 && r.stderr.isEmpty, "zsh: \(r.stderr)")
        #expect(r.stdout == "_bedrud_bot\n")
    }

    /// The zsh script's own logic (the word walk, what completes each value) in a real zsh,
    /// with zsh's completion builtins replaced by stand-ins that print the candidates
    /// matching the word at the cursor: a zsh completion needs a terminal (zpty) otherwise.
    @Test func zshOffersWhatTheSpecSays() async throws {
        let u = try Self.user()
        var program = #"""
            compdef() { }
            _show() { local -a m; m=(${(M)@:#${words[CURRENT]}*}); print -r -- ${(j: :)${(o)m}} }
            _describe() { local -a arr names; arr=("${(@P)4}"); names=(${arr%%:*}); _show $names }
            compadd() { if [[ $1 == -a ]]; then local -a arr; arr=("${(@P)2}"); _show $arr; else shift; _show "$@"; fi }
            _files() { print -r -- "<files $*>" }
            t() { words=("$@"); CURRENT=$#; _bedrud_bot || print }
            source <(bedrud-bot completion zsh) || exit 9

            """#
        let cases = [["in"], ["instance", "use", ""], ["-c", "alt.conf", "instance", "remove", ""], ["--log-level", "d"],
                     ["verify", ""], ["join", "--dur"], ["completion", ""], ["join", "standup", "--duration", ""]]
        for c in cases { program += "t bedrud-bot " + c.map { "'\($0)'" }.joined(separator: " ") + "\n" }
        let env = u.environment.merging(["PATH": Repo.binary.deletingLastPathComponent().path + ":/usr/bin:/bin"]) { $1 }
        let home = u.home
        let script = program
        let r = try await offPool {
            try Subprocess.run(URL(fileURLWithPath: "/usr/bin/zsh"), ["-f", "-c", script], environment: env, currentDirectory: home,
                               inheritEnvironment: false)
        }
        #expect(r.exitCode == 0 && r.stderr.isEmpty, "zsh: \(r.stderr)")
        #expect(r.stdout.components(separatedBy: "\n").dropLast() == [
            "instance", "lab work", "other", "debug", "<files >", "--duration", "bash fish zsh", "",
        ])
    }

    @Test func anUnknownShellIsAUsageError() async throws {
        let r = try await offPool { try Subprocess.bot(["completion", "tcsh"]) }
        #expect(r.exitCode == 2)
        #expect(r.stderr == "bedrud-bot: unknown command 'tcsh' for 'completion'.\nRun 'bedrud-bot completion --help' for usage.\n")
    }

    /// The helper the scripts call prints the names only; a broken config prints nothing
    /// on stdout (the scripts drop stderr) and fails with the config code.
    @Test func instancesHelperPrintsNamesOnly() async throws {
        let u = try Self.user()
        let names = try await u.expect(0, ["completion", "instances"])
        #expect(names.stdout == "work\nlab\n" && names.stderr.isEmpty)
        _ = try u.writeFile("bad.conf", "[instance\n")
        let bad = try await u.expect(3, ["--config", u.home.appendingPathComponent("bad.conf").path, "completion", "instances"])
        #expect(bad.stdout.isEmpty)
    }
}

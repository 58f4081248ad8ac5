@testable import BedrudBot
import Foundation
import Testing
import TestSupport

/// `bedrud-bot.1` is made from the command specs: it lists every command and option
/// `--help` lists, and groff reads it without a warning.
@Suite struct ManPageTests {
    static let page = ManPage.render(root: BedrudBotCLI.root, version: BedrudBotVersion.string)

    @Test func listsEveryVisibleCommandAndEveryOption() {
        let commands = ManPage.visibleCommands(BedrudBotCLI.root).filter { $0.1.action != nil }
        #expect(commands.count > 20)
        for (path, command) in commands {
            let title = ".SS \"" + Roff.escape(ManPage.usage(path: path, command: command)) + "\""
            #expect(Self.page.contains(title + "\n"), "no section for bedrud-bot \(path.joined(separator: " "))")
            for o in command.options {
                #expect(Self.page.contains("\\fB\\-\\-" + Roff.escape(o.name) + "\\fR"), "\(path): no --\(o.name)")
            }
        }
        for o in GlobalOptions.specs { #expect(Self.page.contains("\\fB\\-\\-" + Roff.escape(o.name) + "\\fR")) }
        for c in ExitCode.allCases { #expect(Self.page.contains(".B \(c.rawValue)\n")) }
        // Hidden commands stay out, as in --help.
        #expect(!Self.page.contains("dev\\-record"))
        #expect(!Self.page.contains("bedrud\\-bot manpage"))
        #expect(!Self.page.contains("completion instances"))
    }

    @Test func groffReadsItWithoutWarnings() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("manpage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("bedrud-bot.1")
        try Data(Self.page.utf8).write(to: file)
        let lint = try await offPool { try Subprocess.run(URL(fileURLWithPath: "/usr/bin/groff"), ["-ww", "-man", "-z", "-Tutf8", file.path]) }
        #expect(lint.exitCode == 0 && lint.stderr.isEmpty, "groff -ww: \(lint.stderr)")
        // What a reader sees: the options as typed (ASCII minus), the em dash as itself.
        let shown = try await offPool {
            try Subprocess.run(URL(fileURLWithPath: "/usr/bin/groff"), ["-man", "-Tutf8", "-P", "-cbou", file.path],
                               environment: ["LC_ALL": "C.UTF-8"])
        }
        #expect(shown.exitCode == 0 && shown.stderr.isEmpty, "groff -Tutf8: \(shown.stderr)")
        #expect(shown.stdout.contains("bedrud-bot join standup --record --duration 90m"))
        #expect(shown.stdout.contains("--password-file FILE"))
    }

    /// Pure text in, roff out: control characters, backslashes, leading dots.
    @Test func escapesWhatRoffWouldRead() {
        #expect(Roff.escape(#"a\b-c "d" é—"#) == #"a\eb\-c \(dqd\(dq \[u00E9]\[u2014]"#)
        var r = Roff()
        r.text(".starts with a dot\n'and a quote")
        #expect(r.text == "\\&.starts with a dot\n\\&'and a quote\n")
    }

    @Test func printedByTheHiddenCommand() async throws {
        let r = try await offPool { try Subprocess.bot(["manpage"]) }
        #expect(r.exitCode == 0 && r.stderr.isEmpty)
        #expect(r.stdout == Self.page)
        let help = try await offPool { try Subprocess.bot(["--help"]) }
        #expect(!help.stdout.contains("manpage"), "manpage is internal: not in --help")
    }
}

/// A flag's help and a new flag reach the man page and every completion script: they are
/// all read from the spec.
@Suite struct GeneratedDocsFollowTheSpecTests {
    static func root(help: String, extra: [OptionSpec] = []) -> CommandSpec {
        CommandSpec("bedrud-bot", summary: "test tree.", subcommands: [
            CommandSpec("record", summary: "record a room", arguments: [ArgumentSpec("ROOM", help: "the room")],
                        options: [OptionSpec("speed", value: "N", help: help)] + extra, action: { _ in .success }),
        ])
    }

    @Test func changingAFlagsHelpChangesTheManPageAndTheCompletions() {
        let before = Self.root(help: "Packets per second, before.")
        let after = Self.root(help: "Frames per tick, after.")
        let man = (ManPage.render(root: before, version: "9"), ManPage.render(root: after, version: "9"))
        #expect(man.0.contains("Packets per second, before.") && !man.0.contains("Frames per tick"))
        #expect(man.1.contains("Frames per tick, after.") && !man.1.contains("Packets per second"))
        for shell in [ShellCompletion.Shell.zsh, .fish] {
            let b = ShellCompletion.script(shell, root: before), a = ShellCompletion.script(shell, root: after)
            #expect(b.contains("Packets per second, before") && !b.contains("Frames per tick"), "\(shell)")
            #expect(a.contains("Frames per tick, after") && !a.contains("Packets per second"), "\(shell)")
        }
    }

    @Test func aNewFlagAppearsEverywhere() {
        let grown = Self.root(help: "Speed.", extra: [OptionSpec("wait-for-room", value: "DURATION", help: "Wait for the room.")])
        #expect(ManPage.render(root: grown, version: "9").contains("\\fB\\-\\-wait\\-for\\-room\\fR \\fIDURATION\\fR"))
        #expect(ShellCompletion.script(.bash, root: grown).contains("vals='--speed --wait-for-room"))
        #expect(ShellCompletion.script(.zsh, root: grown).contains("'--wait-for-room:Wait for the room'"))
        #expect(ShellCompletion.script(.fish, root: grown).contains("-l wait-for-room -x -d 'Wait for the room'"))
        #expect(!ShellCompletion.script(.bash, root: Self.root(help: "Speed.")).contains("wait-for-room"))
    }
}

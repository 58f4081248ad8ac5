import BedrudProtocol

/// `bedrud-bot completion bash|zsh|fish` prints a completion script and the hidden
/// `bedrud-bot manpage` prints `bedrud-bot.1`; both are generated from the command tree
/// (``ShellCompletion``, ``ManPage``), so they list exactly what `--help` lists.
enum CompletionCommands {
    static let spec = CommandSpec(
        "completion", summary: "print a shell completion script (bash, zsh or fish)",
        discussion: """
            The script completes commands, options, file names and the instance names of your
            config. The Debian package installs all three; to use one by hand:

            Examples:
              source <(bedrud-bot completion bash)                  # in ~/.bashrc
              bedrud-bot completion zsh > ~/.zfunc/_bedrud-bot      # a folder in $fpath
              bedrud-bot completion fish > ~/.config/fish/completions/bedrud-bot.fish
            """,
        subcommands: ShellCompletion.Shell.allCases.map(script) + [instances])

    static func script(_ shell: ShellCompletion.Shell) -> CommandSpec {
        CommandSpec(shell.rawValue, summary: "print the \(shell.rawValue) completion script", action: { inv in
            inv.console.out(ShellCompletion.script(shell, root: BedrudBotCLI.root).trimmingTrailingNewlines())
            return .success
        })
    }

    /// Called by the scripts while completing: instance names, one a line. Prints nothing
    /// but the names (no warnings), so a broken config completes nothing instead of noise.
    static let instances = CommandSpec(
        "instances", summary: "(internal) print the configured instance names, one a line", hidden: true,
        action: { inv in
            let config = try inv.configuration()
            for i in config.instances { inv.console.out(i.name) }
            return .success
        })

    static let manpage = CommandSpec(
        "manpage", summary: "(internal) print the manual page bedrud-bot.1 (roff)", hidden: true,
        action: { inv in
            inv.console.out(ManPage.render(root: BedrudBotCLI.root, version: BedrudBotVersion.string).trimmingTrailingNewlines())
            return .success
        })
}

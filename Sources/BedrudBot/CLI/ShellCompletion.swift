import BedrudProtocol
import BedrudRuntime

/// Writes completion scripts for bash, zsh and fish from the ``CommandSpec`` tree, the
/// same data `--help` prints, so a new command or flag completes as soon as it is in the
/// spec. Pure: returns the script text; `bedrud-bot completion SHELL` prints it.
///
/// All three scripts work the same way: they walk the words before the cursor through
/// the command tree (skipping options and the values of options that take one) to find
/// the command being typed, then offer its subcommands, its options, or the values of the
/// option or argument at the cursor. Instance names are read when completing, from the
/// config the command line names (`--config`) or the default one, by the hidden
/// `bedrud-bot completion instances`.
public enum ShellCompletion {
    /// A shell the scripts are written for.
    public enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    /// What completes the value of an option or a positional argument.
    enum ValueKind: Equatable {
        case none, file, directory, instance
        case choices([String])

        var bashWord: String {
            switch self {
            case .none: "-"
            case .file: "file"
            case .directory: "dir"
            case .instance: "instance"
            case .choices(let words): "choices:" + words.joined(separator: ",")
            }
        }
    }

    /// One command of the tree as the scripts see it: where it is, what follows it.
    struct Node {
        var path: [String]
        /// Visible subcommands with their summaries.
        var subcommands: [(name: String, summary: String)]
        /// The command's own options, then the global ones.
        var options: [OptionSpec]
        var arguments: [ArgumentSpec]

        var key: String { path.joined(separator: " ") }
        /// Every spelling of an option that takes a value (`--name`, `-n`).
        var valueSpellings: [String] {
            options.filter { !$0.isFlag }.flatMap(ShellCompletion.spellings)
        }
    }

    /// The script for `shell`.
    public static func script(_ shell: Shell, root: CommandSpec) -> String {
        let nodes = self.nodes(root)
        switch shell {
        case .bash: return bash(nodes)
        case .zsh: return zsh(nodes)
        case .fish: return fish(nodes)
        }
    }

    // MARK: - The tree, and what completes each value

    static func nodes(_ root: CommandSpec) -> [Node] {
        var found: [Node] = []
        func walk(_ c: CommandSpec, _ path: [String]) {
            let subs = c.subcommands.filter { !$0.hidden }
            found.append(Node(path: path, subcommands: subs.map { ($0.name, $0.summary) },
                              options: c.options + GlobalOptions.specs, arguments: c.arguments))
            for s in subs { walk(s, path + [s.name]) }
        }
        walk(root, [])
        return found
    }

    static func spellings(_ o: OptionSpec) -> [String] {
        ["--" + o.name] + (o.short.map { ["-" + String($0)] } ?? [])
    }

    /// Values with a fixed set of words. Log levels come from ``LogLevel``; the log
    /// formats are the two `BedrudBotCLI.run` accepts.
    static let choices: [String: [String]] = [
        "log-level": LogLevel.allCases.map(\.name),
        "log-format": ["text", "json"],
    ]

    static func kind(of option: OptionSpec) -> ValueKind {
        if option.isFlag { return .none }
        if option.name == "instance" { return .instance }
        if let words = choices[option.name] { return .choices(words) }
        return kind(valueName: option.valueName ?? "")
    }

    /// An argument of a command under `instance` named NAME is an instance name
    /// (`instance use NAME`, `instance remove NAME`).
    static func kind(of argument: ArgumentSpec, path: [String]) -> ValueKind {
        if path.first == "instance" && argument.name == "NAME" { return .instance }
        return kind(valueName: argument.name)
    }

    static func kind(valueName: String) -> ValueKind {
        switch valueName {
        case "FILE", "WAV", "PATH": .file
        case "DIR": .directory
        default: .none
        }
    }

    /// A description on one line, at most about 90 characters, for zsh and fish.
    static func shortHelp(_ text: String) -> String {
        var s = TerminalText.sanitize(text, keepingLineBreaks: false)
        // The first sentence: up to a ". " before a capital letter ("e.g. x" goes on).
        let chars = Array(s)
        for i in chars.indices.dropLast(2) where chars[i] == "." && chars[i + 1] == " " && chars[i + 2].isUppercase {
            s = String(chars[..<i])
            break
        }
        if s.hasSuffix(".") { s.removeLast() }
        if s.count > 90 { s = String(s.prefix(87)) + "..." }
        return s
    }

    /// `text` in single quotes for sh-like shells.
    /// The `case` arms of a shell's value-kind function: each command's options that take
    /// a value, then the global options (matched under any command), each printing its
    /// kind with `print` (bash `echo`, zsh `print -r --`).
    static func valueKindCases(_ nodes: [Node], print: String) -> String {
        var local = "", global = ""
        for n in nodes {
            for o in n.options {
                let k = kind(of: o)
                if k == .none { continue }
                let isGlobal = GlobalOptions.specs.contains { $0.name == o.name }
                if isGlobal && !n.path.isEmpty { continue }
                let pattern = spellings(o).map { (isGlobal ? "*" : shQuote(n.key)) + "'|\($0)'" }.joined(separator: "|")
                let line = "    \(pattern)) \(print) \(shQuote(k.bashWord)) ;;\n"
                if isGlobal { global += line } else { local += line }
            }
        }
        return local + global
    }

    static func shQuote(_ text: String) -> String { "'" + text.replacingScalars("'", with: "'\\''") + "'" }

    /// `text` in single quotes for fish, where `\` and `'` are escaped inside them.
    static func fishQuote(_ text: String) -> String {
        "'" + text.replacingScalars("\\", with: "\\\\").replacingScalars("'", with: "\\'") + "'"
    }

    static let header = "generated from bedrud-bot's command specs by 'bedrud-bot completion"

    // MARK: - bash

    static func bash(_ nodes: [Node]) -> String {
        var s = """
            # bash completion for bedrud-bot, \(header) bash'.
            # Install: /usr/share/bash-completion/completions/bedrud-bot, or
            #   source <(bedrud-bot completion bash)

            # Sets subs, vals (options taking a value), opts (all options) and args (what
            # completes each positional; a trailing + repeats the last) for a command path.
            _bedrud_bot_node() {
              case "$1" in

            """
        for n in nodes {
            let args = n.arguments.map { kind(of: $0, path: n.path).bashWord }.joined(separator: " ")
                + (n.arguments.last?.variadic == true ? " +" : "")
            s += "    \(shQuote(n.key))) subs=\(shQuote(n.subcommands.map(\.name).joined(separator: " ")))"
            s += " vals=\(shQuote(n.valueSpellings.joined(separator: " ")))"
            s += " opts=\(shQuote(n.options.flatMap(spellings).joined(separator: " ")))"
            s += " args=\(shQuote(args)) ;;\n"
        }
        s += """
                *) subs='' vals='' opts='' args='' ;;
              esac
            }

            # Prints what completes the value of option $2 of command path $1.
            _bedrud_bot_value_kind() {
              case "$1|$2" in

            """
        s += valueKindCases(nodes, print: "echo")
        s += #"""
                *) echo - ;;
              esac
            }

            # Instance names from the config the command line names, or the default one.
            _bedrud_bot_instances() {
              local bot=${COMP_WORDS[0]} i cfg=()
              [[ $bot == "~/"* ]] && bot=$HOME/${bot#\~/}
              for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in
                  -c|--config) cfg=(--config "${COMP_WORDS[i + 1]}") ;;
                esac
              done
              "$bot" "${cfg[@]}" completion instances 2>/dev/null
            }

            _bedrud_bot_values() {
              case $1 in
                file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
                dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
                instance) COMPREPLY=($(compgen -W "$(_bedrud_bot_instances)" -- "$cur")) ;;
                choices:*) local words=${1#choices:}; COMPREPLY=($(compgen -W "${words//,/ }" -- "$cur")) ;;
                *) COMPREPLY=() ;;
              esac
            }

            _bedrud_bot() {
              local cur=${COMP_WORDS[COMP_CWORD]} prev='' path='' subs vals opts args npos=0 i w
              ((COMP_CWORD > 1)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
              # "--config=FILE": bash splits at '=' (COMP_WORDBREAKS); complete the value.
              if [[ $cur == = ]]; then prev=${COMP_WORDS[COMP_CWORD - 1]}; cur=''
              elif [[ $prev == = ]] && ((COMP_CWORD > 2)); then prev=${COMP_WORDS[COMP_CWORD - 2]}; fi
              _bedrud_bot_node ''
              for ((i = 1; i < COMP_CWORD; i++)); do
                w=${COMP_WORDS[i]}
                case $w in
                  =) ;;
                  -*)
                    if [[ " $vals " == *" $w "* ]]; then
                      ((i++))
                      [[ ${COMP_WORDS[i]} == = ]] && ((i++))
                    fi ;;
                  *)
                    if ((npos == 0)) && [[ -n $subs && " $subs " == *" $w "* ]]; then
                      path=${path:+$path }$w
                      _bedrud_bot_node "$path"
                    else
                      ((npos++))
                    fi ;;
                esac
              done
              if [[ -n $prev && " $vals " == *" $prev "* ]]; then
                _bedrud_bot_values "$(_bedrud_bot_value_kind "$path" "$prev")"
                return 0
              fi
              if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$opts" -- "$cur"))
              elif [[ -n $subs ]] && ((npos == 0)); then
                COMPREPLY=($(compgen -W "$subs" -- "$cur"))
              else
                local -a kinds=($args)
                local k=- n=${#kinds[@]}
                if ((n > 0)) && [[ ${kinds[n - 1]} == + ]]; then
                  if ((npos < n - 2)); then k=${kinds[npos]}; else k=${kinds[n - 2]}; fi
                elif ((npos < n)); then
                  k=${kinds[npos]}
                fi
                _bedrud_bot_values "$k"
              fi
              return 0
            }

            complete -F _bedrud_bot bedrud-bot

            """#
        return s
    }

    // MARK: - zsh

    static func zsh(_ nodes: [Node]) -> String {
        func described(_ name: String, _ help: String) -> String {
            shQuote(name.replacingScalars(":", with: "\\:") + ":" + shortHelp(help))
        }
        var s = """
            #compdef bedrud-bot
            # zsh completion for bedrud-bot, \(header) zsh'.
            # Install as _bedrud-bot in a folder of $fpath (Debian: /usr/share/zsh/vendor-completions).

            # Sets subs and opts (name:description), subnames, vals (options taking a value)
            # and args (what completes each positional; a trailing + repeats the last).
            _bedrud_bot_node() {
              case "$1" in

            """
        for n in nodes {
            let args = n.arguments.map { kind(of: $0, path: n.path).bashWord } + (n.arguments.last?.variadic == true ? ["+"] : [])
            s += "    \(shQuote(n.key)))\n"
            s += "      subs=(\(n.subcommands.map { described($0.name, $0.summary) }.joined(separator: " ")))\n"
            s += "      subnames=(\(n.subcommands.map(\.name).joined(separator: " ")))\n"
            s += "      opts=(\(n.options.flatMap { o in spellings(o).map { described($0, o.help) } }.joined(separator: " ")))\n"
            s += "      vals=(\(n.valueSpellings.joined(separator: " ")))\n"
            s += "      args=(\(args.joined(separator: " "))) ;;\n"
        }
        s += """
                *) subs=() subnames=() opts=() vals=() args=() ;;
              esac
            }

            _bedrud_bot_value_kind() {
              case "$1|$2" in

            """
        s += valueKindCases(nodes, print: "print -r --")
        s += #"""
                *) print -r -- - ;;
              esac
            }

            _bedrud_bot_instances() {
              local -a cfg
              local i
              for (( i = 2; i < CURRENT; i++ )); do
                case ${words[i]} in
                  -c|--config) cfg=(--config ${(Q)words[i+1]}) ;;
                esac
              done
              ${~words[1]} $cfg completion instances 2>/dev/null
            }

            _bedrud_bot_values() {
              case $1 in
                file) _files ;;
                dir) _files -/ ;;
                instance) local -a names; names=(${(f)"$(_bedrud_bot_instances)"}); compadd -a names ;;
                choices:*) compadd -- ${(s:,:)1#choices:} ;;
                *) return 1 ;;
              esac
            }

            _bedrud_bot() {
              local cmdpath='' w prev=${words[CURRENT-1]} cur=${words[CURRENT]} k
              local -a subs subnames opts vals args
              integer i npos=0
              _bedrud_bot_node ''
              for (( i = 2; i < CURRENT; i++ )); do
                w=${words[i]}
                case $w in
                  -*=*) ;;
                  -*) (( ${vals[(Ie)$w]} )) && (( i++ )) ;;
                  *)
                    if (( npos == 0 && ${subnames[(Ie)$w]} )); then
                      cmdpath=${cmdpath:+$cmdpath }$w
                      _bedrud_bot_node $cmdpath
                    else
                      (( npos++ ))
                    fi ;;
                esac
              done
              if (( CURRENT > 2 && ${vals[(Ie)$prev]} )); then
                _bedrud_bot_values $(_bedrud_bot_value_kind "$cmdpath" $prev)
                return
              fi
              if [[ $cur == -* ]]; then
                _describe -t options option opts
              elif (( ${#subs} && npos == 0 )); then
                _describe -t commands command subs
              else
                integer n=${#args}
                k=-
                if (( n > 0 )) && [[ ${args[n]} == + ]]; then
                  if (( npos < n - 2 )); then k=${args[npos+1]}; else k=${args[n-1]}; fi
                elif (( npos < n )); then
                  k=${args[npos+1]}
                fi
                _bedrud_bot_values $k
              fi
            }

            if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
              _bedrud_bot "$@"
            else
              compdef _bedrud_bot bedrud-bot
            fi

            """#
        return s
    }

    // MARK: - fish

    static func fish(_ nodes: [Node]) -> String {
        var s = """
            # fish completion for bedrud-bot, \(header) fish'.
            # Install: /usr/share/fish/vendor_completions.d/bedrud-bot.fish

            # Subcommands of a command path.
            function __bedrud_bot_subs --argument-names p
                switch "$p"

            """
        for n in nodes where !n.subcommands.isEmpty {
            s += "        case \(fishQuote(n.key))\n            printf '%s\\n' \(n.subcommands.map(\.name).joined(separator: " "))\n"
        }
        s += """
                end
            end

            # Spellings of the options that take a value, for a command path.
            function __bedrud_bot_vals --argument-names p
                switch "$p"

            """
        for n in nodes {
            s += "        case \(fishQuote(n.key))\n            printf '%s\\n' \(n.valueSpellings.joined(separator: " "))\n"
        }
        s += #"""
                end
            end

            # The command path typed so far (line 1) and how many positionals follow it (line 2).
            function __bedrud_bot_state
                set -l tokens (commandline -opc)
                set -l p ''
                set -l npos 0
                set -l skip 0
                for t in $tokens[2..-1]
                    if test $skip -eq 1
                        set skip 0
                        continue
                    end
                    switch $t
                        case '-*=*'
                        case '-*'
                            if contains -- $t (__bedrud_bot_vals "$p")
                                set skip 1
                            end
                        case '*'
                            if test $npos -eq 0; and contains -- $t (__bedrud_bot_subs "$p")
                                set p (string trim -- "$p $t")
                            else
                                set npos (math $npos + 1)
                            end
                    end
                end
                printf '%s\n' "$p" $npos
            end

            function __bedrud_bot_at --argument-names want
                set -l s (__bedrud_bot_state)
                test "$s[1]" = "$want"
            end

            # Instance names from the config the command line names, or the default one.
            function __bedrud_bot_instances
                set -l tokens (commandline -opc)
                set -l cfg
                for i in (seq 2 (math (count $tokens) - 1))
                    if contains -- $tokens[$i] -c --config
                        set cfg --config $tokens[(math $i + 1)]
                    end
                end
                $tokens[1] $cfg completion instances 2>/dev/null
            end

            complete -c bedrud-bot -f

            """#
        for n in nodes {
            let at = "-n " + fishQuote("__bedrud_bot_at " + fishQuote(n.key))
            for sub in n.subcommands {
                s += "complete -c bedrud-bot \(at) -a \(fishQuote(sub.name)) -d \(fishQuote(shortHelp(sub.summary)))\n"
            }
            for o in n.options where !GlobalOptions.specs.contains(where: { $0.name == o.name }) {
                s += "complete -c bedrud-bot \(at) \(fishOption(o))\n"
            }
            if n.subcommands.isEmpty, let a = n.arguments.first {
                switch kind(of: a, path: n.path) {
                case .file: s += "complete -c bedrud-bot \(at) -F\n"
                case .directory: s += "complete -c bedrud-bot \(at) -a '(__fish_complete_directories)'\n"
                case .instance: s += "complete -c bedrud-bot \(at) -a '(__bedrud_bot_instances)'\n"
                case .choices(let words): s += "complete -c bedrud-bot \(at) -a \(fishQuote(words.joined(separator: " ")))\n"
                case .none: break
                }
            }
        }
        for o in GlobalOptions.specs { s += "complete -c bedrud-bot \(fishOption(o))\n" }
        return s
    }

    static func fishOption(_ o: OptionSpec) -> String {
        var s = "-l \(o.name)"
        if let c = o.short { s += " -s \(c)" }
        switch kind(of: o) {
        // -x: takes a value and offers no file names; -r -F: takes a file name.
        case .none: if !o.isFlag { s += " -x" }
        case .file: s += " -r -F"
        case .directory: s += " -x -a '(__fish_complete_directories)'"
        case .instance: s += " -x -a '(__bedrud_bot_instances)'"
        case .choices(let words): s += " -x -a \(fishQuote(words.joined(separator: " ")))"
        }
        return s + " -d \(fishQuote(shortHelp(o.help)))"
    }
}

@testable import BedrudBot
import Testing

/// Options declared once: read through their declarations, and help that states a
/// setting's default states the table's.
@Suite struct OptionDeclarationsTests {
    func invocation(values: [String: [String]] = [:], flags: Set<String> = []) -> Invocation {
        Invocation(arguments: ParsedArguments(path: ["join"], values: values, flags: flags, positionals: []), environment: [:], console: Console(quiet: true))
    }

    @Test func aDeclarationReadsItsOwnNameAndKind() throws {
        typealias O = JoinCommand.Options
        let inv = invocation(values: ["duration": ["1m", "90m"], "include": ["alice", "bob*"]], flags: ["record"])
        #expect(inv[O.record] && !inv[O.noMix])
        #expect(inv[O.duration] == "90m", "the last value given wins")
        #expect(inv[O.include] == ["alice", "bob*"] && inv[O.exclude].isEmpty)
        #expect(inv[O.output] == nil)
        #expect(try inv.duration(O.duration) == 5400)
    }

    /// A bad value is a usage error in the words the commands always used.
    @Test func typedReadsRefuseBadValuesNamingTheOption() {
        let inv = invocation(values: ["timeout": ["soon"], "tracks": ["0"]])
        #expect(throws: CommandFailure.self) { try inv.duration(PlayCommand.Options.timeout) }
        do {
            _ = try inv.duration(PlayCommand.Options.timeout)
        } catch let e as CommandFailure {
            #expect(e.code == .usage && e.description == "--timeout expects a duration like 30s, 10m or 1h30m, got 'soon'")
        } catch { Issue.record("unexpected \(error)") }
        do {
            _ = try inv.integer(MediaCommands.BenchOptions.tracks, in: 1...100)
            Issue.record("accepted 0 tracks")
        } catch let e as CommandFailure {
            #expect(e.code == .usage && e.description == "--tracks must be a whole number from 1 to 100 (got '0')")
        } catch { Issue.record("unexpected \(error)") }
    }

    /// Every option's help that says `(default: section.key, VALUE` says the table's value.
    @Test func helpStatesTheTablesDefaults() {
        var checked = 0
        func visit(_ c: CommandSpec) {
            for o in c.options + GlobalOptions.specs {
                for m in o.help.matches(of: /default: ([a-z_]+(?:\.[a-z_]+)?), ([^;)]+)/) {
                    let name = String(m.output.1)
                    let parts = name.split(separator: ".").map(String.init)
                    let (section, key) = parts.count == 2 ? (parts[0], parts[1]) : ("", parts[0])
                    guard let spec = SettingSpec.spec(section: section, key: key) else {
                        Issue.record("--\(o.name) names \(name), not a setting")
                        continue
                    }
                    // "off" and a path are words for a default the table writes as 0 or leaves to the system.
                    guard let value = spec.defaultValue, value != "0" else { continue }
                    #expect(String(m.output.2).hasPrefix(value), "--\(o.name): \(o.help)")
                    checked += 1
                }
            }
            c.subcommands.forEach(visit)
        }
        visit(BedrudBotCLI.root)
        #expect(checked >= 6, "alone_timeout, max_outage, align, log_level and serve's listen, rooms, shard")
    }
}

import Testing

@testable import BedrudBot

/// ``ArgumentParser`` against a small ``CommandSpec`` tree: pure, no process.
@Suite struct ArgumentParserTests {
    static let root = CommandSpec(
        "bedrud-bot", summary: "test tree",
        subcommands: [
            CommandSpec(
                "join", summary: "join",
                arguments: [ArgumentSpec("ROOM", help: "room"), ArgumentSpec("MORE", optional: true, variadic: true, help: "more rooms")],
                options: [
                    OptionSpec("record", short: "r", help: "record"),
                    OptionSpec("output", short: "o", value: "DIR", help: "folder"),
                    OptionSpec("include", value: "GLOB", repeatable: true, help: "who"),
                ],
                action: { _ in .success }),
            CommandSpec(
                "rooms", summary: "rooms",
                subcommands: [CommandSpec("list", summary: "list", options: [OptionSpec("json", help: "json")], action: { _ in .success })]),
            CommandSpec("say", summary: "say", arguments: [ArgumentSpec("ROOM", help: "room"), ArgumentSpec("TEXT", optional: true, help: "text")],
                        action: { _ in .success }),
        ])

    func parse(_ args: [String]) throws(UsageError) -> ParsedArguments { try ArgumentParser.parse(args, root: Self.root) }

    func error(_ args: [String]) -> UsageError? {
        do {
            _ = try parse(args)
            return nil
        } catch {
            return error
        }
    }

    @Test func flagsValuesAndPositionals() throws {
        let p = try parse(["join", "standup", "-r", "--output", "/srv/rec", "retro"])
        #expect(p == ParsedArguments(path: ["join"], values: ["output": ["/srv/rec"]], flags: ["record"], positionals: ["standup", "retro"]))
    }

    @Test func inlineValuesAndShortForms() throws {
        #expect(try parse(["join", "a", "--output=/x=y"]).value("output") == "/x=y")
        #expect(try parse(["join", "a", "-o/srv"]).value("output") == "/srv")
        #expect(try parse(["join", "a", "-ro", "/srv"]) == ParsedArguments(path: ["join"], values: ["output": ["/srv"]], flags: ["record"], positionals: ["a"]))
        #expect(try parse(["join", "a", "--output="]).value("output") == "")
    }

    @Test func aFlagTakesYesOrNoInline() throws {
        #expect(try parse(["join", "a", "--record=yes"]).flag("record"))
        #expect(try !parse(["join", "a", "-r", "--record=no"]).flag("record"))
        #expect(error(["join", "a", "--record=maybe"]) == UsageError(message: "option --record is a flag; it takes no value (got 'maybe')", path: ["join"]))
    }

    @Test func globalOptionsWorkBeforeAndAfterTheCommand() throws {
        #expect(try parse(["-i", "work", "join", "a"]).value("instance") == "work")
        #expect(try parse(["join", "a", "--instance", "work", "-v"]) == ParsedArguments(path: ["join"], values: ["instance": ["work"]], flags: ["verbose"], positionals: ["a"]))
    }

    @Test func repeatedOptions() throws {
        #expect(try parse(["join", "a", "--include", "x*", "--include", "y*"]).all("include") == ["x*", "y*"])
        #expect(error(["join", "a", "-o", "/a", "--output", "/b"]) == UsageError(message: "option --output given more than once", path: ["join"]))
        #expect(try parse(["join", "a", "-r", "-r"]).flags == ["record"])
    }

    @Test func unknownOptionsAndCommands() {
        #expect(error(["join", "a", "--recrod"]) == UsageError(message: "unknown option '--recrod'. Did you mean '--record'?", path: ["join"]))
        #expect(error(["join", "a", "--zzzzzzzz"]) == UsageError(message: "unknown option '--zzzzzzzz'.", path: ["join"]))
        #expect(error(["join", "a", "-x"]) == UsageError(message: "unknown option '-x'", path: ["join"]))
        #expect(error(["jion", "a"]) == UsageError(message: "unknown command 'jion'. Did you mean 'join'?", path: []))
        #expect(error(["rooms", "lst"]) == UsageError(message: "unknown command 'lst' for 'rooms'. Did you mean 'list'?", path: ["rooms"]))
        // Another command's option is unknown here.
        #expect(error(["rooms", "list", "--record"])?.message.hasPrefix("unknown option '--record'.") == true)
    }

    @Test func missingValuesAndArguments() {
        #expect(error(["join", "a", "--output"]) == UsageError(message: "option --output needs a value (DIR)", path: ["join"]))
        #expect(error(["join", "a", "-o"]) == UsageError(message: "option --output needs a value (DIR)", path: ["join"]))
        #expect(error(["join"]) == UsageError(message: "missing argument ROOM for 'join'", path: ["join"]))
        #expect(error(["say", "a", "hi", "there"]) == UsageError(message: "unexpected argument 'there' for 'say'", path: ["say"]))
        #expect(error(["rooms"]) == UsageError(message: "'rooms' needs a subcommand: list", path: ["rooms"]))
    }

    /// The next word is a value even when it looks like an option.
    @Test func aValueMayStartWithADash() throws {
        #expect(try parse(["join", "a", "--output", "-r"]) == ParsedArguments(path: ["join"], values: ["output": ["-r"]], positionals: ["a"]))
    }

    @Test func doubleDashEndsTheOptions() throws {
        #expect(try parse(["say", "a", "--", "--record"]) == ParsedArguments(path: ["say"], positionals: ["a", "--record"]))
        #expect(try parse(["say", "--", "-r", "-"]) == ParsedArguments(path: ["say"], positionals: ["-r", "-"]))
        #expect(try parse(["say", "a", "-"]).positionals == ["a", "-"])
    }

    /// `--help` stops the checks so help can be shown for an incomplete command.
    @Test func helpNeedsNoArguments() throws {
        #expect(try parse(["join", "--help"]) == ParsedArguments(path: ["join"], flags: ["help"]))
        #expect(try parse(["rooms", "-h"]).path == ["rooms"])
        #expect(try parse([]) == ParsedArguments())
    }

    @Test func commandAtAPath() {
        #expect(ArgumentParser.command(at: ["rooms", "list"], in: Self.root).name == "list")
        #expect(ArgumentParser.command(at: [], in: Self.root).name == "bedrud-bot")
    }
}

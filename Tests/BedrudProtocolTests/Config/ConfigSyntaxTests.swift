@testable import BedrudProtocol
import Testing
import TestSupport

@Suite struct ConfigSyntaxTests {
    func parse(_ text: String, env: [String: String] = [:]) throws(ConfigSyntax.Error) -> ConfigSyntax.Document {
        try ConfigSyntax.parse(text, file: "test.conf", environment: env)
    }

    @Test func sectionsKeysAndComments() throws {
        let doc = try parse("""
            # top comment
            default_instance = work   # trailing comment
            log-level=debug

            [network]
            connect_timeout = 10s
            [instance work]
            url = https://meet.example.com/path#frag
            email = "a@b.c" # quoted then comment
            note = 'literal ${NOT} $stuff'
            """)
        let e = doc.entries
        #expect(e.map(\.key) == ["default_instance", "log_level", "connect_timeout", "url", "email", "note"])
        #expect(e[0].value == "work" && e[0].section == "" && e[0].line == 2)
        #expect(e[2].section == "network" && e[2].sectionName == nil)
        #expect(e[3].section == "instance" && e[3].sectionName == "work" && e[3].value == "https://meet.example.com/path#frag")
        #expect(e[4].value == "a@b.c")
        #expect(e[5].value == "literal ${NOT} $stuff")
        #expect(doc.headers.map(\.line) == [5, 7])
    }

    @Test func environmentExpansion() throws {
        let doc = try parse("""
            a = ${HOME_DIR}/x
            b = "${HOME_DIR} \\$HOME"
            c = ${MISSING:-fallback}
            d = price $$5
            """, env: ["HOME_DIR": "/home/bot"])
        #expect(doc.entries.map(\.value) == ["/home/bot/x", "/home/bot $HOME", "fallback", "price $5"])
    }

    @Test func escapesInDoubleQuotes() throws {
        let doc = try parse(#"k = "tab\there \"q\" back\\slash""#)
        #expect(doc.entries[0].value == "tab\there \"q\" back\\slash")
    }

    static let badFiles: [(String, Int, String)] = [
        ("a = 1\nthis is not a setting\n", 2, "expected 'key = value'"),
        ("a = \"unterminated\n", 1, "unterminated quoted value"),
        ("[instance]\nurl = x\n", 1, "needs a name"),
        ("[]\n", 1, "empty section header"),
        ("[network\n", 1, "closing ']'"),
        ("[network extra]\n", 1, "does not take a name"),
        ("= value\n", 1, "missing key"),
        ("x = ${UNSET_VAR_XYZ}\n", 1, "UNSET_VAR_XYZ is not set"),
        ("x = \"a\" b\n", 1, "after closing quote"),
        ("x = \"bad \\q escape\"\n", 1, "unknown escape"),
        ("[instance bad/name]\n", 1, "invalid instance name"),
    ]

    @Test(arguments: badFiles)
    func errorsNameTheLine(text: String, line: Int, message: String) {
        do {
            _ = try parse(text)
            Issue.record("no error for \(text.debugDescription)")
        } catch {
            #expect(error.line == line)
            #expect(error.description.hasPrefix("test.conf:\(line): "))
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    /// "\r\n" is one Character: a CRLF file split on Character "\n" was one long line,
    /// every setting silently ignored.
    @Test func crlfLinesAreReadLikeLFLines() throws {
        let doc = try parse("# my bot\r\nlog_level = bogus\r\n[instance p]\r\nurl = http://127.0.0.1:9\r\n")
        #expect(doc.entries.map(\.key) == ["log_level", "url"])
        #expect(doc.entries.map(\.value) == ["bogus", "http://127.0.0.1:9"])
        #expect(doc.entries.map(\.line) == [2, 4])
        #expect(doc.headers == [ConfigSyntax.Header(section: "instance", name: "p", line: 3)])
        // Mixed endings are fine too, and a quoted value ends at its quote.
        let mixed = try parse("a = \"x\"\r\nb = y\n")
        #expect(mixed.entries.map(\.value) == ["x", "y"])
    }

    @Test func aLoneCarriageReturnIsAnErrorAtItsLine() {
        #expect(throws: ConfigSyntax.Error(file: "test.conf", line: 2, message: "a carriage return (CR) inside the line; lines must end with LF or CRLF (an old Mac file? convert it)")) {
            _ = try parse("a = 1\nb = 2\rc = 3\n")
        }
        #expect(throws: ConfigSyntax.Error.self) { _ = try parse("# old Mac\rlog_level = info\r") }
    }

    @Test func invalidUTF8NamesLineAndColumn() throws {
        let bytes = Array("a = 1\n# comment é\n".utf8) + Array("x = ab".utf8) + [0xFF] + Array("\n".utf8)
        #expect(throws: ConfigSyntax.Error(file: "f", line: 3, message: "column 7: byte 0xFF is not UTF-8 text; save the file as UTF-8")) {
            _ = try ConfigSyntax.decode(bytes, file: "f")
        }
        // In a comment, after a multi-byte letter: columns count characters.
        let comment = Array("# é".utf8) + [0xC3, 0x28]
        #expect(throws: ConfigSyntax.Error(file: "f", line: 1, message: "column 4: byte 0xC3 is not UTF-8 text; save the file as UTF-8")) {
            _ = try ConfigSyntax.decode(comment, file: "f")
        }
        // Overlong forms, surrogates and truncated sequences are not UTF-8 either.
        for bad: [UInt8] in [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            #expect(throws: ConfigSyntax.Error.self) { _ = try ConfigSyntax.decode([0x61] + bad, file: "f") }
        }
        #expect(try ConfigSyntax.decode([0xEF, 0xBB, 0xBF] + Array("a = 1\n".utf8), file: "f") == "a = 1\n")
    }

    @Test func echoedNamesAreCut() {
        let long = String(repeating: "s", count: 100_000)
        do {
            _ = try parse("[\(long) x]\n")
            Issue.record("no error")
        } catch {
            #expect(error.description.utf8.count < 300, "\(error.description.utf8.count) bytes")
        }
    }

    @Test func typedValues() {
        #expect(ConfigValues.duration("90s") == 90)
        #expect(ConfigValues.duration("30m") == 1800)
        #expect(ConfigValues.duration("2h") == 7200)
        #expect(ConfigValues.duration("1h30m") == 5400)
        #expect(ConfigValues.duration("500ms") == 0.5)
        #expect(ConfigValues.duration("45") == 45)
        #expect(ConfigValues.duration("10 minutes") == nil)
        #expect(ConfigValues.duration("-5s") == nil)
        #expect(ConfigValues.duration("5x") == nil)
        #expect(ConfigValues.duration("") == nil)
        #expect(ConfigValues.size("16MiB") == 16 * 1_048_576)
        #expect(ConfigValues.size("64k") == 64_000)
        #expect(ConfigValues.size("512") == 512)
        #expect(ConfigValues.size("lots") == nil)
        #expect(ConfigValues.bool("On") == true && ConfigValues.bool("no") == false && ConfigValues.bool("maybe") == nil)
        #expect(ConfigValues.list(" a, b ,,c ") == ["a", "b", "c"])
        #expect(ConfigValues.bitrate("32k") == 32000 && ConfigValues.bitrate("32kbps") == 32000)
        #expect(ConfigValues.formatDuration(5400) == "1h30m" && ConfigValues.formatDuration(0.25) == "250ms")
    }

    @Test func suggestions() {
        #expect(Suggest.closest(to: "conect_timeout", in: ["connect_timeout", "read_timeout"]) == "connect_timeout")
        #expect(Suggest.closest(to: "pasword_file", in: ["password_file", "email"]) == "password_file")
        #expect(Suggest.closest(to: "zzzzzz", in: ["connect_timeout"]) == nil)
    }

    /// Seeded (``FuzzSeeds``: replay one with `BEDRUD_FUZZ_SEED`).
    @Test(arguments: FuzzSeeds.all) func randomTextNeverCrashes(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let alphabet = Array("ab=[]#\"'\\${}:- \n\tinstance")
        for _ in 0..<3000 {
            let text = String((0..<Int.random(in: 0..<80, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            _ = try? ConfigSyntax.parse(text, file: "r", environment: ["a": "1"])
        }
    }
}

@Suite struct ConfigEditorTests {
    let original = """
        # my settings
        default_instance = old

        [network]
        connect_timeout = 5s   # keep me

        # the work server
        [instance work]
        url = https://work.example
        email = bot@work.example

        # home
        [instance home]
        url = https://home.example
        """

    @Test func setReplacesInPlace() {
        var ed = ConfigEditor(text: original)
        ed.set("default_instance", "work")
        #expect(ed.text.contains("default_instance = work\n"))
        #expect(ed.text.contains("# my settings\n"))
        #expect(ed.text.contains("connect_timeout = 5s   # keep me"))
    }

    @Test func setAddsToExistingSection() throws {
        var ed = ConfigEditor(text: original)
        ed.set("ca_file", "/etc/ca.pem", section: "instance", name: "work")
        let doc = try ConfigSyntax.parse(ed.text, file: "x", environment: [:])
        let work = doc.entries.filter { $0.sectionName == "work" }.map(\.key)
        #expect(work == ["url", "email", "ca_file"])
    }

    @Test func removeSectionKeepsNeighboursAndTheirComments() throws {
        var ed = ConfigEditor(text: original)
        let removed = ed.removeSection("instance", name: "work")
        #expect(removed)
        #expect(!ed.text.contains("work.example"))
        #expect(ed.text.contains("# home\n[instance home]"))
        #expect(!ed.text.contains("# the work server"))  // its own comment goes with it
        #expect(ed.text.contains("connect_timeout = 5s   # keep me\n\n# home"))
        let again = ed.removeSection("instance", name: "work")
        #expect(!again)
        _ = try ConfigSyntax.parse(ed.text, file: "x", environment: [:])
    }

    @Test func appendAndQuote() throws {
        var ed = ConfigEditor(text: "")
        ed.appendSection("instance", name: "n", settings: [("url", "http://x"), ("display_name", "My # Server")])
        ed.set("default_instance", "n")
        let doc = try ConfigSyntax.parse(ed.text, file: "x", environment: [:])
        #expect(doc.entries.first { $0.key == "display_name" }?.value == "My # Server")
        #expect(doc.entries.first?.key == "default_instance")
    }
}

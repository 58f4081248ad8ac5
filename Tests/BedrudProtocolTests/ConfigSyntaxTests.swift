import BedrudProtocol
import Testing

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

    @Test func randomTextNeverCrashes() {
        var rng = SystemRandomNumberGenerator()
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

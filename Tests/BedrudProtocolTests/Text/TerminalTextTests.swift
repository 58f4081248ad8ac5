import BedrudProtocol
import Testing
import TestSupport

/// Text from other people, made safe for a terminal: hostile names and chat.
@Suite struct TerminalTextTests {
    static let hostileName = "Mal\u{1B}]0;PWNED\u{07}\u{1B}[2J"

    @Test func escapeSequencesBecomeVisible() {
        #expect(TerminalText.sanitize(Self.hostileName) == "Mal\\x1b]0;PWNED\\x07\\x1b[2J")
        #expect(TerminalText.sanitize("a\u{0}b\u{7F}c") == "a\\x00b\\x7fc")
        #expect(TerminalText.sanitize("line\nforged\r\t") == "line\\nforged\\r\\t")
        // The 8-bit CSI and other C1 controls, and bidi overrides and isolates.
        #expect(TerminalText.sanitize("x\u{9B}2J") == "x\\u{9b}2J")
        #expect(TerminalText.sanitize("\u{202E}txt.exe\u{2066}\u{2069}") == "\\u{202e}txt.exe\\u{2066}\\u{2069}")
        #expect(TerminalText.sanitize("a\u{2028}b") == "a\\u{2028}b")
    }

    @Test func lineBreaksKeptOnlyWhenAsked() {
        #expect(TerminalText.sanitize("a\nb\tc\rd", keepingLineBreaks: true) == "a\nb\tc\\rd")
    }

    @Test func everyScriptIsKept() {
        // Persian with ZWNJ (U+200C) and an RLM (U+200F), Arabic, Cyrillic, Chinese, emoji, combining marks.
        for s in ["می‌خواهم", "\u{200F}سلام", "مرحبا", "Анна Петрова", "王小明", "Zoë 👋", "e\u{301}"] {
            #expect(TerminalText.sanitize(s) == s)
            #expect(TerminalText.isClean(s))
        }
    }

    @Test func noUnsafeScalarSurvives() {
        var g = SeededGenerator(seed: 0x5EED)
        for _ in 0..<2000 {
            let scalars = (0..<Int(g.next() % 24)).compactMap { _ in Unicode.Scalar(UInt32(g.next() % 0x2100)) }
            var s = String.UnicodeScalarView()
            s.append(contentsOf: scalars)
            let out = TerminalText.sanitize(String(s))
            #expect(TerminalText.isClean(out), "seed 0x5EED: \(scalars.map(\.value))")
            #expect(!out.utf8.contains(0x1B))
        }
    }

    @Test func quotedValuesAreCappedAndSanitised() {
        let huge = "https://" + String(repeating: "a", count: 1_000_000)
        let q = TerminalText.quoted(huge)
        #expect(q.count < 120)
        #expect(q.hasSuffix("… (1000008 bytes in all)"))
        #expect(TerminalText.quoted("ok") == "ok")
        #expect(TerminalText.quoted("\u{1B}[2J") == "\\x1b[2J")
    }

    @Test func jsonKeepsItsMeaning() throws {
        let json = "{\"name\":\"a\u{202E}b\u{9B}c\"}\n{\"n\":1}"
        let safe = TerminalText.escapingJSON(json)
        #expect(safe == "{\"name\":\"a\\u202eb\\u009bc\"}\n{\"n\":1}")
        #expect(TerminalText.isClean(safe, keepingLineBreaks: true))
    }
}

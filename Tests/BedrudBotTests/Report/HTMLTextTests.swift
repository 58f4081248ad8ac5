import Testing
@testable import BedrudBot

/// The one escaper of markup: report.html's text and smoke's JUnit XML.
@Suite struct HTMLTextTests {
    @Test func markupCharactersBecomeEntitiesKnownToHTMLAndXML() {
        #expect(HTMLText.escape(#"<a href="x">Tom & Jerry's</a>"#) == "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;")
    }

    @Test func controlsAndNoncharactersBecomeTheReplacementCharacter() {
        // Tab and line feed stay; a carriage return, ESC, a C1 control, U+FFFE and U+FFFF do not.
        #expect(HTMLText.escape("a\tb\nc\r\nd\u{1B}e\u{85}f\u{FFFE}g\u{FFFF}h") == "a\tb\nc\u{FFFD}\nd\u{FFFD}e\u{FFFD}f\u{FFFD}g\u{FFFD}h")
        #expect(HTMLText.escape("Grüße 👩‍👩‍👧 \u{202E}") == "Grüße 👩‍👩‍👧 \u{202E}", "other text is left as it is (bidi is isolated by remote(_:))")
    }

    @Test func smokesJUnitXMLUsesTheSameEscaper() {
        let text = "it's <late> & \"lost\"\r\u{0}"
        #expect(SmokeReport.xml(text) == HTMLText.escape(text))
    }
}

@testable import BedrudBot
import BedrudProtocol
import Foundation
import Testing

/// Texts from outside are cut when an event is built: names and the like at 16 KiB, an
/// event's message at 8 MiB, at a scalar boundary, ended with `…`; and they read and
/// write as plain JSON strings.
@Suite struct BoundedTextTests {
    @Test func aTextUpToTheLimitIsKeptWhole() {
        let exact = String(repeating: "a", count: BoundedText.limitBytes)
        #expect(BoundedText(exact).text == exact)
        #expect(BoundedText("").isEmpty)
        let message = String(repeating: "m", count: BoundedMessage.limitBytes)
        #expect(BoundedMessage(message).text == message)
    }

    @Test func aLongerTextIsCutAtAScalarBoundaryAndEndedWithAnEllipsis() {
        // "é" is two bytes: the cut never splits one, and the result fits the limit with "…".
        let long = String(repeating: "é", count: BoundedText.limitBytes)
        let cut = BoundedText(long).text
        #expect(cut.utf8.count <= BoundedText.limitBytes)
        #expect(cut.utf8.count > BoundedText.limitBytes - 5)
        #expect(cut.hasSuffix("é…") && cut.dropLast().allSatisfy { $0 == "é" })
        let tooLong = String(repeating: "m", count: BoundedMessage.limitBytes + 10)
        let message = BoundedMessage(tooLong).text
        #expect(message.utf8.count == BoundedMessage.limitBytes && message.hasSuffix("m…"))
        #expect(BoundedText(tooLong).text.utf8.count == BoundedText.limitBytes)
    }

    @Test func itIsAPlainStringInJSONAndIsCutWhenReadBack() throws {
        #expect(try JSONWriter.string(["k": BoundedText("a/b")]) == #"{"k":"a/b"}"#)
        let long = String(repeating: "x", count: BoundedText.limitBytes + 1)
        let read = try JSONDecoder().decode([BoundedText].self, from: Data(#"["\#(long)", "short"]"#.utf8))
        #expect(read == [BoundedText(long), "short"])
        #expect(read[0].text.hasSuffix("x…"))
        #expect("\(read[1])" == "short")
    }
}

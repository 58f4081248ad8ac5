@testable import BedrudBot
import Foundation
import Testing

/// `RecordingFileName`: file names keep every script, never start with '-', and replace only
/// what file systems forbid.
@Suite struct RecordingFileNameTests {
    @Test(arguments: [
        ("-rf", "_rf"),
        ("--help", "_-help"),
        ("علی رضایی", "علی رضایی"),  // Persian
        ("می‌خواهم", "می‌خواهم"),  // Persian with a zero-width non-joiner
        ("محمد", "محمد"),  // Arabic
        ("Анна Петрова", "Анна Петрова"),
        ("王小明", "王小明"),
        ("Zoë O'Brien (guest)", "Zoë O'Brien (guest)"),
        ("a/b\\c:d*e?f\"g<h>i|j", "a_b_c_d_e_f_g_h_i_j"),
        ("../../etc/passwd", "_.._etc_passwd"),
        (".hidden.", "hidden"),
        ("  ", "participant"),
        ("", "participant"),
        ("Mal\u{1B}]0;PWNED\u{07}", "Mal_]0;PWNED_"),
        ("\u{202E}gnp.exe", "_gnp.exe"),
    ])
    func names(_ input: String, _ expected: String) {
        #expect(RecordingFileName.make(input) == expected)
    }

    @Test func normalisedToNFC() {
        // "é" typed as e + combining acute (macOS, some keyboards) and as one scalar are one file.
        let decomposed = "Rene\u{301}e", composed = "Ren\u{E9}e"
        #expect(RecordingFileName.make(decomposed).unicodeScalars.elementsEqual(composed.unicodeScalars))
    }

    @Test func longNamesFitAFileSystem() {
        let name = String(repeating: "ک", count: 300)  // 2 bytes each in UTF-8
        let f = RecordingFileName.make(name)
        #expect(f.utf8.count <= RecordingFileName.maxBytes)
        #expect(f.utf8.count >= RecordingFileName.maxBytes - 1)
        #expect(f.allSatisfy { $0 == "ک" })
    }
}

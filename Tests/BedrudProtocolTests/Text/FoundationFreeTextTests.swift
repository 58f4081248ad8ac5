import BedrudProtocol
import Foundation
import Testing
import TestSupport

/// The helpers that replace Foundation in the bot's targets (docs/BENCHMARKS.md,
/// "Baseline memory") give the same text as the Foundation calls they replace; the tests
/// may import Foundation to compare.
@Suite struct FoundationFreeTests {
    private func foundation(_ o: Any, slashes: Bool = true) throws -> String {
        let opts: JSONSerialization.WritingOptions = slashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try JSONSerialization.data(withJSONObject: o, options: opts), as: UTF8.self)
    }

    @Test func jsonWriterMatchesJSONSerialization() throws {
        let doubles: [Double] = [0, -0.0, 1, 3, 0.1, 1.5, 2.25, 1e-7, 1e21, 1e15, 1e16, 123_456_789.123, -4.5,
                                 1.0 / 3, 12.7, 1e300, 99.95, 1_234_567, 0.000123, 20.5, 1e-5]
        let text = "a/b\"c\\d\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}\u{80}\u{9f}é\u{202e}😀 \u{2028}"
        let doc: [String: Any] = [
            "doubles": doubles, "floats": [Float(0.1), Float(12.7), Float(3), Float(-0.5)],
            "ints": [Int64.max, Int64.min, 0, -1] as [Any],
            "widths": [UInt32.max, UInt64.max, Int32.min, UInt8(3), Int16(-3)] as [Any],
            "mixed": [true, false, "x", [:] as [String: Any], [] as [Any], ["z": 1, "y": [1, 2]] as [String: Any]] as [Any],
            "text": text, "nested": ["a": ["b": ["c": text]]],
        ]
        #expect(JSONWriter.serialize(doc) == (try foundation(doc)))
        #expect(JSONWriter.serialize(doc, escapingSlashes: false) == (try foundation(doc, slashes: false)))
        // NSNull and nil optionals are null, as is JSONNull for JSONWriter.
        let none: String? = nil, some: Int? = 5
        #expect(JSONWriter.serialize(["n": JSONNull(), "o": none as Any, "s": some as Any]) == (try foundation(["n": NSNull(), "o": NSNull(), "s": 5])))
        #expect(JSONWriter.serialize(["x": Double.nan]) == nil)
        #expect(JSONWriter.serialize(["x": Date()]) == nil)
    }

    /// `.sortedKeys` orders keys by ICU collation; JSONWriter copies that for ASCII keys.
    @Test func keyOrderMatchesJSONSerialization() throws {
        var keys = (32 ... 126).map { String(UnicodeScalar(UInt8($0))) }
        keys += ["a1b", "a01b", "a1", "a01", "a001", "a10", "ab1", "a_1", "a 1", "A1", "a1B", "a1b2", "a1b10", "x", "X_",
                 "x_", "xA", "xa", "aA", "Aa", "AA", "aa", "a1a", "a01a", "", "a_b", "ab", "aB", "a-b", "a.b", "a_", "a0", "a09",
                 "latencyMs", "latencyMaxMs", "latenciesMs", "exit_code", "exitCode", "room_sid", "room", "roomFile",
                 "track_sid", "trackSid", "t9", "t10", "start_ms", "start_offset_ms", "startMs", "0", "00", "007", "7"]
        var rng = SeededGenerator(seed: 12)
        let alphabet = Array("aAbB_-.0 19zZ")
        for _ in 0 ..< 300 {
            keys.append(String((0 ..< Int.random(in: 1 ... 5, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }))
        }
        var doc: [String: Any] = [:]
        for k in keys { doc[k] = 1 }
        let mine = (JSONWriter.serialize(doc) ?? "").split(separator: ":1,")
        let theirs = try foundation(doc).split(separator: ":1,")
        let first = zip(mine, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(first == nil && mine.count == theirs.count,
                "first difference: \(first.map { "\(mine[max(0, $0 - 1) ... $0]) vs \(theirs[max(0, $0 - 1) ... $0])" } ?? "count")")
    }

    @Test func cFormatMatchesStringFormat() {
        #expect(String(cFormat: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int32(2026), Int32(1), Int32(2), Int32(3), Int32(4), Int32(5), 6)
            == String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int32(2026), Int32(1), Int32(2), Int32(3), Int32(4), Int32(5), 6))
        for d in [0.0, 0.05, 0.15, 1.25, 2.675, 99.95, 1234.5678, -3.14159, 1e9] {
            for f in ["%.1f GiB", "%.0f KiB", "%5.2fs", "%.3f", "%6.1f pkt/s", "%.2f", "loss %.1f%%"] {
                #expect(String(cFormat: f, d) == String(format: f, d), "\(f) \(d)")
            }
        }
        for i in [0, 7, 42, 999, 1000, 123_456, -5] {
            for f in ["%03d", "%02d", "%6d pkts", "%4d", "%d:%02d"] {
                #expect(String(cFormat: f, i, i) == String(format: f, i, i), "\(f) \(i)")
            }
        }
        // Longer than the first buffer.
        #expect(String(cFormat: "%0300d!", 7) == String(repeating: "0", count: 299) + "7!")
    }

    @Test func paddingAndReplacing() {
        #expect("abc".padded(toLength: 5) == "abc".padding(toLength: 5, withPad: " ", startingAt: 0))
        #expect("abcdef".padded(toLength: 4) == "abcdef".padding(toLength: 4, withPad: " ", startingAt: 0))
        for (s, t, r) in [("a_b_c", "_", "-"), ("x<y>&z", "<", "&lt;"), ("{room}/{date}/{room}", "{room}", "R"), ("aaa", "aa", "b"), ("", "a", "b")] {
            #expect(s.replacingScalars(t, with: r) == s.replacingOccurrences(of: t, with: r), "\(s)")
        }
        // Unlike Foundation (which matched whole characters here), a combining mark does not
        // hide a ">" from the WebVTT escaping: a cue parser reads code points.
        #expect(">\u{301}".replacingScalars(">", with: "&gt;") == "&gt;\u{301}")
    }
}

@Suite struct PathTextTests {
    // No doubled slashes: the bot never builds them. Not "a" or "a/" either: NSString's
    // deletingLastPathComponent traps on a path without a slash before its end on this
    // toolchain (swift-corelibs-foundation 6.3.1); those are checked by value below.
    static let paths = ["", "/", "/a", "/a/", "a/b", "/a/b", "/a/b/", "./a", "../a/b.opus",
                        "/tmp/out/room-2026-01-02/alice.opus", "~/x", "/a/./b", "a/b/c/", "é/ü.txt", "a /b c"]

    @Test func matchesNSString() {
        for p in Self.paths {
            #expect(PathText.lastComponent(p) == (p as NSString).lastPathComponent, "last of '\(p)'")
            #expect(PathText.deletingLastComponent(p) == (p as NSString).deletingLastPathComponent, "parent of '\(p)'")
            for c in ["x", "x/y", "", "alice.opus", "room/2026-01-02/120000"] {
                #expect(PathText.appending(c, to: p) == (p as NSString).appendingPathComponent(c), "'\(p)' + '\(c)'")
            }
        }
        #expect(PathText.lastComponent("a") == "a" && PathText.deletingLastComponent("a") == "")
        #expect(PathText.lastComponent("a/") == "a" && PathText.deletingLastComponent("a/") == "")
        #expect(PathText.appending("x", to: "a") == "a/x" && PathText.appending("x", to: "a/") == "a/x")
    }
}

@Suite struct TrimmingTests {
    @Test func matchesFoundation() {
        for s in ["", " ", "a", "  a b  ", "\t\na\r\n", "\u{a0}x\u{2003}", "\u{85}y\u{2028}", " \u{301}a ", "\r\n", "a\u{b}", "z\u{c} "] {
            #expect(s.trimmingWhitespaceScalars() == s.trimmingCharacters(in: .whitespacesAndNewlines), "\(s.debugDescription)")
            #expect(s.trimmingWhitespaceScalars(newlines: false) == s.trimmingCharacters(in: .whitespaces), "\(s.debugDescription)")
            #expect(s.dropFirst(0).trimmingWhitespaceScalars() == s.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}

import BedrudProtocol
import Foundation
import Testing
import TestSupport

/// The helpers that replace Foundation in the bot's targets (docs/BENCHMARKS.md,
/// "Baseline memory") give the same text as the Foundation calls they replace; the tests
/// may import Foundation to compare.
@Suite struct FoundationFreeTests {
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

    @Test func osThreadRunsNamedAndLockGuards() async {
        let lock = PosixLock()
        final class Box: @unchecked Sendable { var name = ""; var n = 0 }
        let box = Box()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            OSThread.start(name: "bedrud.test.thread.long", stackSize: 1 << 20) {
                let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                lock.withLock {
                    box.name = comm.trimmingCharacters(in: .newlines)
                    box.n += 1
                }
                c.resume()
            }
        }
        #expect(lock.withLock { box.name } == "bedrud.test.thr")
        #expect(lock.withLock { box.n } == 1)
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

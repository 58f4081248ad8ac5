import Foundation
import Testing
import TestSupport

/// The one way tests run programs: nothing it starts outlives `stop()`.
@Suite struct ChildProcessTests {
    static let sh = URL(fileURLWithPath: "/bin/sh")

    /// Whether `pid` is alive (and not a zombie).
    static func alive(_ pid: String) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    @Test func stopKillsAChildThatIgnoresSIGTERMAndWhatItStarted() async throws {
        // The child ignores TERM (as openssl s_server did) and leaves a grandchild in its group.
        let p = try ChildProcess(Self.sh, ["-c", "trap '' TERM; sleep 300 & echo $!; echo ready; wait"])
        try await p.line(timeout: 20, "ready") { $0 == "ready" }
        let grandchild = try #require(p.lines().first)
        #expect(Self.alive(grandchild))
        let start = Date()
        #expect(p.stop(grace: 0.5) == .signalled(SIGKILL))
        #expect(Date().timeIntervalSince(start) < 10)
        try await waitUntil("the grandchild is gone", timeout: 10) { !Self.alive(grandchild) }
        #expect(p.stop() == .signalled(SIGKILL), "idempotent")
    }

    @Test func exitCodesOutputAndDeadlines() async throws {
        let r = try Subprocess.run(Self.sh, ["-c", "echo out; echo err >&2; exit 3"])
        #expect(r.exitCode == 3 && r.stdout == "out\n" && r.stderr == "err\n" && !r.timedOut)
        let slow = try Subprocess.run(Self.sh, ["-c", "sleep 30"], timeout: 0.5)
        #expect(slow.timedOut)
        let echo = try Subprocess.run(URL(fileURLWithPath: "/bin/cat"), [], stdin: "piped in")
        #expect(echo.stdout == "piped in")
        let p = try ChildProcess(Self.sh, ["-c", "echo one; exit 0"])
        #expect(throws: TestSupportError.self) { try p.waitForLine(timeout: 5, "two") { $0 == "two" } }
        #expect(p.waitForExit(timeout: 10) == .exited(0))
    }

    @Test func deinitStopsTheChild() async throws {
        var pid = ""
        do {
            let p = try ChildProcess(Self.sh, ["-c", "echo $$; exec sleep 300"])
            pid = try await p.line(timeout: 20, "its pid") { !$0.isEmpty }
            #expect(Self.alive(pid))
        }
        try await waitUntil("the released child is gone", timeout: 10) { !Self.alive(pid) }
    }
}

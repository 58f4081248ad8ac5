#if canImport(Glibc)
import Glibc
#endif
import BedrudRuntime
import Dispatch
import FoundationEssentials
import BedrudProtocol

/// `on_finish`: a command run once the session folder is complete.
///
/// The command is a shell command line (`/bin/sh -c`), with the session folder appended
/// as its last argument and in `BEDRUD_BOT_SESSION_DIR`, and the session's exit code in
/// `BEDRUD_BOT_EXIT_CODE`. It runs in a process group of its own, with default signal
/// dispositions and an empty signal mask (the bot ignores SIGINT/SIGTERM while it
/// finishes; the hook must not inherit that), stdin from /dev/null and the bot's stdout
/// and stderr. After `timeout` seconds the group gets SIGTERM, then SIGKILL 5 s later,
/// and is reaped: nothing it started outlives the bot's wait.
enum FinishHook {
    struct Result: Equatable {
        var exitCode: Int32?
        var signal: Int32?
        var timedOut: Bool
        var durationMs: Int64
        /// Set when the command could not be started at all.
        var spawnError: String?
        var succeeded: Bool { exitCode == 0 && !timedOut }
    }

    static func run(_ command: String, folder: String, exitCode: Int32, timeout: Double, environment: [String: String]) async -> Result {
        await withCheckedContinuation { (k: CheckedContinuation<Result, Never>) in
            // Blocking waits, kept off the cooperative pool.
            OSThread.start {
                k.resume(returning: runBlocking(command, folder: folder, exitCode: exitCode, timeout: timeout, environment: environment))
            }
        }
    }

    static func runBlocking(_ command: String, folder: String, exitCode: Int32, timeout: Double, environment: [String: String]) -> Result {
        let start = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> Int64 { Int64((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000) }
        var env = environment
        env["BEDRUD_BOT_SESSION_DIR"] = folder
        env["BEDRUD_BOT_EXIT_CODE"] = String(exitCode)
        let args = ["/bin/sh", "-c", command + " \"$1\"", "bedrud-bot-on-finish", folder]
        let envStrings = env.map { "\($0.key)=\($0.value)" }

        let pid: pid_t
        switch ChildSpawn.start("/bin/sh", args, environment: envStrings, ownGroup: true) {
        case .success(let p): pid = p
        case .failure(let e):
            return Result(exitCode: nil, signal: nil, timedOut: false, durationMs: elapsed(), spawnError: e.description)
        }

        let done = DispatchSemaphore(value: 0)
        let status = StatusBox()
        let child = pid
        OSThread.start {
            var s: Int32 = 0
            while waitpid(child, &s, 0) < 0 && errno == EINTR {}
            status.value = s
            done.signal()
        }
        var timedOut = false
        if done.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            kill(-pid, SIGTERM)
            if done.wait(timeout: .now() + 5) == .timedOut {
                kill(-pid, SIGKILL)
                done.wait()
            }
        }
        // Whatever the command left running in its group goes with it.
        kill(-pid, SIGKILL)
        let s = status.value
        let exited = (s & 0x7f) == 0
        return Result(exitCode: exited ? (s >> 8) & 0xff : nil, signal: exited ? nil : s & 0x7f, timedOut: timedOut,
                      durationMs: elapsed(), spawnError: nil)
    }
}

/// The wait thread's result; written before the semaphore is signalled, read after.
private final class StatusBox: @unchecked Sendable {
    // @unchecked: one write, then DispatchSemaphore's happens-before, then reads.
    var value: Int32 = 0
}

import Glibc

/// Runs a helper program (espeak-ng) and collects what it writes to stdout: posix_spawn
/// with the bot's environment, stdin and stderr on /dev/null, default signal dispositions
/// and an empty signal mask (the bot blocks some signals for its own watcher). It replaces
/// Foundation's `Process` and `Pipe`, which would load libFoundation (see `OSThread`).
enum ChildOutput {
    struct Result {
        /// The exit code, or the signal number if a signal ended it (as Foundation's
        /// `terminationStatus` was).
        let status: Int32
        let stdout: [UInt8]
    }

    /// Blocks until the program has exited.
    /// - Throws: ``CommandFailure`` when it cannot be started.
    static func run(_ path: String, _ arguments: [String]) throws -> Result {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw CommandFailure(.failure, "cannot start \(path): \(String(cString: strerror(errno)))")
        }
        // Close-on-exec, so a helper another thread starts meanwhile does not hold the pipe open.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        var pid: pid_t = 0
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, environ)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw CommandFailure(.failure, "cannot start \(path): \(String(cString: strerror(rc)))")
        }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = read(fds[0], &chunk, chunk.count)
            if n > 0 {
                out += chunk[0 ..< n]
            } else if n == 0 || errno != EINTR {
                break
            }
        }
        close(fds[0])
        var s: Int32 = 0
        while waitpid(pid, &s, 0) < 0 && errno == EINTR {}
        let exited = (s & 0x7f) == 0
        return Result(status: exited ? (s >> 8) & 0xff : s & 0x7f, stdout: out)
    }
}

import Glibc

/// Runs a helper program (espeak-ng) and collects what it writes to stdout: started by
/// ``ChildSpawn`` with the bot's environment, and stderr on /dev/null. It replaces
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
        let started = ChildSpawn.start(path, [path] + arguments) { actions in
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        close(fds[1])
        let pid: pid_t
        switch started {
        case .success(let p): pid = p
        case .failure(let e):
            close(fds[0])
            throw CommandFailure(.failure, "cannot start \(path): \(e.description)")
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

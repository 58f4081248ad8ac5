import Glibc

/// Starts a helper program the way every child of the bot is started: posix_spawn, stdin
/// on /dev/null, default signal dispositions and an empty signal mask (the bot blocks some
/// signals for its own watcher, and a child must not inherit that). Used by ``ChildOutput``
/// (espeak-ng) and ``FinishHook`` (`on_finish`, in a process group of its own).
enum ChildSpawn {
    /// - Parameters:
    ///   - environment: `KEY=value` strings; nil passes the bot's own environment.
    ///   - ownGroup: put the child in a new process group (its pid), so it can be stopped
    ///     with everything it started.
    ///   - files: further file actions (after stdin is opened on /dev/null).
    /// - Returns: the child's pid, or the errno posix_spawn gave.
    static func start(_ path: String, _ argv: [String], environment: [String]? = nil, ownGroup: Bool = false,
                      files: (inout posix_spawn_file_actions_t) -> Void = { _ in }) -> Result<pid_t, SpawnError> {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setsigmask(&attr, &empty)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if ownGroup {
            posix_spawnattr_setpgroup(&attr, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attr, Int16(flags))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        files(&actions)

        var pid: pid_t = 0
        let cArgv = argv.map { strdup($0) } + [nil]
        defer { cArgv.forEach { free($0) } }
        let rc: Int32
        if let environment {
            let cEnv = environment.map { strdup($0) } + [nil]
            defer { cEnv.forEach { free($0) } }
            rc = posix_spawn(&pid, path, &actions, &attr, cArgv, cEnv)
        } else {
            rc = posix_spawn(&pid, path, &actions, &attr, cArgv, environ)
        }
        return rc == 0 ? .success(pid) : .failure(SpawnError(errno: rc))
    }

    struct SpawnError: Error {
        let errno: Int32
        var description: String { String(cString: strerror(errno)) }
    }
}

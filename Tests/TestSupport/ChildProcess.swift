import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One child process of a test, owned for its whole life: started in a process group
/// of its own, its stdout and stderr captured, lines waited for with a deadline, and
/// stopped with SIGTERM to the group, a bounded wait, then SIGKILL and reaping.
///
/// Every test that starts a program goes through this class (directly, or through
/// `Subprocess`, `DevServer`, `PythonServer`, `OpenSSLServer`), so no child outlives
/// its test: `stop()` is idempotent and also runs in `deinit`.
///
/// The child gets default signal dispositions and an empty signal mask (whatever the
/// test runner ignores or blocks is not inherited), and no file descriptors but 0, 1
/// and 2. Threads: one blocks in `waitid` for the exit, one blocks in `poll` on the
/// output pipes; neither polls on a timer, and neither keeps the object alive.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: all mutable state lives in `State`, guarded by its condition lock.

    /// What the child reads on stdin.
    public enum Input: Sendable {
        /// /dev/null.
        case null
        /// A pipe the test writes to with `write(_:)` and closes with `closeInput()`.
        case pipe
    }

    /// Which captured stream.
    public enum Stream: Sendable, CustomStringConvertible {
        case stdout, stderr
        public var description: String { self == .stdout ? "stdout" : "stderr" }
    }

    /// How the child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        /// The exit status, or the signal number (what Foundation's `terminationStatus` gives).
        public var code: Int32 {
            switch self {
            case .exited(let c): return c
            case .signalled(let s): return s
            }
        }

        public var description: String {
            switch self {
            case .exited(let c): return "exited with \(c)"
            case .signalled(let s): return "killed by signal \(s)"
            }
        }
    }

    /// The child's process id, which is also its process group id.
    public let pid: pid_t
    /// The executable's name, for messages.
    public let name: String
    private let state: State
    private let stdinFD: Int32

    /// Starts `executable` (an absolute path) with `arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment; nil inherits the test runner's.
    ///   - mergeStderr: stderr goes to the stdout pipe (one interleaved stream).
    ///   - onStdoutLine: called on the reader thread with each complete stdout line, in order.
    public init(
        _ executable: URL, _ arguments: [String] = [], environment: [String: String]? = nil,
        currentDirectory: URL? = nil, stdin: Input = .null, mergeStderr: Bool = false,
        onStdoutLine: (@Sendable (String) -> Void)? = nil
    ) throws {
        _ = Self.ignoreSIGPIPE
        name = executable.lastPathComponent
        state = State(onStdoutLine: onStdoutLine)

        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1], inPipe: [Int32] = [-1, -1]
        var wakePipe: [Int32] = [-1, -1]
        func closeAll() { for fd in outPipe + errPipe + inPipe + wakePipe where fd >= 0 { Glibc.close(fd) } }
        guard Self.pipe2(&outPipe, O_CLOEXEC) == 0, mergeStderr || Self.pipe2(&errPipe, O_CLOEXEC) == 0,
              stdin == .null || Self.pipe2(&inPipe, O_CLOEXEC) == 0, Self.pipe2(&wakePipe, O_CLOEXEC | O_NONBLOCK) == 0
        else {
            let e = errno
            closeAll()
            throw TestSupportError("cannot make pipes for \(executable.path): \(String(cString: strerror(e)))")
        }
        let nullFD = stdin == .null ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin == .null ? nullFD : inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, mergeStderr ? outPipe[1] : errPipe[1], 2)
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        if let currentDirectory {
            guard let chdir = Self.addChdir else {
                closeAll()
                throw TestSupportError("posix_spawn_file_actions_addchdir_np is missing; cannot set a working folder")
            }
            _ = currentDirectory.path.withCString { chdir(&actions, $0) }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group (id = its pid), so stop() reaches whatever it starts.
        posix_spawnattr_setpgroup(&attributes, 0)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in 1..<32 where s != SIGKILL && s != SIGSTOP { sigaddset(&defaults, Int32(s)) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let env = environment ?? ProcessInfo.processInfo.environment
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable.path, &actions, &attributes, argv, envp)
        if nullFD >= 0 { Glibc.close(nullFD) }
        // The child's ends belong to the child now.
        Glibc.close(outPipe[1])
        if !mergeStderr { Glibc.close(errPipe[1]) }
        if stdin == .pipe { Glibc.close(inPipe[0]) }
        guard rc == 0 else {
            Glibc.close(outPipe[0])
            if !mergeStderr { Glibc.close(errPipe[0]) }
            if stdin == .pipe { Glibc.close(inPipe[1]) }
            Glibc.close(wakePipe[0])
            Glibc.close(wakePipe[1])
            throw TestSupportError("cannot start \(executable.path): \(String(cString: strerror(rc)))")
        }
        pid = child
        stdinFD = stdin == .pipe ? inPipe[1] : -1
        state.wakeFD = wakePipe[1]

        let s = state, p = child
        Thread { s.waitForExit(of: p) }.start()
        let out = outPipe[0], err = mergeStderr ? -1 : errPipe[0], wake = wakePipe[0]
        Thread { s.readOutput(stdout: out, stderr: err, wake: wake) }.start()
    }

    deinit { stop() }

    // MARK: - Output

    /// Everything the child wrote on `stream` so far.
    public func output(_ stream: Stream = .stdout) -> String {
        state.lock.lock()
        defer { state.lock.unlock() }
        return String(decoding: stream == .stdout ? state.out : state.err, as: UTF8.self)
    }

    /// What the child wrote on stdout so far.
    public var stdout: String { output(.stdout) }
    /// What the child wrote on stderr so far.
    public var stderr: String { output(.stderr) }

    /// The complete lines the child wrote on `stream` so far.
    public func lines(_ stream: Stream = .stdout) -> [String] {
        state.lock.lock()
        defer { state.lock.unlock() }
        return State.completeLines(stream == .stdout ? state.out : state.err)
    }

    /// The first line on `stream` (already written, or written within `timeout` seconds)
    /// that satisfies `match`. Throws, with the output so far, if the deadline passes or
    /// the stream ends first.
    @discardableResult
    public func waitForLine(
        on stream: Stream = .stdout, timeout: Double, _ what: String = "the line", where match: (String) -> Bool
    ) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        state.lock.lock()
        defer { state.lock.unlock() }
        while true {
            let data = stream == .stdout ? state.out : state.err
            if let line = State.completeLines(data).first(where: match) { return line }
            let ended = stream == .stdout ? state.outEOF : state.errEOF
            if ended || Date() >= deadline {
                let why = ended ? "\(stream) ended (\(state.termination?.description ?? "still running"))" : "no such line within \(timeout) s"
                throw TestSupportError(
                    "\(name): waiting for \(what) on \(stream): \(why)\nstdout: \(String(decoding: state.out.suffix(3000), as: UTF8.self))\nstderr: \(String(decoding: state.err.suffix(3000), as: UTF8.self))")
            }
            _ = state.lock.wait(until: deadline)
        }
    }

    /// `waitForLine` without blocking Swift's cooperative pool.
    @discardableResult
    public func line(
        on stream: Stream = .stdout, timeout: Double, _ what: String = "the line", where match: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        try await offPool { try self.waitForLine(on: stream, timeout: timeout, what, where: match) }
    }

    // MARK: - Input

    /// Writes to the child's stdin (`stdin: .pipe`); false if it is closed or gone.
    @discardableResult
    public func write(_ data: Data) -> Bool {
        state.lock.lock()
        let fd = state.inputClosed ? -1 : stdinFD
        state.lock.unlock()
        guard fd >= 0 else { return false }
        return data.withUnsafeBytes { raw -> Bool in
            var sent = 0
            while sent < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + sent, raw.count - sent)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                sent += n
            }
            return true
        }
    }

    /// Closes the child's stdin (it reads end of file).
    public func closeInput() {
        state.lock.lock()
        defer { state.lock.unlock() }
        if stdinFD >= 0 && !state.inputClosed {
            state.inputClosed = true
            Glibc.close(stdinFD)
        }
    }

    // MARK: - Life

    /// How it ended; nil while it runs.
    public var termination: Termination? {
        state.lock.lock()
        defer { state.lock.unlock() }
        return state.termination
    }

    public var isRunning: Bool { termination == nil }

    /// Waits up to `timeout` seconds for the child to exit by itself; nil if it has not.
    @discardableResult
    public func waitForExit(timeout: Double) -> Termination? {
        let deadline = Date().addingTimeInterval(timeout)
        state.lock.lock()
        defer { state.lock.unlock() }
        while state.termination == nil && Date() < deadline { _ = state.lock.wait(until: deadline) }
        return state.termination
    }

    /// `waitForExit` without blocking Swift's cooperative pool.
    public func exit(timeout: Double) async -> Termination? {
        (try? await offPool { self.waitForExit(timeout: timeout) }) ?? nil
    }

    /// Sends `signal` to the child only (not its group), if it has not been reaped.
    public func signal(_ signal: Int32) {
        state.lock.lock()
        defer { state.lock.unlock() }
        // Under the lock the pid is at worst a zombie, never reused: reaping takes the lock.
        if state.termination == nil { kill(pid, signal) }
    }

    /// Stops the child and everything in its process group: SIGTERM, up to `grace`
    /// seconds for it to exit, then SIGKILL to the group, and reaps it. Idempotent;
    /// returns how it ended. `grace: 0` kills at once.
    @discardableResult
    public func stop(grace: Double = 5) -> Termination {
        state.lock.lock()
        if let t = state.termination, state.stopped {
            state.lock.unlock()
            return t
        }
        state.stopped = true
        if state.termination == nil && grace > 0 {
            kill(-pid, SIGTERM)
            kill(pid, SIGTERM)  // in case it left its group
            let deadline = Date().addingTimeInterval(grace)
            while state.termination == nil && Date() < deadline { _ = state.lock.wait(until: deadline) }
        }
        // The leader, if it ignored SIGTERM, and anything it started that is still in its
        // group. The group id cannot be reused while any member lives.
        kill(-pid, SIGKILL)
        if state.termination == nil { kill(pid, SIGKILL) }
        let reapDeadline = Date().addingTimeInterval(30)
        while state.termination == nil && Date() < reapDeadline { _ = state.lock.wait(until: reapDeadline) }
        if stdinFD >= 0 && !state.inputClosed {
            state.inputClosed = true
            Glibc.close(stdinFD)
        }
        // Let the reader collect the last output; a grandchild that left the group could
        // hold the pipes open, so the wait is bounded and then the reader is told to stop.
        let ioDeadline = Date().addingTimeInterval(2)
        while !(state.outEOF && state.errEOF) && Date() < ioDeadline { _ = state.lock.wait(until: ioDeadline) }
        state.wake()
        let t = state.termination ?? .signalled(SIGKILL)
        state.lock.unlock()
        return t
    }

    /// Runs to completion: waits up to `timeout` seconds, then stops it (SIGTERM, 1 s
    /// grace, SIGKILL). Returns how it ended and whether the deadline passed.
    public func finish(timeout: Double) -> (termination: Termination, timedOut: Bool) {
        if waitForExit(timeout: timeout) != nil { return (stop(grace: 0), false) }
        return (stop(grace: 1), true)
    }

    // MARK: - Process-wide

    /// Writing to a pipe whose reader died must be an error, not the end of the test runner.
    private static let ignoreSIGPIPE: Void = { _ = Glibc.signal(SIGPIPE, SIG_IGN) }()

    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    // pipe2 makes both ends close-on-exec atomically: no other test's child inherits them.
    private static let pipe2Function: Pipe2? = dlsym(dlopen(nil, RTLD_NOW), "pipe2").map { unsafeBitCast($0, to: Pipe2.self) }
    private static func pipe2(_ fds: inout [Int32], _ flags: Int32) -> Int32 {
        guard let f = pipe2Function else { return -1 }
        return fds.withUnsafeMutableBufferPointer { f($0.baseAddress!, flags) }
    }

    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    // glibc 2.29 / 2.34 functions that Swift's Glibc module does not import.
    private static let addChdir: AddChdir? = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addchdir_np").map { unsafeBitCast($0, to: AddChdir.self) }
    private static let addCloseFrom: AddCloseFrom? = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np").map { unsafeBitCast($0, to: AddCloseFrom.self) }
}

/// What the two helper threads and the owner share.
private final class State: @unchecked Sendable {
    // @unchecked: every field is read and written with `lock` held (the callback is
    // immutable and only called from the reader thread).
    let lock = NSCondition()
    var out = Data(), err = Data()
    var outEOF = false, errEOF = false
    var termination: ChildProcess.Termination?
    var stopped = false
    var inputClosed = false
    var wakeFD: Int32 = -1
    private var partialLine = Data()
    let onStdoutLine: (@Sendable (String) -> Void)?
    /// Output kept per stream; a chatty child's oldest output is dropped beyond this.
    static let limit = 8 << 20

    init(onStdoutLine: (@Sendable (String) -> Void)?) { self.onStdoutLine = onStdoutLine }

    /// Tells the reader thread to finish (with the lock held).
    func wake() {
        if wakeFD >= 0 {
            var b: UInt8 = 1
            _ = Glibc.write(wakeFD, &b, 1)
        }
    }

    static func completeLines(_ data: Data) -> [String] {
        guard let last = data.lastIndex(of: 0x0A) else { return [] }
        return data[data.startIndex..<last].split(separator: 0x0A, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\r")) }
    }

    /// The exit waiter: blocks until the child exits, then reaps it with the lock held.
    func waitForExit(of pid: pid_t) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        lock.lock()
        var status: Int32 = 0
        var r: pid_t
        repeat { r = waitpid(pid, &status, 0) } while r < 0 && errno == EINTR
        termination = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
        lock.broadcast()
        lock.unlock()
    }

    /// The reader: blocks in poll on the pipes (and the wake-up pipe) until both end.
    func readOutput(stdout: Int32, stderr: Int32, wake: Int32) {
        var fds = [stdout, stderr]
        if stderr < 0 {
            lock.lock()
            errEOF = true
            lock.unlock()
        }
        var buffer = [UInt8](repeating: 0, count: 65536)
        var draining = false
        while fds.contains(where: { $0 >= 0 }) {
            // Once told to stop, only what is readable now is taken (timeout 0).
            var polls = [pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0), pollfd(fd: fds[1], events: Int16(POLLIN), revents: 0),
                         pollfd(fd: draining ? -1 : wake, events: Int16(POLLIN), revents: 0)]
            let n = poll(&polls, 3, draining ? 0 : -1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }  // told to stop and nothing more is readable (or poll failed)
            if polls[2].revents != 0 {
                draining = true
                continue
            }
            for i in 0..<2 where fds[i] >= 0 && polls[i].revents != 0 {
                let got = read(fds[i], &buffer, buffer.count)
                if got < 0 && errno == EINTR { continue }
                var lines: [String] = []
                lock.lock()
                if got > 0 {
                    lines = append(buffer[0..<got], stream: i)
                } else {
                    Glibc.close(fds[i])
                    fds[i] = -1
                    if i == 0 { outEOF = true } else { errEOF = true }
                }
                lock.broadcast()
                lock.unlock()
                // Outside the lock: the callback may ask the ChildProcess for its output.
                if let onStdoutLine { for l in lines { onStdoutLine(l) } }
            }
        }
        lock.lock()
        for fd in fds where fd >= 0 { Glibc.close(fd) }
        outEOF = true
        errEOF = true
        Glibc.close(wake)
        Glibc.close(wakeFD)
        wakeFD = -1
        lock.broadcast()
        lock.unlock()
    }

    /// With the lock held; returns the complete stdout lines for `onStdoutLine`.
    private func append(_ bytes: ArraySlice<UInt8>, stream: Int) -> [String] {
        var lines: [String] = []
        if stream == 0 {
            out.append(contentsOf: bytes)
            if out.count > Self.limit { out.removeFirst(out.count - Self.limit) }
            if let onStdoutLine {
                partialLine.append(contentsOf: bytes)
                while let nl = partialLine.firstIndex(of: 0x0A) {
                    let line = String(decoding: partialLine[partialLine.startIndex..<nl], as: UTF8.self)
                    partialLine.removeSubrange(partialLine.startIndex...nl)
                    lines.append(line)
                }
            }
        } else {
            err.append(contentsOf: bytes)
            if err.count > Self.limit { err.removeFirst(err.count - Self.limit) }
        }
        return lines
    }
}

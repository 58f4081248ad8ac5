#if canImport(Glibc)
import Glibc
#endif

/// Starts and names OS threads over pthreads.
///
/// The bot does not use Foundation's `Thread`: importing `Foundation` anywhere in the
/// binary maps libFoundation, libFoundationInternationalization and the ICU data
/// (about 10 MB of resident pages; docs/BENCHMARKS.md, "Baseline memory"), while
/// everything else the bot needs is in `FoundationEssentials`, Glibc and Synchronization.
public enum OSThread {
    /// Starts a detached thread that runs `body` and then ends.
    /// - Parameters:
    ///   - name: shown by `top -H`, `ps -L` and `/proc/PID/task/*/comm`; Linux keeps the
    ///     first 15 bytes.
    ///   - stackSize: bytes, or 0 for the system default (8 MiB of address space,
    ///     touched only as used).
    /// A thread that cannot be created (the process is out of threads or memory) stops
    /// the process with a message, as Foundation's `Thread.start()` does.
    public static func start(name: String? = nil, stackSize: Int = 0, _ body: @escaping @Sendable () -> Void) {
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        if stackSize > 0 { pthread_attr_setstacksize(&attr, max(stackSize, Int(PTHREAD_STACK_MIN))) }
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(&tid, &attr, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            if let name = start.name { OSThread.setCurrentName(name) }
            start.body()
            return nil
        }, start)
        if rc != 0 {
            Unmanaged<Start>.fromOpaque(start).release()
            fatalError("cannot start thread \(name ?? "?"): \(String(cString: strerror(rc)))")
        }
    }

    /// Names the calling thread (the first 15 bytes of `name`, cut on a character
    /// boundary), through `/proc/thread-self/comm` as glibc's `pthread_setname_np` does.
    public static func setCurrentName(_ name: String) {
        var bytes: [UInt8] = []
        for c in name {
            let u = Array(String(c).utf8)
            if bytes.count + u.count > 15 { break }
            bytes += u
        }
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = write(fd, bytes, bytes.count)
        close(fd)
    }

    /// Sleeps the calling thread for `seconds` (restarted after signals).
    public static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        let whole = seconds.rounded(.down)
        var ts = timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
        var rest = timespec()
        while nanosleep(&ts, &rest) != 0 && errno == EINTR { ts = rest }
    }

    private final class Start {
        let name: String?
        let body: @Sendable () -> Void
        init(name: String?, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}

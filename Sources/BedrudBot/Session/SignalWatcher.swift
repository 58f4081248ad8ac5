#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Turns SIGINT and SIGTERM into a callback, so a run can finish its files and leave
/// the room cleanly instead of dying mid-write. A second signal exits at once.
/// With `onHangup`, SIGHUP is a request of its own (rotate the files, as log rotation
/// expects): it never counts toward the second-signal exit.
public final class SignalWatcher: @unchecked Sendable {
    // @unchecked: `sources` is written in init and cancelled under `lock`; the counter
    // is atomic. Dispatch sources themselves are thread-safe.
    private var sources: [any DispatchSourceSignal] = []
    private let lock = Mutex<Void>(())
    private let counter = SignalCounter()

    private let watchesHangup: Bool

    public init(onSignal: @escaping @Sendable (Int32) -> Void, onHangup: (@Sendable () -> Void)? = nil) {
        let counter = self.counter
        watchesHangup = onHangup != nil
        if let onHangup {
            signal(SIGHUP, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
            s.setEventHandler { onHangup() }
            s.resume()
            sources.append(s)
        }
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler {
                // Signals that arrive together are delivered as one event: count them all,
                // so a quick double Ctrl-C still stops at once (files are left for repair).
                // Once the files are finished (``filesFinished()``) there is nothing left to
                // abandon: a second signal no longer changes the outcome.
                if counter.increment(by: max(1, Int(s.data))) > 1 && !counter.finished { _exit(ExitCode.interrupted.rawValue) }
                onSignal(sig)
            }
            s.resume()
            sources.append(s)
        }
    }

    /// Number of signals received.
    public var received: Int { counter.value }

    /// The run's files are finished: from now on a second SIGINT/SIGTERM is ignored, so
    /// the report is written and the exit code agrees with summary.json.
    public func filesFinished() { counter.markFinished() }

    public func cancel() {
        lock.withLock { _ in
            for s in sources { s.cancel() }
            sources.removeAll()
        }
        // Stay ignoring, not SIG_DFL: the run is finished and the process is about to exit
        // 0; a second signal that arrives late (two sent back to back, handled after the
        // first one's clean stop) must not turn that into a death by signal.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        if watchesHangup { signal(SIGHUP, SIG_IGN) }
    }
}

final class SignalCounter: Sendable {
    private let count = Atomic<Int>(0)
    private let done = Atomic<Bool>(false)
    func markFinished() { done.store(true, ordering: .releasing) }
    var finished: Bool { done.load(ordering: .acquiring) }
    func increment(by n: Int = 1) -> Int { count.add(n, ordering: .relaxed).newValue }
    var value: Int { count.load(ordering: .relaxed) }
}

#if canImport(Glibc)
import Glibc
#endif
import BedrudProtocol
import Synchronization

/// What one turn of a ``ThreadedPageWriter`` found.
enum WriterStep: Sendable, Equatable {
    /// It stopped at its budget with entries still queued.
    case busy
    /// Nothing queued; its next timed work (an fsync, a retry) is due then (nil: none).
    case idle(until: UInt64?)
    /// `finish` was called and everything queued is written: the writer is done.
    case finished
}

/// One writer thread shared by the page writers of several pipelines (one process
/// recording several rooms, ``MediaThreadPool``). Each writer keeps its own queue, files,
/// fsync policy and failure accounting; the thread takes turns between them, at most
/// `budget` entries per writer per turn, so a busy room cannot hold back the others'
/// pages. It sleeps on one ``WakeSignal`` that every attached writer's producer notifies,
/// until the earliest fsync or retry of its writers.
///
/// Thread contract: `attach` (via ``ThreadedPageWriter/init``) and `shutdown` from any
/// thread; the writers' own methods as documented there.
public final class PageWriterThread: Sendable {
    let signal = WakeSignal()
    private let incoming = Mutex<[ThreadedPageWriter]>([])
    private let hasIncoming = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let count = Atomic<Int>(0)
    private let budget: Int

    /// - Parameter budget: entries (pages) one writer may write per turn.
    public init(name: String = "bedrud.writer", budget: Int = 64) {
        self.budget = max(1, budget)
        PosixThread.start(name: name) { [self] in run() }
    }

    /// Writers currently attached.
    public var writerCount: Int { count.load(ordering: .relaxed) }

    func attach(_ writer: ThreadedPageWriter) {
        count.add(1, ordering: .relaxed)
        incoming.withLock { $0.append(writer) }
        hasIncoming.store(true, ordering: .releasing)
        signal.notify()
    }

    /// Ends the thread once its writers have finished.
    public func shutdown() {
        stopping.store(true, ordering: .releasing)
        signal.notify()
    }

    private func run() {
        var writers: [ThreadedPageWriter] = []
        while true {
            // `stopping` first: a writer attached before `shutdown` is then surely in `incoming`.
            let stop = stopping.load(ordering: .acquiring)
            if hasIncoming.exchange(false, ordering: .acquiring) {
                writers.append(contentsOf: incoming.withLock { list -> [ThreadedPageWriter] in
                    defer { list.removeAll() }
                    return list
                })
            }
            if writers.isEmpty && stop { return }
            var busy = false
            var due = UInt64.max
            var i = 0
            while i < writers.count {
                switch writers[i].step(budget: budget) {
                case .busy:
                    busy = true
                    i += 1
                case .idle(let until):
                    if let until { due = min(due, until) }
                    i += 1
                case .finished:
                    writers.remove(at: i)
                    count.subtract(1, ordering: .relaxed)
                }
            }
            if busy { continue }
            signal.park(untilNanos: due == .max ? nil : due) {
                hasIncoming.load(ordering: .acquiring) || (writers.isEmpty && stopping.load(ordering: .acquiring))
                    || writers.contains { $0.hasWork }
            }
        }
    }
}

/// Starts a detached POSIX thread running `body` (no Foundation `Thread`), named through
/// `/proc/thread-self/comm` (first 15 bytes). Once the `OSThread` helper of the
/// FoundationEssentials work is on main, this is `OSThread.start(name:_:)`.
enum PosixThread {
    private final class Body {
        let name: [UInt8]
        let run: @Sendable () -> Void
        init(_ name: String, _ run: @escaping @Sendable () -> Void) {
            self.name = Array(name.utf8.prefix(15))
            self.run = run
        }
    }

    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let arg = Unmanaged.passRetained(Body(name, body)).toOpaque()
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        var tid = pthread_t()
        let rc = pthread_create(&tid, &attr, { raw in
            guard let raw else { return nil }
            let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
            let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if fd >= 0 {
                _ = write(fd, body.name, body.name.count)
                close(fd)
            }
            body.run()
            return nil
        }, arg)
        if rc != 0 {
            // Out of threads or memory: as Foundation's Thread.start() does, stop with a message.
            Unmanaged<Body>.fromOpaque(arg).release()
            fatalError("cannot start thread \(name): \(String(cString: strerror(rc)))")
        }
    }
}

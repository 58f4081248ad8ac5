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
        OSThread.start(name: name) { [self] in run() }
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

import BedrudProtocol
import BedrudRuntime
import Synchronization

/// What one turn of a ``TurnJob`` found.
enum TurnResult: Sendable, Equatable {
    /// It did work and more is probably waiting (packets were taken; a writer stopped at
    /// its budget with pages still queued).
    case busy
    /// Nothing to do; its next timed work is due at this monotonic time (nil: none).
    case idle(until: UInt64?)
    /// The job is done: its thread drops it and never turns it again.
    case finished
}

/// Work that takes turns on a ``TurnThread``: a pipeline's media job, a page writer.
///
/// Thread contract: once attached, `turn` and `hasWork` are called only by the one
/// thread the job is attached to.
protocol TurnJob: Sendable {
    /// Does what is due at the monotonic time `now` (read once per turn of the thread
    /// and shared by its jobs) and says what it found.
    func turn(now: UInt64) -> TurnResult
    /// True when a turn now would find something to do (asked before parking).
    var hasWork: Bool { get }
}

/// One OS thread taking turns between the jobs attached to it: the loop that the media
/// threads (``MediaWorker``) and the shared writer threads (``PageWriterThread``) run.
///
/// Each loop turn takes the jobs attached since the last one, turns every job once (in
/// the order they were attached), and drops those that finished. Then it sleeps:
/// - after a turn in which a job was busy, for `busyPauseNanos` without announcing a
///   park, so producers do not pay a syscall meanwhile and notifications do not cut the
///   pause short (nil: the next turn starts at once);
/// - otherwise it parks on ``signal`` until the earliest due time its jobs gave, or until
///   a producer notifies and something has work: a job's ``TurnJob/hasWork``, a newly
///   attached job, or `shutdown` once no job is left.
///
/// It ends once `shutdown` was called and its last job finished; a job attached before
/// `shutdown` is still run to its end (a thread of its own is told to stop right after
/// its one job is attached).
///
/// A loop turn allocates only when jobs were attached since the last one.
///
/// Thread contract: `attach`, `shutdown` and `jobCount` from any thread; producers of
/// the jobs' work call `signal.notify()` from any thread after publishing it.
final class TurnThread<Job: TurnJob>: Sendable {
    /// What the thread parks on: every producer of its jobs' work notifies it.
    let signal = WakeSignal()
    private let incoming = Mutex<[Job]>([])
    private let hasIncoming = Atomic<Bool>(false)
    private let count = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let busyPauseNanos: UInt64?

    /// Starts the thread.
    /// - Parameters:
    ///   - name: the OS thread's name (`top -H`; Linux keeps the first 15 bytes).
    ///   - busyPauseNanos: the sleep after a turn in which a job was busy (nil: none).
    init(name: String, busyPauseNanos: UInt64?) {
        self.busyPauseNanos = busyPauseNanos
        OSThread.start(name: name) { [self] in run() }
    }

    /// Jobs attached and not yet finished (counted from `attach`, before the thread has
    /// taken them).
    var jobCount: Int { count.load(ordering: .relaxed) }

    /// Hands `job` to the thread; its first turn comes on the next loop turn.
    func attach(_ job: Job) {
        count.add(1, ordering: .relaxed)
        incoming.withLock { $0.append(job) }
        hasIncoming.store(true, ordering: .releasing)
        signal.notify()
    }

    /// Ends the thread once its jobs have finished.
    func shutdown() {
        stopping.store(true, ordering: .releasing)
        signal.notify()
    }

    private func run() {
        var jobs: [Job] = []
        while true {
            // `stopping` first: a job attached before `shutdown` is then surely in `incoming`.
            let stop = stopping.load(ordering: .acquiring)
            if hasIncoming.exchange(false, ordering: .acquiring) {
                jobs.append(contentsOf: incoming.withLock { list -> [Job] in
                    defer { list.removeAll() }
                    return list
                })
            }
            if jobs.isEmpty && stop { return }
            var busy = false
            var due = UInt64.max
            var i = 0
            let now = MonotonicClock.nanos()
            while i < jobs.count {
                switch jobs[i].turn(now: now) {
                case .busy:
                    busy = true
                    i += 1
                case .idle(let until):
                    if let until { due = min(due, until) }
                    i += 1
                case .finished:
                    jobs.remove(at: i)
                    count.subtract(1, ordering: .relaxed)
                }
            }
            if busy {
                if let busyPauseNanos { WakeSignal.sleep(nanos: busyPauseNanos) }
                continue
            }
            signal.park(untilNanos: due == .max ? nil : due) {
                // `stopping` matters only once the last job is gone.
                hasIncoming.load(ordering: .acquiring) || (jobs.isEmpty && stopping.load(ordering: .acquiring))
                    || jobs.contains { $0.hasWork }
            }
        }
    }
}

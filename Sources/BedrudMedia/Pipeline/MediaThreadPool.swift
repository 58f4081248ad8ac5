import BedrudProtocol
import BedrudRuntime

/// Media and writer threads shared by several pipelines (one process recording several
/// rooms). Each pipeline is pinned to the worker with the fewest pipelines when it starts,
/// and its page writer to the writer thread with the fewest writers.
///
/// Thread contract: `attach` (via ``MediaPipeline/init``) and `shutdown` from any thread.
public final class MediaThreadPool: Sendable {
    private let workers: [MediaWorker]
    private let writers: [PageWriterThread]

    /// - Parameters:
    ///   - batchMillis: see ``MediaWorker``.
    ///   - writerThreads: threads writing the pipelines' pages to their files.
    public init(threads: Int = 1, batchMillis: Int = 20, writerThreads: Int = 1) {
        workers = (0..<max(1, threads)).map { MediaWorker(name: "bedrud.media.\($0)", batchMillis: batchMillis) }
        writers = (0..<max(1, writerThreads)).map { PageWriterThread(name: "bedrud.writer.\($0)") }
    }

    /// Page writers currently on each writer thread.
    public var writerLoad: [Int] { writers.map(\.writerCount) }

    func pickWriterThread() -> PageWriterThread { writers.min { $0.writerCount < $1.writerCount } ?? writers[0] }

    /// Pipelines currently running on each worker.
    public var load: [Int] { workers.map(\.jobCount) }

    func pickWorker() -> MediaWorker { workers.min { $0.jobCount < $1.jobCount } ?? workers[0] }

    /// Ends the workers and writer threads once their pipelines have stopped.
    public func shutdown() {
        for w in workers { w.shutdown() }
        for w in writers { w.shutdown() }
    }
}

/// One media thread running the turns of its pipelines: a ``TurnThread`` over their
/// ``MediaJob``s.
///
/// How it sleeps: a turn that took packets is followed by a `batchMillis` sleep that
/// producers do not interrupt (so while audio flows, one turn per interval handles
/// every track's packets, and the network thread pays no syscall); a turn that took
/// nothing parks on ``signal`` until the earliest timed work of its pipelines (a held
/// packet's release, the next page or stats tick, at most a few per second) or until a
/// ring, a control message or `stop` notifies it. An empty room costs a few turns a
/// second; the first packet after a pause is handled at once.
///
/// Thread contract: `attach`, `shutdown` and `jobCount` from any thread.
final class MediaWorker: Sendable {
    private let thread: TurnThread<MediaJob>

    init(name: String, batchMillis: Int) {
        thread = TurnThread(name: name, busyPauseNanos: UInt64(max(0, batchMillis)) * 1_000_000)
    }

    /// What the thread parks on: the pipelines' rings, controls and `stop` notify it.
    var signal: WakeSignal { thread.signal }

    /// Pipelines running on this thread (not yet stopped).
    var jobCount: Int { thread.jobCount }

    func attach(_ job: MediaJob) { thread.attach(job) }

    /// Ends the thread once its pipelines have stopped.
    func shutdown() { thread.shutdown() }
}

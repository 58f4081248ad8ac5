import BedrudProtocol
import FoundationEssentials
import Synchronization

/// A recording pipeline on its own threads: the media thread runs a ``MediaEngine`` over
/// the registered rings, the writer thread (``ThreadedPageWriter``) puts pages into the
/// sinks.
///
/// How the recording session uses it:
/// ```
/// let pipeline = MediaPipeline(config: cfg, sinks: DirectorySinkFactory(directory: dir))
/// pipeline.send(.addTrack(spec, ring))          // ring filled by the network thread
/// for await event in pipeline.events { … }       // turns, gaps, files, warnings
/// pipeline.send(.setMuted(identity: id, muted: true))
/// await pipeline.stop()                          // files finished and renamed
/// ```
/// Control messages go through a mutex-protected list that the media thread takes once
/// per loop turn (never per packet). The media thread sleeps on a ``WakeSignal`` that
/// the rings, `send` and `stop` notify, with a deadline for its timed work (see
/// ``MediaWorker``): an empty room costs a few turns a second. Events are delivered on a bounded `AsyncStream` (oldest
/// dropped beyond 4096 unread).
///
/// Thread contract: `send`, `stats` and `stop` may be called from any thread or task.
public final class MediaPipeline: Sendable {
    private let controls = Mutex<[MediaControl]>([])
    private let hasControls = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let stopped = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    private let latestStats = Mutex<MediaStats>(MediaStats())
    /// Turns, gaps, files and warnings, in the order they happened.
    public let events: AsyncStream<MediaEvent>
    private let continuation: AsyncStream<MediaEvent>.Continuation
    private let writer: ThreadedPageWriter
    /// The media thread's wake-up: rings, controls and `stop` notify it.
    private let wake: WakeSignal
    public let startNanos: UInt64

    /// Starts the pipeline. Session sample 0 is now.
    /// - Parameters:
    ///   - pool: the media threads to run on (one process recording several rooms shares
    ///     a pool); nil = a media thread of its own, ended by `stop()`.
    ///   - batchMillis: while packets flow, the media thread takes one turn per this
    ///     interval (one packet per track at 20 ms); see ``MediaWorker``.
    ///   - syncIntervalSeconds: fsync policy of the writer thread (0 = only at close).
    public init(
        config: MediaPipelineConfig, sinks: RecordingSinkFactory & Sendable, pool: MediaThreadPool? = nil, batchMillis: Int = 20,
        syncIntervalSeconds: Double = 5, recoveryLimits: PageStreamRecovery.Limits = .init()
    ) {
        (events, continuation) = AsyncStream.makeStream(of: MediaEvent.self, bufferingPolicy: .bufferingNewest(4096))
        writer = ThreadedPageWriter(syncIntervalSeconds: syncIntervalSeconds, recoveryLimits: recoveryLimits, thread: pool?.pickWriterThread(),
                                    logRoom: config.logRoom)
        let start = MonotonicClock.nanos()
        startNanos = start
        let worker = pool?.pickWorker() ?? MediaWorker(name: "bedrud.media", batchMillis: batchMillis)
        wake = worker.signal
        worker.attach(MediaJob(config: config, sinks: sinks, startNanos: start, pipeline: self))
        // A thread of its own ends with its one pipeline.
        if pool == nil { worker.shutdown() }
    }

    /// Queues a control message for the media thread.
    public func send(_ control: MediaControl) {
        if case .addTrack(_, let ring) = control { ring.attach(wake: wake) }
        controls.withLock { $0.append(control) }
        hasControls.store(true, ordering: .releasing)
        wake.notify()
    }

    // MARK: - Write failures (a full disk)

    /// Monotonic time since which the recording's writes have been failing (nil: they work).
    /// The session polls this to stop on a full disk.
    public var writeFailingSinceNanos: UInt64? { writer.failingSinceNanos }
    /// errno of the last failed write (ENOSPC: the disk is full).
    public var lastWriteErrno: Int32 { writer.lastFailureErrno }
    /// Files closed unfinished (left as `*.part`) because their last pages could not be written.
    public var unfinishedFiles: Int { writer.unfinishedFiles }
    /// Pages dropped because writes failed longer than the memory bound (written as gaps).
    public var pagesDroppedForWriteErrors: Int { writer.pagesDroppedForWriteErrors }
    /// Tells the writer to retry failed writes at once (the session freed space).
    public func retryWritesNow() { writer.retryNow() }

    /// The counters as of the media thread's last report (refreshed about once a second).
    public var stats: MediaStats { latestStats.withLock { $0 } }

    /// Finishes every file at this instant, drains the writer and ends the pipeline's
    /// threads (a pool's threads stay for its other pipelines).
    public func stop() async {
        stopRequested.store(true, ordering: .releasing)
        wake.notify()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let resumeNow = stopped.withLock { s -> Bool in
                if s.done { return true }
                s.waiters.append(c)
                return false
            }
            if resumeNow { c.resume() }
        }
    }

    // MARK: - Used by the job on the media thread

    fileprivate var controlsPending: Bool { hasControls.load(ordering: .acquiring) }

    fileprivate func takeControls() -> [MediaControl] {
        guard hasControls.exchange(false, ordering: .acquiring) else { return [] }
        return controls.withLock { list -> [MediaControl] in
            if list.isEmpty { return [] }
            defer { list.removeAll(keepingCapacity: true) }
            return list
        }
    }

    fileprivate var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }
    fileprivate var pageWriter: ThreadedPageWriter { writer }
    fileprivate var eventContinuation: AsyncStream<MediaEvent>.Continuation { continuation }
    fileprivate func publish(_ s: MediaStats) { latestStats.withLock { $0 = s } }

    fileprivate func markStopped() {
        continuation.finish()
        let waiters = stopped.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.done = true
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for w in waiters { w.resume() }
    }
}

/// One pipeline's media-thread work: the engine and its loop body. Created on any thread,
/// then run by exactly one media thread (its own, or one pool worker), which creates the
/// engine on first use; nothing else touches it afterwards.
///
/// A turn is `.busy` when it took packets (more are probably on the way) and otherwise
/// `.idle` until its engine's next timed work or stats tick.
final class MediaJob: TurnJob, @unchecked Sendable {
    // @unchecked: after `attach`/thread start, every stored property is used only by the
    // one media thread that runs `turn`; `pipeline` is Sendable.
    private let config: MediaPipelineConfig
    private let sinks: RecordingSinkFactory & Sendable
    private let startNanos: UInt64
    private let pipeline: MediaPipeline  // kept alive until the job finishes
    private var engine: MediaEngine?
    private var lastStats: UInt64 = 0
    private var done = false

    init(config: MediaPipelineConfig, sinks: RecordingSinkFactory & Sendable, startNanos: UInt64, pipeline: MediaPipeline) {
        self.config = config
        self.sinks = sinks
        self.startNanos = startNanos
        self.pipeline = pipeline
    }

    func turn(now: UInt64) -> TurnResult {
        if done { return .finished }
        let writer = pipeline.pageWriter
        let engine: MediaEngine
        if let e = self.engine {
            engine = e
        } else {
            let cont = pipeline.eventContinuation
            engine = MediaEngine(config: config, startNanos: startNanos, sinks: sinks, pages: writer) { cont.yield($0) }
            self.engine = engine
        }
        for c in pipeline.takeControls() { engine.apply(c, now: now) }
        if pipeline.isStopRequested {
            engine.process(now: now)
            engine.finish(now: now)
            writer.finish()
            Self.forwardWriteGaps(writer, engine)
            var s = engine.stats()
            s.pageBytesWritten = writer.bytesWritten
            pipeline.publish(s)
            if writer.failedOperations > 0 {
                pipeline.eventContinuation.yield(.warning("\(writer.failedOperations) file operations failed; see the log."))
            }
            if writer.droppedPages > 0 {
                pipeline.eventContinuation.yield(.warning("\(writer.droppedPages) recording pages were dropped because the disk fell behind."))
            }
            pipeline.markStopped()
            self.engine = nil
            done = true
            return .finished
        }
        let taken = engine.process(now: now)
        writer.notifyIfPending()
        Self.forwardWriteGaps(writer, engine)
        if now &- lastStats >= 1_000_000_000 {
            var s = engine.stats()
            s.pageBytesWritten = writer.bytesWritten
            pipeline.publish(s)
            if lastStats != 0, writer.droppedPages > 0 {
                pipeline.eventContinuation.yield(.warning("\(writer.droppedPages) recording pages were dropped because the disk fell behind."))
            }
            lastStats = now
        }
        if taken > 0 { return .busy }
        return .idle(until: min(engine.nextDueNanos(now: now), lastStats &+ 1_000_000_000))
    }

    /// The writer's gaps (spans it could not write) as `gap` events of the engine.
    private static func forwardWriteGaps(_ writer: ThreadedPageWriter, _ engine: MediaEngine) {
        for (id, report) in writer.takeReports() {
            if case .gap(let a, let b) = report { engine.noteWriteGap(streamID: id, startGranule: a, endGranule: b) }
        }
    }

    /// True when a turn now would find something to do (asked before parking).
    var hasWork: Bool {
        if done { return false }
        if pipeline.controlsPending || pipeline.isStopRequested { return true }
        return engine?.hasPendingInput ?? true
    }
}

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

import BedrudProtocol
import BedrudRuntime
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

    var controlsPending: Bool { hasControls.load(ordering: .acquiring) }

    func takeControls() -> [MediaControl] {
        guard hasControls.exchange(false, ordering: .acquiring) else { return [] }
        return controls.withLock { list -> [MediaControl] in
            if list.isEmpty { return [] }
            defer { list.removeAll(keepingCapacity: true) }
            return list
        }
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }
    var pageWriter: ThreadedPageWriter { writer }
    var eventContinuation: AsyncStream<MediaEvent>.Continuation { continuation }
    func publish(_ s: MediaStats) { latestStats.withLock { $0 = s } }

    func markStopped() {
        continuation.finish()
        let waiters = stopped.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.done = true
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for w in waiters { w.resume() }
    }
}

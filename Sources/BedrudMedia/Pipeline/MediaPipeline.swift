import BedrudProtocol
import Foundation
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
/// per loop turn (never per packet). The media thread polls its rings every
/// `pollMillis` when idle. Events are delivered on a bounded `AsyncStream` (oldest
/// dropped beyond 4096 unread).
///
/// Thread contract: `send`, `stats` and `stop` may be called from any thread or task.
public final class MediaPipeline: Sendable {
    private let controls = Mutex<[MediaControl]>([])
    private let stopRequested = Atomic<Bool>(false)
    private let stopped = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    private let latestStats = Mutex<MediaStats>(MediaStats())
    /// Turns, gaps, files and warnings, in the order they happened.
    public let events: AsyncStream<MediaEvent>
    private let continuation: AsyncStream<MediaEvent>.Continuation
    private let writer: ThreadedPageWriter
    public let startNanos: UInt64

    /// Starts the pipeline. Session sample 0 is now.
    /// - Parameters:
    ///   - pool: the media threads to run on (one process recording several rooms shares
    ///     a pool); nil = a media thread of its own, ended by `stop()`.
    ///   - pollMillis: idle sleep of its own media thread between ring polls.
    ///   - syncIntervalSeconds: fsync policy of the writer thread (0 = only at close).
    public init(
        config: MediaPipelineConfig, sinks: RecordingSinkFactory & Sendable, pool: MediaThreadPool? = nil, pollMillis: Int = 5,
        syncIntervalSeconds: Double = 5
    ) {
        (events, continuation) = AsyncStream.makeStream(of: MediaEvent.self, bufferingPolicy: .bufferingNewest(4096))
        writer = ThreadedPageWriter(syncIntervalSeconds: syncIntervalSeconds)
        let start = MonotonicClock.nanos()
        startNanos = start
        let job = MediaJob(config: config, sinks: sinks, startNanos: start, pipeline: self)
        if let pool {
            pool.attach(job)
        } else {
            let poll = UInt32(max(1, pollMillis) * 1000)
            let thread = Thread {
                while true {
                    let r = job.step(now: MonotonicClock.nanos())
                    if r == .finished { break }
                    if r == .idle { usleep(poll) }
                }
            }
            thread.name = "bedrud.media"
            thread.start()
        }
    }

    /// Queues a control message for the media thread.
    public func send(_ control: MediaControl) {
        controls.withLock { $0.append(control) }
    }

    /// The counters as of the media thread's last report (refreshed about once a second).
    public var stats: MediaStats { latestStats.withLock { $0 } }

    /// Finishes every file at this instant, drains the writer and ends the pipeline's
    /// threads (a pool's threads stay for its other pipelines).
    public func stop() async {
        stopRequested.store(true, ordering: .releasing)
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

    fileprivate func takeControls() -> [MediaControl] {
        controls.withLock { list -> [MediaControl] in
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
final class MediaJob: @unchecked Sendable {
    // @unchecked: after `attach`/thread start, every stored property is used only by the
    // one media thread that runs `step`; `pipeline` is Sendable.
    enum StepResult { case busy, idle, finished }
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

    func step(now: UInt64) -> StepResult {
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
            var s = engine.stats()
            writer.finish()
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
        if now &- lastStats >= 1_000_000_000 {
            var s = engine.stats()
            s.pageBytesWritten = writer.bytesWritten
            pipeline.publish(s)
            if lastStats != 0, writer.droppedPages > 0 {
                pipeline.eventContinuation.yield(.warning("\(writer.droppedPages) recording pages were dropped because the disk fell behind."))
            }
            lastStats = now
        }
        return taken > 0 ? .busy : .idle
    }
}

/// Media threads shared by several pipelines (one process recording several rooms).
/// Each pipeline is pinned to the worker with the fewest pipelines when it starts; a
/// worker polls its pipelines' rings every `pollMillis` when all are idle.
///
/// Thread contract: `attach` (via ``MediaPipeline/init``) and `shutdown` from any thread.
public final class MediaThreadPool: Sendable {
    private let workers: [MediaWorker]

    public init(threads: Int = 1, pollMillis: Int = 5) {
        workers = (0..<max(1, threads)).map { MediaWorker(index: $0, pollMicros: UInt32(max(1, pollMillis) * 1000)) }
    }

    /// Pipelines currently running on each worker.
    public var load: [Int] { workers.map(\.jobCount) }

    func attach(_ job: MediaJob) {
        let w = workers.min { $0.jobCount < $1.jobCount } ?? workers[0]
        w.attach(job)
    }

    /// Ends the workers once their pipelines have stopped.
    public func shutdown() { for w in workers { w.shutdown() } }
}

final class MediaWorker: Sendable {
    private let incoming = Mutex<[MediaJob]>([])
    private let count = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)

    init(index: Int, pollMicros: UInt32) {
        let t = Thread { [self] in self.run(pollMicros: pollMicros) }
        t.name = "bedrud.media.\(index)"
        t.start()
    }

    var jobCount: Int { count.load(ordering: .relaxed) }

    func attach(_ job: MediaJob) {
        count.add(1, ordering: .relaxed)
        incoming.withLock { $0.append(job) }
    }

    func shutdown() { stopping.store(true, ordering: .releasing) }

    private func run(pollMicros: UInt32) {
        var jobs: [MediaJob] = []
        while true {
            let fresh = incoming.withLock { list -> [MediaJob] in
                defer { list.removeAll() }
                return list
            }
            jobs.append(contentsOf: fresh)
            if jobs.isEmpty && stopping.load(ordering: .acquiring) { return }
            var busy = false
            var i = 0
            let now = MonotonicClock.nanos()
            while i < jobs.count {
                switch jobs[i].step(now: now) {
                case .busy:
                    busy = true
                    i += 1
                case .idle: i += 1
                case .finished:
                    jobs.remove(at: i)
                    count.subtract(1, ordering: .relaxed)
                }
            }
            if !busy { usleep(pollMicros) }
        }
    }
}

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

    /// Starts the media and writer threads. Session sample 0 is now.
    /// - Parameters:
    ///   - pollMillis: idle sleep of the media thread between ring polls.
    ///   - syncIntervalSeconds: fsync policy of the writer thread (0 = only at close).
    public init(
        config: MediaPipelineConfig, sinks: RecordingSinkFactory & Sendable, pollMillis: Int = 5, syncIntervalSeconds: Double = 5
    ) {
        (events, continuation) = AsyncStream.makeStream(of: MediaEvent.self, bufferingPolicy: .bufferingNewest(4096))
        writer = ThreadedPageWriter(syncIntervalSeconds: syncIntervalSeconds)
        let start = MonotonicClock.nanos()
        startNanos = start
        let cont = continuation
        let w = writer
        let thread = Thread { [self] in
            let engine = MediaEngine(config: config, startNanos: start, sinks: sinks, pages: w) { cont.yield($0) }
            self.run(engine, pollMicros: UInt32(max(1, pollMillis) * 1000))
        }
        thread.name = "bedrud.media"
        thread.start()
    }

    /// Queues a control message for the media thread.
    public func send(_ control: MediaControl) {
        controls.withLock { $0.append(control) }
    }

    /// The counters as of the media thread's last report (refreshed about once a second).
    public var stats: MediaStats { latestStats.withLock { $0 } }

    /// Finishes every file at this instant, drains the writer and ends both threads.
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

    private func run(_ engine: MediaEngine, pollMicros: UInt32) {
        var lastStats: UInt64 = 0
        while true {
            let now = MonotonicClock.nanos()
            let pending = controls.withLock { list -> [MediaControl] in
                if list.isEmpty { return [] }
                defer { list.removeAll(keepingCapacity: true) }
                return list
            }
            for c in pending { engine.apply(c, now: now) }
            if stopRequested.load(ordering: .acquiring) {
                engine.process(now: now)
                engine.finish(now: now)
                latestStats.withLock { $0 = engine.stats() }
                break
            }
            let taken = engine.process(now: now)
            if now &- lastStats >= 1_000_000_000 {
                var s = engine.stats()
                s.pageBytesWritten = writer.bytesWritten
                latestStats.withLock { $0 = s }
                lastStats = now
                if writer.droppedPages > 0 {
                    continuation.yield(.warning("\(writer.droppedPages) recording pages were dropped because the disk fell behind."))
                }
            }
            if taken == 0 { usleep(pollMicros) }
        }
        writer.finish()
        if writer.failedOperations > 0 {
            continuation.yield(.warning("\(writer.failedOperations) file operations failed; see the log."))
        }
        continuation.finish()
        let waiters = stopped.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.done = true
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for w in waiters { w.resume() }
    }
}

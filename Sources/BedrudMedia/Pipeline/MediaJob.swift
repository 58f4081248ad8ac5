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
            var s = engine.stats(levels: true)
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

import BedrudProtocol
import BedrudRuntime

/// One writer thread shared by the page writers of several pipelines (one process
/// recording several rooms, ``MediaThreadPool``): a ``TurnThread`` over the writers.
/// Each writer keeps its own queue, files, fsync policy and failure accounting; the
/// thread takes turns between them, at most `budget` entries per writer per turn, so a
/// busy room cannot hold back the others' pages. A writer stopped at its budget makes
/// the next turn start at once (there is no pause between turns while pages are
/// queued); otherwise the thread sleeps on one ``WakeSignal`` that every attached
/// writer's producer notifies, until the earliest fsync or retry of its writers.
///
/// Thread contract: `attach` (via ``ThreadedPageWriter/init``) and `shutdown` from any
/// thread; the writers' own methods as documented there.
public final class PageWriterThread: Sendable {
    /// One writer's turns on this thread: at most `budget` entries each.
    private struct WriterTurn: TurnJob {
        let writer: ThreadedPageWriter
        let budget: Int
        func turn(now: UInt64) -> TurnResult { writer.step(budget: budget) }
        var hasWork: Bool { writer.hasWork }
    }
    private let thread: TurnThread<WriterTurn>
    private let budget: Int

    /// - Parameter budget: entries (pages) one writer may write per turn.
    public init(name: String = "bedrud.writer", budget: Int = 64) {
        self.budget = max(1, budget)
        thread = TurnThread(name: name, busyPauseNanos: nil)
    }

    /// What the thread sleeps on: the attached writers' producers notify it.
    var signal: WakeSignal { thread.signal }

    /// Writers currently attached.
    public var writerCount: Int { thread.jobCount }

    func attach(_ writer: ThreadedPageWriter) { thread.attach(WriterTurn(writer: writer, budget: budget)) }

    /// Ends the thread once its writers have finished.
    public func shutdown() { thread.shutdown() }
}

#if canImport(Glibc)
import Glibc
#endif
import BedrudMedia
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Dispatch
import Synchronization

/// Watches the recording's writes and says when a full disk should end the session.
///
/// The writers never skip a failed write: the media writer keeps a few seconds of every
/// stream in memory and marks what does not fit as a `write_error` gap
/// (``PageStreamRecovery``); `events.jsonl` keeps its lines (``TranscriptWriter``). So a
/// disk that is full for a moment (another program's file deleted) costs at most a gap.
/// A disk that stays full for ``stopAfterSeconds`` ends the session: the session frees
/// its ``DiskReserve``, finishes every file it can, and exits with ``ExitCode/diskLow`` (15).
///
/// The decision is this one rule, kept apart from the I/O: ``decide(failingForSeconds:)``.
/// Thread-safe: polled by the session's ticker, read when the run ends.
final class DiskFullWatch: Sendable {
    /// How long writes may keep failing before the session stops.
    static let stopAfterSeconds: Double = 10
    let directory: String
    private let tripped = Mutex<(message: String?, errno: Int32)>((nil, 0))

    init(directory: String) { self.directory = directory }

    /// The rule: stop once writes have been failing for `stopAfterSeconds` without a success.
    static func decide(failingForSeconds: Double?) -> Bool {
        guard let s = failingForSeconds else { return false }
        return s >= stopAfterSeconds
    }

    /// Checks the writers now; returns the stop message the first time the rule says stop.
    func check(pipeline: MediaPipeline, transcript: TranscriptWriter?, now: UInt64 = MonotonicClock.nanos()) -> String? {
        let since = [pipeline.writeFailingSinceNanos, transcript?.failingSinceNanos].compactMap { $0 }.min()
        let seconds = since.map { Double(now &- $0) / 1e9 }
        guard Self.decide(failingForSeconds: seconds) else { return nil }
        let e = pipeline.lastWriteErrno != 0 ? pipeline.lastWriteErrno : ENOSPC
        return tripped.withLock { t in
            guard t.message == nil else { return nil }
            t.message = "\(String(cString: strerror(e))) in \(directory); stopped recording after \(Int(Self.stopAfterSeconds)) s of failed writes"
            t.errno = e
            return t.message
        }
    }

    /// The stop message, once the watch has tripped.
    var message: String? { tripped.withLock { $0.message } }

    /// Whether the writes failed for want of space (ENOSPC, EDQUOT) rather than another error.
    var noSpace: Bool { tripped.withLock { $0.errno == ENOSPC || $0.errno == EDQUOT } }

    /// What `summary.json` says about writing (`storage`).
    func summary(pipeline: MediaPipeline, transcript: TranscriptWriter?) -> Nullable<SessionSummary.Storage> {
        let t = tripped.withLock { $0 }
        return Nullable(SessionSummary.Storage(
            diskFull: t.message != nil && (t.errno == ENOSPC || t.errno == EDQUOT),
            error: Nullable(t.message.map { _ in String(cString: strerror(t.errno)) }),
            pagesDropped: pipeline.pagesDroppedForWriteErrors, unfinishedFiles: pipeline.unfinishedFiles,
            eventsLost: transcript?.droppedLines ?? 0))
    }

    /// The exit line: what happened and what was left behind.
    func finalMessage(pipeline: MediaPipeline) -> String? {
        guard let detail = message else { return nil }
        let m = (noSpace ? "the disk is full: " : "a recording write failed: ") + detail
        let left = pipeline.unfinishedFiles
        return m + (left > 0 ? "; \(left) file(s) could not be finished and stay as .part (run: bedrud-bot repair \(directory))"
                             : "; every file was finished")
    }
}

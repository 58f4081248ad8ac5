#if canImport(Glibc)
import Glibc
#endif
import BedrudMedia
import BedrudProtocol
import Foundation
import Synchronization

/// Watches the recording's writes and says when a full disk should end the session.
///
/// The writers never skip a failed write: the media writer keeps a few seconds of every
/// stream in memory and marks what does not fit as a `write_error` gap
/// (``PageStreamRecovery``); `events.jsonl` keeps its lines (``TranscriptWriter``). So a
/// disk that is full for a moment (another program's file deleted) costs at most a gap.
/// A disk that stays full for ``stopAfterSeconds`` ends the session: the session frees
/// its ``DiskReserve``, finishes every file it can, and exits with ``ExitCode/diskFull``.
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
            let what = e == ENOSPC || e == EDQUOT ? "the disk is full" : "writing failed"
            t.message = "\(what) (\(String(cString: strerror(e)))) in \(directory): stopped recording after \(Int(Self.stopAfterSeconds)) s of failed writes"
            t.errno = e
            return t.message
        }
    }

    /// The stop message, once the watch has tripped.
    var message: String? { tripped.withLock { $0.message } }

    /// What `summary.json` says about writing (`storage`).
    func summary(pipeline: MediaPipeline, transcript: TranscriptWriter?) -> [String: Any] {
        let t = tripped.withLock { $0 }
        return [
            "disk_full": t.message != nil,
            "error": t.message.map { _ in String(cString: strerror(t.errno)) } ?? NSNull(),
            "pages_dropped": pipeline.pagesDroppedForWriteErrors,
            "unfinished_files": pipeline.unfinishedFiles,
            "events_lost": transcript?.droppedLines ?? 0,
        ]
    }

    /// The exit line's detail: what was left behind.
    func finalMessage(pipeline: MediaPipeline) -> String? {
        guard let m = message else { return nil }
        let left = pipeline.unfinishedFiles
        return m + (left > 0 ? "; \(left) file(s) could not be finished and stay as .part (run: bedrud-bot repair \(directory))"
                             : "; every file was finished")
    }
}

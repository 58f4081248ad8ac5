import BedrudProtocol
import BedrudRuntime
import Foundation
import Synchronization
import Testing
import TestSupport

@testable import BedrudMedia

/// The loop that media threads and shared writer threads run (``TurnThread``), driven by
/// scripted jobs: how it sleeps after busy and idle turns, when jobs leave it, when it ends.
@Suite struct TurnThreadTests {
    /// A job whose turn `n` returns `script(n, now)`, and which records when each turn came.
    final class ScriptedJob: TurnJob {
        private let script: @Sendable (_ turn: Int, _ now: UInt64) -> TurnResult
        private let times = Mutex<[UInt64]>([])
        /// Notified after every turn; the test thread parks on it.
        let turned = WakeSignal()
        /// What `hasWork` answers.
        let work = Atomic<Bool>(false)

        init(_ script: @escaping @Sendable (_ turn: Int, _ now: UInt64) -> TurnResult) { self.script = script }

        func turn(now: UInt64) -> TurnResult {
            let n = times.withLock { t -> Int in
                t.append(now)
                return t.count - 1
            }
            let result = script(n, now)
            turned.notify()
            return result
        }

        var hasWork: Bool { work.load(ordering: .acquiring) }

        /// The `now` of every turn so far.
        var turnTimes: [UInt64] { times.withLock { $0 } }

        /// True once `n` turns have come, waiting up to 5 s.
        func waitForTurns(_ n: Int) -> Bool {
            let deadline = MonotonicClock.nanos() + 5_000_000_000
            while turnTimes.count < n {
                if MonotonicClock.nanos() >= deadline { return false }
                turned.park(untilNanos: deadline) { turnTimes.count >= n }
            }
            return true
        }
    }

    static func gaps(_ times: [UInt64]) -> [UInt64] { zip(times.dropFirst(), times).map { $0 - $1 } }

    /// True while a thread named `name` runs in this process.
    static func threadRuns(named name: String) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.contains { id in
            (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)) == name + "\n"
        }
    }

    @Test func aBusyJobSleepsThePauseBetweenTurns() {
        let thread = TurnThread<ScriptedJob>(name: "test.turn.busy", busyPauseNanos: 20_000_000)
        defer { thread.shutdown() }
        let job = ScriptedJob { n, _ in n < 4 ? .busy : .finished }
        thread.attach(job)
        #expect(job.waitForTurns(5))
        let gaps = Self.gaps(job.turnTimes)
        #expect(gaps.count == 4)
        #expect(gaps.allSatisfy { $0 >= 20_000_000 }, "gaps between busy turns: \(gaps) ns")
    }

    @Test func withoutAPauseABusyJobIsTurnedAgainAtOnce() {
        let thread = TurnThread<ScriptedJob>(name: "test.turn.drain", busyPauseNanos: nil)
        defer { thread.shutdown() }
        let job = ScriptedJob { n, _ in n < 200 ? .busy : .finished }
        thread.attach(job)
        #expect(job.waitForTurns(201))
        // A pause (the media thread's is 20 ms) or a park would show in every gap; a
        // preempted thread only in a few. 5 ms: far from any pause, safe on a loaded host.
        let median = Self.gaps(job.turnTimes).sorted()[100]
        #expect(median < 5_000_000, "median gap between busy turns: \(median) ns")
    }

    @Test func anIdleJobIsTurnedAgainAtItsDueTime() {
        let thread = TurnThread<ScriptedJob>(name: "test.turn.idle", busyPauseNanos: 20_000_000)
        defer { thread.shutdown() }
        let job = ScriptedJob { n, now in n < 5 ? .idle(until: now + 30_000_000) : .finished }
        thread.attach(job)
        // Nothing notifies the thread after the attach: only the due times wake it. A
        // notify that lands while the thread is about to park (the attach's) may end one
        // park early (`WakeSignal`: a spurious turn), so one short gap is allowed.
        #expect(job.waitForTurns(5))
        let gaps = Self.gaps(job.turnTimes)
        #expect(gaps.filter { $0 < 30_000_000 }.count <= 1, "gaps between idle turns: \(gaps) ns")
    }

    @Test func finishedJobsLeaveTheCountAndTheOthersGoOn() async throws {
        let thread = TurnThread<ScriptedJob>(name: "test.turn.count", busyPauseNanos: nil)
        defer { thread.shutdown() }
        let done = DoneFlag()
        let short = ScriptedJob { _, _ in done.value.load(ordering: .acquiring) ? .finished : .idle(until: nil) }
        let long = ScriptedJob { _, now in .idle(until: now + 5_000_000) }
        thread.attach(short)
        thread.attach(long)
        #expect(thread.jobCount == 2)
        #expect(short.waitForTurns(1))
        // The short job finishes on its next turn, which comes with the long job's.
        done.value.store(true, ordering: .releasing)
        try await waitUntil("one job left", timeout: 5, every: 0.002) { thread.jobCount == 1 }
        let turnsOfShort = short.turnTimes.count
        let before = long.turnTimes.count
        #expect(long.waitForTurns(before + 3), "the other job is still turned")
        #expect(short.turnTimes.count == turnsOfShort, "a finished job is never turned again")
    }

    @Test func shutdownEndsTheThreadOnlyAfterItsLastJob() async throws {
        let name = "test.turn.end"
        let thread = TurnThread<ScriptedJob>(name: name, busyPauseNanos: nil)
        let done = DoneFlag()
        let job = ScriptedJob { _, _ in done.value.load(ordering: .acquiring) ? .finished : .idle(until: nil) }
        // As a pipeline with a media thread of its own does: shutdown right after the attach.
        thread.attach(job)
        thread.shutdown()
        #expect(job.waitForTurns(1), "a job attached before shutdown is run")
        #expect(thread.jobCount == 1)
        #expect(Self.threadRuns(named: name))
        // Parked with no due time: only a producer's notify with work wakes it.
        done.value.store(true, ordering: .releasing)
        job.work.store(true, ordering: .releasing)
        thread.signal.notify()
        #expect(job.waitForTurns(2))
        try await waitUntil("the thread ended", timeout: 5, every: 0.002) { thread.jobCount == 0 && !Self.threadRuns(named: name) }
    }
}

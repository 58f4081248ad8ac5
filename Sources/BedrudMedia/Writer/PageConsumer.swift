#if canImport(Glibc)
import Glibc
#endif
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Synchronization

/// Takes finished Ogg pages from the media thread. One stream id per output file.
///
/// Thread contract: `open`, `writePage` and `close` are called only by the media thread,
/// in stream order. `writePage` must not block for long.
public protocol PageConsumer: AnyObject {
    func open(_ streamID: Int, sink: PageSink)
    func writePage(_ streamID: Int, header: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer)
    func close(_ streamID: Int, clean: Bool)
}

/// Writes pages straight into their sinks on the calling thread (tests, tools, the
/// benchmark's single-core figures). Failed writes are counted, never thrown.
public final class DirectPageWriter: PageConsumer {
    private var sinks: [Int: PageSink] = [:]
    public private(set) var failedWrites = 0
    public private(set) var bytesWritten = 0
    public init() {}
    public func open(_ streamID: Int, sink: PageSink) { sinks[streamID] = sink }
    public func writePage(_ streamID: Int, header: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) {
        guard let s = sinks[streamID] else { return }
        do {
            try s.write(header)
            try s.write(body)
            bytesWritten += header.count + body.count
        } catch { failedWrites += 1 }
    }
    public func close(_ streamID: Int, clean: Bool) {
        guard let s = sinks.removeValue(forKey: streamID) else { return }
        do { try s.close(clean: clean) } catch { failedWrites += 1 }
    }
}

/// The writer thread: a bounded, preallocated single-producer single-consumer byte queue
/// of pages from the media thread, drained by a dedicated thread into the sinks, with an
/// fsync policy. Queueing a page never allocates; a full queue makes the media thread
/// wait up to `maxWaitNanos` and then drops the page and counts it.
///
/// The writer thread sleeps on a ``WakeSignal`` until pages are waiting (the media
/// thread calls `notifyIfPending` once per turn, so one turn's pages cost one wake-up)
/// or its next fsync is due; a producer waiting for room sleeps on another signal that
/// the writer notifies when it frees space; `finish` waits on a third.
public final class ThreadedPageWriter: PageConsumer, @unchecked Sendable {
    // @unchecked: `buffer` bytes are written by the producer before `tail` is published
    // (release) and read by the writer thread after it loads `tail` (acquire); `head`
    // returns space the same way. `sinks` is behind a Mutex. `loop` is only touched by the
    // writer thread (its own, or the one shared ``PageWriterThread`` it is attached to).
    // Other fields are immutable.
    private let capacity: Int
    private let buffer: UnsafeMutableRawPointer
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let finishedFlag = Atomic<Bool>(false)
    private let dropped = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)
    private let written = Atomic<Int>(0)
    // Write failures (see ``PageStreamRecovery``): since when a stream has been failing
    // (0 = none), the last errno, files left unfinished, and the reports for the owner.
    private let failingSince = Atomic<UInt64>(0)
    private let lastErrno = Atomic<Int32>(0)
    private let unfinished = Atomic<Int>(0)
    private let droppedForDisk = Atomic<Int>(0)
    private let reportCount = Atomic<Int>(0)
    private let reportList = Mutex<[(streamID: Int, report: PageStreamRecovery.Report)]>([])
    private let retryRequested = Atomic<Bool>(false)
    private let recoveryLimits: PageStreamRecovery.Limits
    private let retryIntervalNanos: UInt64
    /// Sinks opened and not yet taken by the writer thread, in order per stream id: a
    /// rotated stream closes and reopens its id while the old file's pages may still be
    /// queued, so the new sink waits behind the old one.
    private let sinks = Mutex<[Int: [SinkHandOff]]>([:])
    /// Pages waiting (woken by the producer), room freed (woken by the writer), done.
    private let pagesWaiting: WakeSignal
    private let roomFreed = WakeSignal()
    private let finishedSignal = WakeSignal()
    private let syncIntervalNanos: UInt64
    private let maxWaitNanos: UInt64
    private let log: Logger

    private enum Kind: UInt32 { case page = 1, close = 2, closeClean = 3, skip = 4 }
    private static let entryHeader = 16
    /// An empty queue whose next entry would start this far in starts at the front instead.
    static let rewindOffset = 64 << 10
    /// The furthest byte of the buffer an entry has used (what of it can be resident).
    private let extent = Atomic<Int>(0)

    /// - Parameters:
    ///   - capacityBytes: queue size; rounded up to a multiple of 16.
    ///   - syncIntervalSeconds: fsync every open file this often (0 = only at close).
    ///   - recoveryLimits: how much of a stream whose writes fail is kept in memory.
    ///   - retryIntervalMillis: how often failed writes are tried again.
    ///   - thread: a writer thread shared with other writers (one process recording several
    ///     rooms); nil = a thread of its own, ended by `finish`.
    public init(capacityBytes: Int = 4 << 20, syncIntervalSeconds: Double = 5, maxWaitMillis: Int = 500,
                recoveryLimits: PageStreamRecovery.Limits = .init(), retryIntervalMillis: Int = 250, thread shared: PageWriterThread? = nil,
                logRoom: String? = nil) {
        log = Logger("media.writer", room: logRoom)
        self.recoveryLimits = recoveryLimits
        retryIntervalNanos = UInt64(max(1, retryIntervalMillis)) * 1_000_000
        capacity = max(1 << 16, (capacityBytes + 15) & ~15)
        buffer = .allocate(byteCount: capacity, alignment: 16)
        syncIntervalNanos = UInt64(max(0, syncIntervalSeconds) * 1e9)
        maxWaitNanos = UInt64(maxWaitMillis) * 1_000_000
        loop = LoopState(failLog: RateLimitedLog(log))
        // A shared thread sleeps on one signal for all its writers: producers wake it.
        pagesWaiting = shared?.signal ?? WakeSignal()
        if let shared {
            shared.attach(self)
            return
        }
        OSThread.start(name: "bedrud.media.writer") { [unowned self] in self.run() }
    }

    deinit { buffer.deallocate() }

    /// Pages dropped because the queue stayed full.
    public var droppedPages: Int { dropped.load(ordering: .relaxed) }
    /// Sink writes, syncs or closes that failed.
    public var failedOperations: Int { failed.load(ordering: .relaxed) }
    public var bytesWritten: Int { written.load(ordering: .relaxed) }
    /// How much of the queue's buffer has been used so far, from its front: the most of
    /// it that can be resident. Stays near the largest burst while the writer keeps up.
    public var usedExtentBytes: Int { extent.load(ordering: .relaxed) }

    /// Monotonic time since which some stream's writes have been failing without a
    /// success in between; nil while every stream writes normally.
    public var failingSinceNanos: UInt64? {
        let v = failingSince.load(ordering: .acquiring)
        return v == 0 ? nil : v
    }
    /// errno of the last failed write (ENOSPC for a full disk).
    public var lastFailureErrno: Int32 { lastErrno.load(ordering: .relaxed) }
    /// Files that should have been finished but were closed unclean (left as `*.part`).
    public var unfinishedFiles: Int { unfinished.load(ordering: .relaxed) }
    /// Pages dropped because a stream failed for longer than its bound (their span is a gap).
    public var pagesDroppedForWriteErrors: Int { droppedForDisk.load(ordering: .relaxed) }

    /// Takes the streams' reports (failing, recovered, gaps) gathered since the last call.
    /// Cheap when there are none (one atomic load), so the media thread may ask every turn.
    public func takeReports() -> [(streamID: Int, report: PageStreamRecovery.Report)] {
        guard reportCount.load(ordering: .acquiring) > 0 else { return [] }
        return reportList.withLock { list in
            defer { list.removeAll(); reportCount.store(0, ordering: .releasing) }
            return list
        }
    }

    /// Asks the writer thread to retry failed writes now (space was freed).
    public func retryNow() {
        retryRequested.store(true, ordering: .releasing)
        pagesWaiting.notify()
    }

    public func open(_ streamID: Int, sink: PageSink) {
        let box = SinkHandOff(sink: sink)
        sinks.withLock { $0[streamID, default: []].append(box) }
    }

    public func writePage(_ streamID: Int, header: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) {
        enqueue(.page, streamID, header, body)
    }

    public func close(_ streamID: Int, clean: Bool) {
        enqueue(clean ? .closeClean : .close, streamID, UnsafeRawBufferPointer(start: nil, count: 0), UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// Drains the queue, closes nothing that was not closed, and ends the thread.
    /// Blocks the caller until the writer thread is done.
    public func finish() {
        stopping.store(true, ordering: .releasing)
        pagesWaiting.notify()
        while !finishedFlag.load(ordering: .acquiring) {
            finishedSignal.park(untilNanos: nil) { finishedFlag.load(ordering: .acquiring) }
        }
    }

    /// Producer: wakes the writer thread if pages are queued. Called once per media turn
    /// rather than per page, so the pages of one turn cost one wake-up.
    public func notifyIfPending() {
        if tail.load(ordering: .relaxed) != head.load(ordering: .relaxed) { pagesWaiting.notify() }
    }

    private func enqueue(_ kind: Kind, _ id: Int, _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) {
        let len = a.count + b.count
        let need = (Self.entryHeader + len + 15) & ~15
        guard need <= capacity / 2 else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        var deadline: UInt64 = 0
        while true {
            let t = tail.load(ordering: .relaxed)
            let h = head.load(ordering: .acquiring)
            let offset = t % capacity
            let toEnd = capacity - offset
            // While the disk keeps up, the writer has taken everything by the time the
            // next page comes. Going back to the front of the buffer then keeps the
            // memory in use to the largest burst: otherwise the offsets walk through the
            // whole buffer and every one of its pages becomes resident in turn (4 MiB per
            // room after a few minutes, whatever the room's size). A stalled disk still
            // gets the whole capacity.
            let rewind = t == h && offset >= Self.rewindOffset && need <= offset
            let total = need <= toEnd && !rewind ? need : toEnd + need
            if capacity - (t - h) >= total {
                var at = t
                if need > toEnd || rewind {
                    writeHeader(at: offset, kind: .skip, id: 0, length: 0)
                    at += toEnd
                }
                let o = at % capacity
                if o + need > extent.load(ordering: .relaxed) { extent.store(o + need, ordering: .relaxed) }
                writeHeader(at: o, kind: kind, id: id, length: len)
                if let p = a.baseAddress, a.count > 0 { (buffer + o + Self.entryHeader).copyMemory(from: p, byteCount: a.count) }
                if let p = b.baseAddress, b.count > 0 {
                    (buffer + o + Self.entryHeader + a.count).copyMemory(from: p, byteCount: b.count)
                }
                tail.store(at + need, ordering: .releasing)
                return
            }
            let now = MonotonicClock.nanos()
            if deadline == 0 { deadline = now &+ maxWaitNanos }
            if now >= deadline {
                dropped.add(1, ordering: .relaxed)
                return
            }
            // Full: let the writer drain, and sleep until it frees room or the wait ends.
            pagesWaiting.notify()
            roomFreed.park(untilNanos: deadline) { [capacity] in capacity - (tail.load(ordering: .relaxed) - head.load(ordering: .acquiring)) >= total }
        }
    }

    private func writeHeader(at o: Int, kind: Kind, id: Int, length: Int) {
        (buffer + o).storeBytes(of: kind.rawValue, as: UInt32.self)
        (buffer + o + 4).storeBytes(of: UInt32(truncatingIfNeeded: id), as: UInt32.self)
        (buffer + o + 8).storeBytes(of: Int64(length), as: Int64.self)
    }

    /// The writer thread's own state (only the writer thread touches it).
    private struct LoopState {
        var open: [Int: PageStreamRecovery] = [:]
        var dirty = Set<Int>()
        var failing = Set<Int>()
        var lastSync = MonotonicClock.nanos()
        var lastRetry: UInt64 = 0
        var failLog: RateLimitedLog
    }
    private var loop: LoopState

    /// A thread of its own: one writer, parked on its signal while there is nothing to do.
    private func run() {
        while true {
            switch step(budget: .max) {
            case .finished: return
            case .busy: continue
            case .idle(let due): pagesWaiting.park(untilNanos: due) { hasWork }
            }
        }
    }

    /// True when a step now would find something to do (asked before parking).
    var hasWork: Bool {
        tail.load(ordering: .acquiring) != head.load(ordering: .relaxed) || stopping.load(ordering: .acquiring)
            || retryRequested.load(ordering: .acquiring)
    }

    /// Gathers a stream's reports and keeps `failing` and `failingSince` current.
    private func account(_ id: Int, _ r: PageStreamRecovery, now: UInt64) {
        if r.isFailing {
            if loop.failing.isEmpty { failingSince.store(now, ordering: .releasing) }
            loop.failing.insert(id)
            lastErrno.store(r.lastErrno, ordering: .relaxed)
        } else if loop.failing.remove(id) != nil, loop.failing.isEmpty {
            failingSince.store(0, ordering: .releasing)
        }
        let reports = r.takeReports()
        guard !reports.isEmpty else { return }
        for rep in reports {
            switch rep {
            case .failing: loop.failLog.log(.warning, now: now, "cannot write recording pages (\(String(cString: strerror(r.lastErrno)))); keeping them in memory")
            case .recovered: log.info("recording pages are being written again")
            case .gap(let a, let b): log.warning("\(Double(b - a) / 48000) s of a recording could not be written; marked as a gap")
            }
        }
        reportList.withLock { list in for rep in reports { list.append((id, rep)) } }
        reportCount.add(reports.count, ordering: .releasing)
    }

    private func retryFailing(now: UInt64) {
        loop.lastRetry = now
        for id in loop.failing {
            guard let r = loop.open[id] else { continue }
            let before = r.bytesWritten
            r.retry()
            written.add(r.bytesWritten - before, ordering: .relaxed)
            account(id, r, now: now)
        }
    }

    /// One turn of the writer: writes up to `budget` queued entries (a thread shared by
    /// several writers takes turns, ``PageWriterThread``), fsyncs and retries when due.
    /// `.idle` says until when there is nothing to do; `.finished` comes once, after
    /// `finish` and the last queued entry.
    func step(budget: Int) -> TurnResult {
        var handled = 0
        while true {
            let h = head.load(ordering: .relaxed)
            let t = tail.load(ordering: .acquiring)
            let now0 = MonotonicClock.nanos()
            if !loop.failing.isEmpty, retryRequested.exchange(false, ordering: .acquiring) || now0 &- loop.lastRetry >= retryIntervalNanos {
                retryFailing(now: now0)
            }
            if h == t {
                if stopping.load(ordering: .acquiring) && head.load(ordering: .relaxed) == tail.load(ordering: .acquiring) {
                    finishedFlag.store(true, ordering: .releasing)
                    finishedSignal.notify()
                    return .finished
                }
                let now = MonotonicClock.nanos()
                if syncIntervalNanos > 0, now - loop.lastSync >= syncIntervalNanos, !loop.dirty.isEmpty {
                    for id in loop.dirty where !loop.failing.contains(id) {
                        do { try loop.open[id]?.sink.sync() } catch { failed.add(1, ordering: .relaxed) }
                    }
                    loop.dirty.removeAll(keepingCapacity: true)
                    loop.lastSync = now
                }
                // Asleep until pages are queued, the writer is told to finish, the next
                // fsync, or the next retry of failed writes.
                var due: UInt64? = syncIntervalNanos > 0 && !loop.dirty.isEmpty ? loop.lastSync &+ syncIntervalNanos : nil
                if !loop.failing.isEmpty { due = min(due ?? .max, loop.lastRetry &+ retryIntervalNanos) }
                return .idle(until: due)
            }
            if handled >= budget { return .busy }
            handled += 1
            let o = h % capacity
            let kind = Kind(rawValue: (buffer + o).load(as: UInt32.self)) ?? .skip
            if kind == .skip {
                head.store(h + (capacity - o), ordering: .releasing)
                roomFreed.notify()
                continue
            }
            let id = Int((buffer + o + 4).load(as: UInt32.self))
            let len = Int((buffer + o + 8).load(as: Int64.self))
            if loop.open[id] == nil, let s = sinks.withLock({ list -> SinkHandOff? in
                guard var queue = list[id], !queue.isEmpty else { return nil }
                let first = queue.removeFirst()
                list[id] = queue.isEmpty ? nil : queue
                return first
            }) { loop.open[id] = PageStreamRecovery(sink: s.sink, limits: recoveryLimits) }
            switch kind {
            case .page:
                if let r = loop.open[id] {
                    let wasFailing = r.isFailing
                    let before = (r.bytesWritten, r.pagesDropped)
                    r.page(UnsafeMutableRawBufferPointer(start: buffer + o + Self.entryHeader, count: len))
                    written.add(r.bytesWritten - before.0, ordering: .relaxed)
                    if r.pagesDropped != before.1 { droppedForDisk.add(r.pagesDropped - before.1, ordering: .relaxed) }
                    if r.isFailing {
                        if !wasFailing { failed.add(1, ordering: .relaxed) }
                        account(id, r, now: MonotonicClock.nanos())
                    } else {
                        loop.dirty.insert(id)
                    }
                }
            case .close, .closeClean:
                if let r = loop.open.removeValue(forKey: id) {
                    let before = r.bytesWritten
                    do {
                        let finished = try r.close(clean: kind == .closeClean)
                        if kind == .closeClean && !finished {
                            unfinished.add(1, ordering: .relaxed)
                            failed.add(1, ordering: .relaxed)
                            log.warning("a recording file could not be finished (\(String(cString: strerror(r.lastErrno)))); it stays as .part for repair")
                        }
                    } catch {
                        if kind == .closeClean { unfinished.add(1, ordering: .relaxed) }
                        failed.add(1, ordering: .relaxed)
                        loop.failLog.log(.warning, now: MonotonicClock.nanos(), "cannot finish recording file: \(error)")
                    }
                    written.add(r.bytesWritten - before, ordering: .relaxed)
                    let reports = r.takeReports().filter { if case .gap = $0 { true } else { false } }
                    if !reports.isEmpty {
                        reportList.withLock { list in for rep in reports { list.append((id, rep)) } }
                        reportCount.add(reports.count, ordering: .releasing)
                    }
                    if loop.failing.remove(id) != nil, loop.failing.isEmpty { failingSince.store(0, ordering: .releasing) }
                }
                loop.dirty.remove(id)
            case .skip: break
            }
            head.store(h + ((Self.entryHeader + len + 15) & ~15), ordering: .releasing)
            roomFreed.notify()
        }
    }
}

/// Carries a sink from the media thread (which creates it) to the writer thread.
// @unchecked: the media thread never touches the sink after `open`; from then on only
// the writer thread calls it, so there is no concurrent access.
private struct SinkHandOff: @unchecked Sendable {
    let sink: PageSink
}

import BedrudProtocol
import BedrudRuntime
import CNice
import Dispatch
import FoundationEssentials
import Synchronization

/// A GLib main loop with its own `GMainContext`, running on a dedicated thread.
///
/// It is the thread of the network data plane: libnice delivers datagrams and signals
/// here, and DTLS, SRTP, RTP parsing and ring pushes happen here. It is also a Swift
/// `SerialExecutor`, so a ``PeerConnection`` actor runs its methods on this thread and
/// can touch the loop-confined transport directly.
///
/// One loop can serve several peer connections. Call ``shutdown()`` after closing them.
public final class GLibLoop: SerialExecutor, @unchecked Sendable {
    // @unchecked: `context` and `loop` are set once; GLib's context/source functions used
    // from other threads (g_source_attach, g_main_loop_quit, g_main_context_is_owner) are
    // documented thread-safe. Everything else runs on the loop thread.
    let context: OpaquePointer
    private let loop: OpaquePointer
    private let finished = Mutex<Bool>(false)
    private let finishedSignal = DispatchSemaphore(value: 0)
    public let name: String
    /// The burst wait's state; touched only on the loop thread (the receive path counts
    /// datagrams into it, the poll function reads it through a thread-specific pointer).
    let burstGate = BurstGate()

    public init(name: String = "bedrud-ice") {
        self.name = name
        context = g_main_context_new()
        g_main_context_set_poll_func(context, burstPoll)
        loop = g_main_loop_new(context, 0)
        let handles = LoopHandles(context: context, loop: loop, owner: self, gate: burstGate)
        OSThread.start(name: name, stackSize: 1 << 20) {
            pthread_setspecific(burstGateKey, Unmanaged.passUnretained(handles.gate).toOpaque())
            g_main_context_push_thread_default(handles.context)
            g_main_loop_run(handles.loop)
            g_main_context_pop_thread_default(handles.context)
            pthread_setspecific(burstGateKey, nil)
            handles.finish()
        }
    }

    deinit {
        g_main_loop_quit(loop)
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }

    /// Stops the loop and waits (up to `timeoutSeconds`) for its thread to exit. Must not be
    /// called from the loop thread itself. Sources still attached are dropped.
    public func shutdown(timeoutSeconds: Double = 5) {
        precondition(!isCurrent, "GLibLoop.shutdown() called on its own thread")
        g_main_loop_quit(loop)
        if finished.withLock({ $0 }) { return }
        // Passed on after waking, so a second caller does not wait out its timeout.
        if finishedSignal.wait(timeout: .now() + max(0, timeoutSeconds)) == .success { finishedSignal.signal() }
    }

    fileprivate func markFinished() {
        finished.withLock { $0 = true }
        finishedSignal.signal()
    }

    /// True on the loop's thread.
    public var isCurrent: Bool { shim_context_is_owner(context) != 0 }

    // MARK: - SerialExecutor

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        post { unowned.runSynchronously(on: executor) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    public func checkIsolated() {
        precondition(isCurrent, "expected to run on GLibLoop \(name)")
    }

    // MARK: - Work and timers

    /// Runs `body` on the loop thread, soon (an idle source; never inline).
    public func post(_ body: @escaping @Sendable () -> Void) {
        let closure = ClosureBox(body)
        closure.published.store(true, ordering: .releasing)
        let box = Unmanaged.passRetained(closure).toOpaque()
        _ = shim_idle_add(context, { ud in
            let b = Unmanaged<ClosureBox>.fromOpaque(ud!).takeUnretainedValue()
            // GLib's context lock orders this already; the atomic makes the hand-off visible
            // to Thread Sanitizer, which cannot see inside GLib.
            _ = b.published.load(ordering: .acquiring)
            b.body()
            return 0  // G_SOURCE_REMOVE
        }, box, { ud in Unmanaged<ClosureBox>.fromOpaque(ud!).release() })
    }

    /// Calls `tick` on the loop thread every `intervalMs` until it returns false or the
    /// returned id is cancelled with ``cancelTimer(_:)``. Not for per-packet use.
    @discardableResult
    public func addTimer(intervalMs: UInt32, _ tick: @escaping () -> Bool) -> UInt32 {
        let box = Unmanaged.passRetained(TimerBox(tick)).toOpaque()
        return shim_timeout_add(context, max(1, intervalMs), { ud in
            Unmanaged<TimerBox>.fromOpaque(ud!).takeUnretainedValue().tick() ? 1 : 0
        }, box, { ud in Unmanaged<TimerBox>.fromOpaque(ud!).release() })
    }

    /// Removes a timer added with ``addTimer(intervalMs:_:)``; harmless if it already ended.
    public func cancelTimer(_ id: UInt32) {
        guard id != 0 else { return }
        shim_source_remove(context, id)
    }
}

extension GLibLoop {
    /// How long the loop waits, once something has woken it, before it handles what is
    /// ready (never past its next timer), while datagrams come often enough for the wait
    /// to gather several (``burstRate``). A room's publishers send in step, every 20 ms;
    /// without the wait every datagram costs the loop a wake-up of its own (poll, GLib's
    /// dispatch, a context switch), and with it one wake-up takes the burst, since libnice
    /// reads a socket until it would block. 16 tracks, 30 s, alternating runs: 3.59–3.66
    /// CPU-s without it, 3.21–3.41 with 5 ms (2.99–3.21 gated by ``burstRate``); an
    /// experimental build gave 2.60–2.68 with 8 ms against 3.26–3.66 without, and 15 ms
    /// was no better than 8. Received media waits in the jitter buffer for 60 ms anyway;
    /// the smoke test's latency includes the wait.
    static let burstWaitMicros: Int64 = 5_000
    /// Datagrams per second from which the loop waits: one track sends 50, and with one or
    /// two there is rarely a second datagram to gather, so the wait would only add a sleep
    /// (and its latency) to every wake-up. Measured, the gate changes nothing at one track
    /// (1.05–1.11 CPU-s per 30 s run against 1.03–1.12 waiting always).
    static let burstRate = 150
}

/// The burst wait's state, one per loop thread: datagrams counted since `windowStart`,
/// and whether the last 100 ms window came at ``GLibLoop/burstRate`` or more.
final class BurstGate: @unchecked Sendable {
    // @unchecked: only the loop's thread reads or writes it.
    var datagrams = 0
    var windowStart: UInt64 = 0
    var waiting = false

    /// Called at each wake-up: closes the window once it is 100 ms old.
    func waitNow(at now: UInt64) -> Bool {
        let age = now &- windowStart
        if age >= 100_000_000 {
            waiting = UInt64(datagrams) * 1_000_000_000 >= UInt64(GLibLoop.burstRate) * age
            datagrams = 0
            windowStart = now
        }
        return waiting
    }
}

private let burstGateKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

/// GLib's poll with ``GLibLoop/burstWaitMicros``: the context's lock is not held here, so
/// other threads keep attaching sources (their wake-up is seen by the second poll).
private let burstPoll: GPollFunc = { fds, n, timeout in
    let ready = g_poll(fds, n, timeout)
    guard ready > 0, let p = pthread_getspecific(burstGateKey),
          Unmanaged<BurstGate>.fromOpaque(p).takeUnretainedValue().waitNow(at: MonotonicClock.nanos()) else { return ready }
    let wait = timeout < 0 ? GLibLoop.burstWaitMicros : min(GLibLoop.burstWaitMicros, Int64(timeout) * 1000)
    guard wait > 0 else { return ready }
    usleep(UInt32(wait))
    return g_poll(fds, n, 0)
}

private final class LoopHandles: @unchecked Sendable {
    // @unchecked: immutable pointers handed to the loop thread once; GLib reference counts them.
    let context: OpaquePointer
    let loop: OpaquePointer
    weak var owner: GLibLoop?
    /// Kept here so it lives as long as the loop's thread.
    let gate: BurstGate

    init(context: OpaquePointer, loop: OpaquePointer, owner: GLibLoop, gate: BurstGate) {
        self.context = context
        self.loop = loop
        self.owner = owner
        self.gate = gate
        g_main_context_ref(context)
        g_main_loop_ref(loop)
    }

    func finish() {
        owner?.markFinished()
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }
}

private final class ClosureBox {
    let body: @Sendable () -> Void
    let published = Atomic<Bool>(false)
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

private final class TimerBox {
    let tick: () -> Bool
    init(_ tick: @escaping () -> Bool) { self.tick = tick }
}

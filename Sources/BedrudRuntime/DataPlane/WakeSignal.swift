#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// How a data-plane consumer thread sleeps without polling: it parks on its signal with
/// a deadline, and producers `notify` after publishing work.
///
/// `notify` costs one fence and one load while the consumer is running; only a consumer
/// that announced it is parked costs the producer a syscall (an eventfd write), and only
/// the first producer to see it parked pays it (a futex wake through a condition
/// variable on the monotonic clock). So a burst of packets wakes the consumer
/// once, and a thread that has nothing to do sleeps until its own deadline.
///
/// The protocol (Dekker-style, both sides fenced): the consumer stores `parked = true`,
/// fences, then re-checks for work; a producer publishes its work, fences, then loads
/// `parked`. At least one of them sees the other, so a notification is never lost; a
/// spurious wake-up is possible and harmless.
///
/// Thread contract: one consumer thread calls `park`; any threads call `notify`.
public final class WakeSignal: @unchecked Sendable {
    // @unchecked: the pthread objects live at fixed heap addresses (they must never move)
    // and are thread-safe by contract; `rung` is only read or written with `mutex` held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private let rung: UnsafeMutablePointer<Bool>
    private let parked = Atomic<Bool>(false)
    private let wakes = Atomic<Int>(0)

    public init() {
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        rung = .allocate(capacity: 1)
        rung.initialize(to: false)
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
        rung.deallocate()
    }

    /// Syscalls producers made to wake the consumer (tests and benchmarks).
    public var wakeCount: Int { wakes.load(ordering: .relaxed) }

    /// Producer: call after the work is published (a release store). Wakes the consumer
    /// if, and only if, it is parked.
    @inline(__always)
    public func notify() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if parked.load(ordering: .relaxed) { wake() }
    }

    @inline(never)
    private func wake() {
        guard parked.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wakes.add(1, ordering: .relaxed)
        pthread_mutex_lock(mutex)
        rung.pointee = true
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Consumer: sleeps until a producer notifies, or until the monotonic time `deadline`
    /// (nil = no deadline). `hasWork` is asked after the park is announced: if it says
    /// yes, `park` returns at once, so work published just before the park is not missed.
    public func park(untilNanos deadline: UInt64?, hasWork: () -> Bool) {
        parked.store(true, ordering: .relaxed)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if hasWork() {
            parked.store(false, ordering: .relaxed)
            return
        }
        pthread_mutex_lock(mutex)
        if let deadline {
            var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            while !rung.pointee {
                if pthread_cond_timedwait(cond, mutex, &ts) == ETIMEDOUT { break }
            }
        } else {
            while !rung.pointee { pthread_cond_wait(cond, mutex) }
        }
        // A wake-up that lands after a timeout stays rung and ends the next park early:
        // a spurious turn, never a lost one.
        rung.pointee = false
        pthread_mutex_unlock(mutex)
        parked.store(false, ordering: .relaxed)
    }

    /// Consumer: sleeps for `nanos` without announcing a park, so producers do not pay a
    /// syscall meanwhile (batching while work flows steadily).
    public static func sleep(nanos: UInt64) {
        var ts = timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
        var rem = timespec()
        while nanosleep(&ts, &rem) != 0 && errno == EINTR { ts = rem }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex, for state that is not on the media path and should stay visible to
/// Thread Sanitizer (which does not see the futex inside `Synchronization.Mutex`).
/// It stands in for Foundation's `NSLock` (see ``OSThread`` for why the bot avoids
/// Foundation). Not recursive.
public final class PosixLock: @unchecked Sendable {
    // @unchecked: the mutex lives at a fixed heap address and is thread-safe by contract.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

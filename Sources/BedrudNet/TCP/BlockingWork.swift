import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Synchronization

/// Runs blocking socket work on its own thread so it never blocks Swift's cooperative
/// pool (two cores here), and turns task cancellation into a `shutdown()` of whatever
/// stream the work is using, which wakes it at once.
enum BlockingWork {
    static func run<T: Sendable>(
        name: String, slot: CancellationSlot, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (cont: CheckedContinuation<T, any Error>) in
                OSThread.start(name: name) {
                    cont.resume(with: Result { try work() })
                }
            }
        } onCancel: {
            slot.cancel()
        }
    }
}

/// Lets a cancelling task reach the stream a blocking thread is currently using.
final class CancellationSlot: Sendable {
    private let state = Mutex<(cancelled: Bool, stream: (any ByteStream)?)>((false, nil))

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Registers the stream in use; shuts it down at once if already cancelled.
    func use(_ stream: (any ByteStream)?) {
        let shutNow = state.withLock { s -> Bool in
            s.stream = stream
            return s.cancelled
        }
        if shutNow { stream?.shutdown() }
    }

    func cancel() {
        let stream = state.withLock { s -> (any ByteStream)? in
            s.cancelled = true
            return s.stream
        }
        stream?.shutdown()
    }
}

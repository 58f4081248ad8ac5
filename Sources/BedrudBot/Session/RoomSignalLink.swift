import Synchronization

/// How a room's run gets SIGINT, SIGTERM and SIGHUP when one process records several
/// rooms: the process has one ``SignalWatcher`` (so a second signal still exits at once),
/// and ``MultiRoomRun`` forwards each signal to every room's run through its link.
/// A single `join` has no link and watches the signals itself, as before.
///
/// Thread contract: any thread. The handlers are called on the watcher's dispatch queue.
final class RoomSignalLink: Sendable {
    struct Handlers: Sendable {
        var onSignal: @Sendable (Int32) -> Void
        var onHangup: (@Sendable () -> Void)?
    }
    private let handlers = Mutex<Handlers?>(nil)
    /// Told when the run attached (it can take signals now).
    private let onAttach = Mutex<(@Sendable () -> Void)?>(nil)

    init() {}

    /// Sets what to call when the run attaches (before the run starts).
    func whenAttached(_ f: @escaping @Sendable () -> Void) { onAttach.withLock { $0 = f } }

    /// The room's run is ready: signals reach it from now on (one that came before is
    /// delivered at once, through ``MultiRoomRun``).
    func attach(_ h: Handlers) -> any SignalSubscription {
        handlers.withLock { $0 = h }
        onAttach.withLock { $0 }?()
        return Detach(link: self)
    }

    func signal(_ sig: Int32) { handlers.withLock { $0 }?.onSignal(sig) }
    func hangup() { handlers.withLock { $0 }?.onHangup?() }

    private struct Detach: SignalSubscription {
        let link: RoomSignalLink
        func cancel() { link.handlers.withLock { $0 = nil } }
        func filesFinished() {}
    }
}

/// What a room's run holds while it takes signals: its own watcher or a link's attachment.
protocol SignalSubscription: Sendable {
    func cancel()
    /// The run's files are finished; a second signal must not change its outcome. A
    /// room of several in one process leaves that to the process's watcher.
    func filesFinished()
}

extension SignalWatcher: SignalSubscription {}

enum RoomSignals {
    /// Watches the signals for one room's run: through `link` when the process runs
    /// several rooms, else with a ``SignalWatcher`` of its own.
    static func watch(_ link: RoomSignalLink?, onSignal: @escaping @Sendable (Int32) -> Void,
                      onHangup: (@Sendable () -> Void)?) -> any SignalSubscription {
        guard let link else { return SignalWatcher(onSignal: onSignal, onHangup: onHangup) }
        return link.attach(.init(onSignal: onSignal, onHangup: onHangup))
    }
}

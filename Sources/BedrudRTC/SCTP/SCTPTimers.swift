import BedrudProtocol
import BedrudRuntime
import CUsrsctp
import FoundationEssentials

/// How often usrsctp's timers are driven on one loop, decided from the association
/// activity seen there: every `busyIntervalMs` while packets come and go (retransmission,
/// delayed-SACK and handshake timers then run within that much of their due time), and
/// every `quietIntervalMs` once nothing has moved for `quietAfterNanos` (what is left then
/// is the 30 s heartbeat and a retransmission timer of at least RTO.min = 1 s, which
/// tolerate that lateness). A pure value; the ``SCTPTimerDriver`` performs what it says.
struct SCTPTimerCadence: Sendable, Equatable {
    struct Configuration: Sendable, Equatable {
        var busyIntervalMs: UInt32 = 20
        var quietIntervalMs: UInt32 = 500
        var quietAfterNanos: UInt64 = 2_000_000_000
    }

    enum Event: Sendable, Equatable {
        /// An SCTP packet went in or out, or a message was sent, at `nowNanos` (monotonic).
        case activity(nowNanos: UInt64)
        /// The driver's timer fired at `nowNanos`.
        case tick(nowNanos: UInt64)
    }

    enum Action: Sendable, Equatable {
        /// Replace the timer by one of this period.
        case rearm(intervalMs: UInt32)
    }

    let configuration: Configuration
    /// The period of the running timer.
    private(set) var intervalMs: UInt32
    private var lastActivityNanos: UInt64

    /// Starts busy: an association being set up has its INIT and cookie timers running.
    init(nowNanos: UInt64, configuration: Configuration = .init()) {
        self.configuration = configuration
        intervalMs = configuration.busyIntervalMs
        lastActivityNanos = nowNanos
    }

    var isQuiet: Bool { intervalMs != configuration.busyIntervalMs }

    mutating func handle(_ event: Event) -> Action? {
        switch event {
        case .activity(let now):
            lastActivityNanos = max(lastActivityNanos, now)
            guard intervalMs != configuration.busyIntervalMs else { return nil }
            intervalMs = configuration.busyIntervalMs
            return .rearm(intervalMs: intervalMs)
        case .tick(let now):
            guard intervalMs != configuration.quietIntervalMs, now &- lastActivityNanos >= configuration.quietAfterNanos,
                  now >= lastActivityNanos else { return nil }
            intervalMs = configuration.quietIntervalMs
            return .rearm(intervalMs: intervalMs)
        }
    }
}

/// Drives usrsctp's timers on one loop's thread. usrsctp runs without threads of its own
/// (`usrsctp_init_nothreads`): no 10 ms timer thread and no raw-socket receive threads
/// (AF_CONN packets come in through `usrsctp_conninput` on the loop anyway). Each loop
/// with an association has one driver, shared by its transports; its timer calls
/// ``USRSCTP/handleTimers()`` at the period ``SCTPTimerCadence`` picks from their activity.
///
/// Thread contract: loop-confined, except that it is created under the registry's lock
/// (which only adds a GLib source, thread-safe).
final class SCTPTimerDriver {
    let loop: GLibLoop
    private var cadence: SCTPTimerCadence
    private var timer: UInt32 = 0
    /// Timer firings, for tests and diagnostics.
    private(set) var ticks: UInt64 = 0

    init(loop: GLibLoop, configuration: SCTPTimerCadence.Configuration = .init()) {
        self.loop = loop
        cadence = SCTPTimerCadence(nowNanos: MonotonicClock.nanos(), configuration: configuration)
        arm(cadence.intervalMs)
    }

    deinit { loop.cancelTimer(timer) }

    /// The period of the running timer.
    var intervalMs: UInt32 { cadence.intervalMs }

    /// An SCTP packet went in or out on this loop: timers are due soon (SACK, retransmission).
    func activity() {
        if case .rearm(let ms)? = cadence.handle(.activity(nowNanos: MonotonicClock.nanos())) { arm(ms) }
    }

    private func arm(_ ms: UInt32) {
        loop.cancelTimer(timer)
        timer = loop.addTimer(intervalMs: ms) { [weak self] in self?.tick() ?? false }
    }

    private func tick() -> Bool {
        ticks &+= 1
        USRSCTP.handleTimers()
        guard case .rearm(let ms)? = cadence.handle(.tick(nowNanos: MonotonicClock.nanos())) else { return true }
        timer = 0  // this source ends when the closure returns false
        arm(ms)
        return false
    }
}

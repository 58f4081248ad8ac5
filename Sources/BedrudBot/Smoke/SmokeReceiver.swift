import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRTC
import Synchronization

/// The listener's router: the first audio track it is offered goes into one ring, read
/// by a ``ToneBurstDetector`` on its own thread.
final class SmokeReceiver: TrackRouter, @unchecked Sendable {
    // @unchecked: `detector` is touched only by the consumer thread until `stop` has joined it.
    let ring = PacketRing(capacity: 1024)
    let wake = WakeSignal()
    private let ssrcBox = Mutex<UInt32?>(nil)
    private let stopping = Atomic<Bool>(false)
    let detector: ToneBurstDetector
    private var started = false
    private let done = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let finished = Atomic<Bool>(false)

    init?(signal: SmokeSignal) {
        guard let d = ToneBurstDetector(capacitySamples: signal.totalSamples + 5 * 48_000, expectedBursts: signal.bursts) else { return nil }
        detector = d
        ring.attach(wake: wake)
    }

    var ssrc: UInt32? { ssrcBox.withLock { $0 } }

    func route(added: [RemoteTrack], removed: [RemoteTrack]) -> [UInt32: PacketRing] {
        for t in added where t.kind == "audio" {
            let mine = ssrcBox.withLock { s -> Bool in
                guard s == nil else { return false }
                s = t.ssrc
                return true
            }
            if mine { return [t.ssrc: ring] }
        }
        return [:]
    }

    func start() {
        started = true
        OSThread.start(name: "bedrud-smoke-rx") { [self] in
            while true {
                while ring.pop({ h, payload in
                    if h.kind == .rtp { detector.feed(payload, arrivalNanos: h.arrivalNanos) }
                }) {}
                if stopping.load(ordering: .acquiring) { break }
                wake.park(untilNanos: MonotonicClock.nanos() + 50_000_000) { !ring.isEmpty || stopping.load(ordering: .relaxed) }
            }
            finished.store(true, ordering: .releasing)
            done.withLock { $0?.resume(); $0 = nil }
        }
    }

    /// Stops the consumer and waits for it; the detector may be read after.
    func stop() async {
        guard started else { return }
        stopping.store(true, ordering: .releasing)
        wake.notify()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = done.withLock { d -> Bool in
                if finished.load(ordering: .acquiring) { return true }
                d = c
                return false
            }
            if now { c.resume() }
        }
    }
}

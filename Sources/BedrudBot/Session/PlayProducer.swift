import BedrudMedia
import BedrudProtocol
import BedrudRTC
import BedrudRuntime
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Feeds a ``PlaySource``'s packets into a send ring on its own thread, each no more than
/// `leadNanos` ahead of its send deadline (``RTPPacer``: start + sample / 48 kHz, the
/// same clock the sender paces from), sleeping on absolute monotonic deadlines between
/// them. Stops at the source's end, at `limitSamples` on the timeline, or on ``stop()``.
///
/// The loop allocates nothing per packet: one staging buffer, the source writes into it,
/// the ring copies it.
final class PlayProducer: Sendable {
    let source: PlaySource
    let ring: PacketRing
    let limitSamples: UInt64?
    static let leadNanos: UInt64 = 200_000_000
    /// Longest single sleep, so `stop()` is noticed within this long.
    static let maxSleepNanos: UInt64 = 50_000_000
    private let stopped = Atomic<Bool>(false)
    private let position = Atomic<UInt64>(0)
    private let pushed = Atomic<UInt64>(0)

    init(source: PlaySource, ring: PacketRing, limitSamples: UInt64?) {
        self.source = source
        self.ring = ring
        self.limitSamples = limitSamples
    }

    func stop() { stopped.store(true, ordering: .relaxed) }
    var isStopped: Bool { stopped.load(ordering: .relaxed) }
    /// Packets handed to the sender.
    var packets: UInt64 { pushed.load(ordering: .relaxed) }
    /// Playing time so far (timeline end of the last packet handed on, minus the lead-in).
    func playedSamples(leadIn: Int) -> Int64 { max(0, Int64(position.load(ordering: .relaxed)) - Int64(leadIn)) }

    func run(startNanos: UInt64) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            OSThread.start(name: "bedrud-play") { [self] in
                loop(pacer: RTPPacer(startNanos: startNanos, clockRate: 48_000))
                c.resume()
            }
        }
    }

    private static func sleep(until nanos: UInt64) {
        var ts = timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    private func loop(pacer: RTPPacer) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500, alignment: 16)
        defer { buffer.deallocate() }
        var previousEnd: UInt64?
        while !isStopped, let p = source.next(into: buffer) {
            if let limitSamples, p.start >= limitSamples { break }
            let due = pacer.deadline(samples: p.start)
            let wake = due > Self.leadNanos ? due - Self.leadNanos : 0
            // Long pauses (DTX gaps) sleep in steps, so a stop is noticed.
            while !isStopped {
                let now = MonotonicClock.nanos()
                if now >= wake { break }
                Self.sleep(until: min(wake, now + Self.maxSleepNanos))
            }
            // A full ring means the sender is behind: wait a packet's time for it.
            while !isStopped, ring.count >= ring.capacity - 1 {
                Self.sleep(until: MonotonicClock.nanos() + 20_000_000)
            }
            if isStopped { break }
            let h = MediaPacketHeader(ssrc: 0, rtpTimestamp: UInt32(truncatingIfNeeded: p.start),
                                      payloadType: (p.voice ? 0x80 : 0) | (p.level & 0x7F), marker: previousEnd != p.start, arrivalNanos: 0)
            _ = ring.push(h, payload: UnsafeRawBufferPointer(start: buffer.baseAddress, count: p.length))
            previousEnd = p.start + UInt64(p.samples)
            position.store(previousEnd!, ordering: .relaxed)
            pushed.add(1, ordering: .relaxed)
        }
    }
}

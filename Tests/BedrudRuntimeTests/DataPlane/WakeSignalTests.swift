import BedrudRuntime
import Foundation
import Synchronization
import Testing

@Suite struct WakeSignalTests {
    /// Nothing notifies: the park lasts until its deadline, not less.
    @Test func parkSleepsUntilTheDeadline() {
        let s = WakeSignal()
        let t0 = MonotonicClock.nanos()
        s.park(untilNanos: t0 + 30_000_000) { false }
        #expect(MonotonicClock.nanos() - t0 >= 30_000_000)
        #expect(s.wakeCount == 0)
    }

    /// Work that is already there ends the park at once.
    @Test func parkReturnsAtOnceWhenWorkIsWaiting() {
        let s = WakeSignal()
        let t0 = MonotonicClock.nanos()
        s.park(untilNanos: t0 + 10_000_000_000) { true }
        #expect(MonotonicClock.nanos() - t0 < 5_000_000_000)
    }

    /// A ring push wakes a parked consumer long before its deadline, with one syscall;
    /// pushes while the consumer is not parked cost none.
    @Test func ringPushWakesAParkedConsumerOnce() {
        let s = WakeSignal()
        let ring = PacketRing(capacity: 64)
        ring.attach(wake: s)
        let h = MediaPacketHeader(ssrc: 1, rtpTimestamp: 0, arrivalNanos: 0)
        for _ in 0..<10 { ring.push(h, payload: UnsafeRawBufferPointer(start: nil, count: 0)) }
        #expect(s.wakeCount == 0)
        while ring.pop({ _, _ in }) {}
        let woke = Atomic<UInt64>(0)
        let done = Atomic<Bool>(false)
        let consumer = Thread {
            let t0 = MonotonicClock.nanos()
            s.park(untilNanos: t0 + 20_000_000_000) { !ring.isEmpty }
            woke.store(MonotonicClock.nanos() - t0, ordering: .relaxed)
            done.store(true, ordering: .releasing)
        }
        consumer.start()
        // Push until the consumer is woken (it may park after the first push).
        let deadline = MonotonicClock.nanos() + 20_000_000_000
        while !done.load(ordering: .acquiring) && MonotonicClock.nanos() < deadline {
            ring.push(h, payload: UnsafeRawBufferPointer(start: nil, count: 0))
            while !done.load(ordering: .acquiring) && ring.count > 0 && MonotonicClock.nanos() < deadline { sched_yield() }
        }
        let finished = done.load(ordering: .acquiring)
        let waited = woke.load(ordering: .relaxed)
        #expect(finished)
        #expect(waited < 10_000_000_000)
        #expect(s.wakeCount <= 1)
    }
}

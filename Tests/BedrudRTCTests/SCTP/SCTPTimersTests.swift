import Testing
@testable import BedrudRTC

/// How often usrsctp's timers run (SCTPTimerCadence): a transcript of activity and ticks.
@Suite("SCTP timer cadence")
struct SCTPTimersTests {
    let ms: UInt64 = 1_000_000

    @Test("Busy from the start and while packets move; quiet 2 s after the last one; back to busy on the next packet")
    func transcript() {
        var c = SCTPTimerCadence(nowNanos: 0)
        #expect(c.intervalMs == 20 && !c.isQuiet)
        // Ticks during setup, with activity every 100 ms: stays at 20 ms.
        for t in stride(from: UInt64(20), through: 1_000, by: 20) {
            if t % 100 == 0 { #expect(c.handle(.activity(nowNanos: t * ms)) == nil) }
            #expect(c.handle(.tick(nowNanos: t * ms)) == nil)
        }
        // The last activity was at 1 000 ms: still busy at 2 980 ms, quiet from 3 000 ms.
        #expect(c.handle(.tick(nowNanos: 2_980 * ms)) == nil)
        #expect(c.handle(.tick(nowNanos: 3_000 * ms)) == .rearm(intervalMs: 500))
        #expect(c.isQuiet)
        #expect(c.handle(.tick(nowNanos: 3_500 * ms)) == nil)
        #expect(c.handle(.tick(nowNanos: 33_500 * ms)) == nil)
        // A heartbeat comes in: busy at once, one re-arm only however many packets follow.
        #expect(c.handle(.activity(nowNanos: 33_600 * ms)) == .rearm(intervalMs: 20))
        #expect(c.handle(.activity(nowNanos: 33_610 * ms)) == nil)
        #expect(c.handle(.tick(nowNanos: 33_620 * ms)) == nil)
        #expect(c.handle(.tick(nowNanos: 35_610 * ms)) == .rearm(intervalMs: 500))
    }

    @Test("A clock reading older than the last activity never makes it quiet")
    func clockGoingBack() {
        var c = SCTPTimerCadence(nowNanos: 10_000 * ms)
        #expect(c.handle(.tick(nowNanos: 1 * ms)) == nil)
        #expect(c.handle(.activity(nowNanos: 5 * ms)) == nil)
        #expect(c.handle(.tick(nowNanos: 11_999 * ms)) == nil)
        #expect(c.handle(.tick(nowNanos: 12_000 * ms)) == .rearm(intervalMs: 500))
    }
}

import Testing

@testable import BedrudMedia

/// TrackClock: where a track's RTP timestamps land on the session's sample clock.
@Suite struct TrackClockTests {
    @Test func startBurstDoesNotShiftTheAnchor() {
        // 25 packets (500 ms of backlog) arrive within 10 ms, then real time.
        var clock = TrackClock(settleNanos: 500_000_000)
        var t: UInt64 = 1_000_000_000
        for i in 0..<25 {
            clock.observe(timestamp: Int64(i * 960), sessionSample: Int64(t / 1000 * 48 / 1000), arrivalNanos: t)
            t += 400_000
        }
        for i in 25..<100 {
            let arrival = UInt64(1_000_000_000 + 10_000_000 + (i - 24) * 20_000_000)
            clock.observe(timestamp: Int64(i * 960), sessionSample: Int64(arrival / 1000 * 48 / 1000), arrivalNanos: arrival)
        }
        // Packet 24 arrived at ~1.0096 s; the true send time of packet 0 is about 480 ms earlier.
        let first = clock.position(of: 0)!
        let burstStart = Int64(1_000_000_000 / 1000 * 48 / 1000)
        #expect(abs(first - (burstStart + 10 * 48 - 24 * 960 + 0)) <= 960, "anchor \(first)")
    }

    @Test func stalledTimestampsReanchor() {
        var clock = TrackClock(settleNanos: 100_000_000)
        for i in 0..<50 {
            let a = UInt64(i) * 20_000_000
            clock.observe(timestamp: Int64(i * 960), sessionSample: Int64(i * 960), arrivalNanos: a)
        }
        // Timestamps continue as if no time passed, but 5 s did.
        for i in 50..<60 {
            let a = UInt64(i) * 20_000_000 + 5_000_000_000
            clock.observe(timestamp: Int64(i * 960), sessionSample: Int64(i * 960) + 240_000, arrivalNanos: a)
        }
        #expect(clock.position(of: 59 * 960)! == 59 * 960 + 240_000)
        #expect(clock.adjustments == 1)
    }
}

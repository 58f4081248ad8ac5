import BedrudCore
import Testing

/// `RateLimitWait` and `RetryAfter`: how a 429 is waited out, as values.
@Suite struct RateLimitWaitTests {
    @Test func retryAfterIsHonouredWithUpToASecondOfJitterUntilTheTotalIsSpent() {
        var w = RateLimitWait(maxTotal: 120)
        #expect(w.next(retryAfter: 47, random: 0) == 47)
        #expect(w.next(retryAfter: 47, random: 0.5) == 47.5)
        #expect(w.next(retryAfter: 47, random: 0) == nil, "47 + 47.5 + 47 is past 2 minutes: give up, do not wait")
        #expect(w.waited == 94.5)
        #expect(w.attempts == 3)
    }

    @Test func withoutRetryAfterItBacksOffExponentiallyWithJitter() {
        var w = RateLimitWait(maxTotal: 1000)
        // random 1 → the whole step; the steps double from 2 s to at most 30 s.
        #expect((1...7).map { _ in w.next(retryAfter: nil, random: 0.999999)!.rounded() } == [2, 4, 8, 16, 30, 30, 30])
        var low = RateLimitWait(maxTotal: 1000)
        #expect(low.next(retryAfter: nil, random: 0) == 1, "random 0 → half the step")
    }

    @Test func aLimitOfZeroFailsAtTheFirst429() {
        var w = RateLimitWait(maxTotal: 0)
        #expect(w.next(retryAfter: 1, random: 0) == nil)
        #expect(w.next(retryAfter: nil, random: 0) == nil)
    }

    @Test func retryAfterReadsSecondsAndHTTPDates() {
        let now = 784_111_777.0  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds(" 5 ", now: now) == 5)
        #expect(RetryAfter.seconds("99999", now: now) == 3600, "capped at an hour")
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:50:07 GMT", now: now) == 30)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:00 GMT", now: now) == 0, "a date in the past: ask at once")
        for bad in ["-1", "soon", "", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT"] {
            #expect(RetryAfter.seconds(bad, now: now) == nil, "\(bad)")
        }
        #expect(RetryAfter.seconds(nil, now: now) == nil)
    }
}

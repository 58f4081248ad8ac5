import BedrudProtocol
import Testing

/// `LogBudget`: a few lines, then one per interval, saying how many were left out.
@Suite struct LogBudgetTests {
    @Test func aBurstThenOneLinePerIntervalWithTheCountLeftOut() {
        var b = LogBudget(burst: 3, intervalMs: 10_000)
        let first = (0..<1000).map { b.allows(nowMs: Int64($0)) }
        #expect(first.filter(\.write).count == 3, "the burst, then nothing within the interval")
        #expect(first.prefix(3).allSatisfy { $0.write && $0.leftOut == 0 })
        #expect(!b.allows(nowMs: 9_999).write)
        let later = b.allows(nowMs: 10_002)
        #expect(later.write && later.leftOut == 998, "1000 - 3 within the first interval, and one more at 9999")
        #expect(b.allows(nowMs: 10_003).write == false)
        let next = b.allows(nowMs: 20_002)
        #expect(next.write && next.leftOut == 1)
    }
}

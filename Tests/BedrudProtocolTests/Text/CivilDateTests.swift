import BedrudProtocol
import Testing

@Suite struct CivilDateTests {
    @Test func knownDatesAndTheirDayNumbers() {
        #expect(CivilDate.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilDate.days(year: 2000, month: 3, day: 1) == 11_017)
        #expect(CivilDate.days(year: 1969, month: 12, day: 31) == -1)
        #expect(CivilDate.civil(days: 20_786) == (2026, 11, 29))
        #expect(CivilDate.civil(days: -719_468) == (0, 3, 1))
    }

    /// Every day from 1600 to 2400 goes to its date and back, and the dates follow each other.
    @Test func everyDayRoundTrips() {
        var previous = CivilDate.civil(days: CivilDate.days(year: 1600, month: 1, day: 1) - 1)
        for n in CivilDate.days(year: 1600, month: 1, day: 1)...CivilDate.days(year: 2400, month: 12, day: 31) {
            let c = CivilDate.civil(days: n)
            #expect(CivilDate.days(year: c.year, month: c.month, day: c.day) == n)
            let next = c.day == 1 ? (c.month == 1 ? c.year == previous.year + 1 && previous.month == 12 : c.month == previous.month + 1) : c.day == previous.day + 1
            if !next { Issue.record("\(previous) is followed by \(c)") }
            previous = c
        }
    }
}

import Testing
@testable import BedrudRTC

/// How often receiver reports go out, for what an idle room costs: an empty room needs no
/// report every second.
@Suite("RTCP report interval")
struct PeerTransportReportIntervalTests {
    @Test("The configured interval while a track is received or sent; RFC 3550's 5 s minimum with nothing to report; a longer configured interval is kept")
    func quietWithNothingToReport() {
        #expect(PeerTransport.reportIntervalMs(configured: 1000, hasSubjects: true) == 1000)
        #expect(PeerTransport.reportIntervalMs(configured: 1000, hasSubjects: false) == 5000)
        #expect(PeerTransport.reportIntervalMs(configured: 8000, hasSubjects: false) == 8000)
    }
}

import BedrudProtocol
import Testing

@Suite("PacketLoss (one ratio from receive counters)")
struct PacketLossTests {
    @Test("Without retransmission both ratios are missing over expected")
    func plainLoss() {
        let l = PacketLoss(received: 210, lost: 90)
        #expect(l.expected == 300)
        #expect(l.residualRatio == 0.3 && l.pathRatio == 0.3)
    }

    @Test("A recovered packet is received, not missing: it counts for the path, not for the recording")
    func recoveredPackets() {
        let l = PacketLoss(received: 100, lost: 2, recovered: 8)
        #expect(l.expected == 102)
        #expect(l.arrivedFirstTime == 92 && l.pathLost == 10)
        #expect(l.residualRatio == 2.0 / 102)
        #expect(l.pathRatio == 10.0 / 102)
        // The path's view again as plain counters gives the same ratio, so a consumer that
        // keeps only two numbers (smoke's --json) loses nothing.
        #expect(PacketLoss(received: l.arrivedFirstTime, lost: l.pathLost).residualRatio == l.pathRatio)
    }

    @Test("Nothing expected has no ratio; duplicates (negative loss) are no loss; recovered never exceeds received")
    func edges() {
        #expect(PacketLoss(received: 0, lost: 0).residualRatio == nil)
        #expect(PacketLoss(received: 0, lost: 0).pathRatio == nil)
        let dup = PacketLoss(received: 50, lost: -3)
        #expect(dup.missing == 0 && dup.residualRatio == 0)
        let odd = PacketLoss(received: 5, lost: 0, recovered: 9)
        #expect(odd.recovered == 5 && odd.arrivedFirstTime == 0)
    }
}

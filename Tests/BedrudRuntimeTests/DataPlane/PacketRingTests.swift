import BedrudRuntime
import Foundation
import Testing

@Suite struct PacketRingTests {
    @Test func keepsOrderAndPayloads() {
        let ring = PacketRing(capacity: 4, maxPayload: 8)
        for i in 0..<3 {
            let bytes: [UInt8] = [UInt8(i), 0xAA]
            let ok = bytes.withUnsafeBytes { ring.push(MediaPacketHeader(ssrc: 7, sequenceNumber: UInt16(i), rtpTimestamp: UInt32(i * 960), arrivalNanos: 0), payload: $0) }
            #expect(ok)
        }
        var seen: [(UInt16, [UInt8])] = []
        while ring.pop({ h, p in seen.append((h.sequenceNumber, Array(p))) }) {}
        #expect(seen.map(\.0) == [0, 1, 2])
        #expect(seen.map(\.1) == [[0, 0xAA], [1, 0xAA], [2, 0xAA]])
    }

    @Test func fullRingDropsAndCounts() {
        let ring = PacketRing(capacity: 2, maxPayload: 4)
        let h = MediaPacketHeader(ssrc: 1, rtpTimestamp: 0, arrivalNanos: 0)
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        #expect(ring.push(h, payload: empty))
        #expect(ring.push(h, payload: empty))
        #expect(!ring.push(h, payload: empty))
        #expect(ring.droppedCount == 1)
        let long: [UInt8] = [1, 2, 3, 4, 5]
        ring.pop { _, _ in }
        #expect(!long.withUnsafeBytes { ring.push(h, payload: $0) })
        #expect(ring.oversizeCount == 1)
    }

    @Test func twoThreadsLoseNothingWhenConsumerKeepsUp() async {
        let ring = PacketRing(capacity: 1024, maxPayload: 4)
        let total = 200_000
        let producer = Thread {
            var i = 0
            while i < total {
                var v = UInt32(truncatingIfNeeded: i)
                let ok = withUnsafeBytes(of: &v) { ring.push(MediaPacketHeader(ssrc: 1, rtpTimestamp: UInt32(truncatingIfNeeded: i), arrivalNanos: 0), payload: $0) }
                if ok { i += 1 }
            }
        }
        producer.start()
        var expected: UInt32 = 0
        var bad = 0
        while expected < UInt32(total) {
            ring.pop { h, p in
                let v = p.loadUnaligned(as: UInt32.self)
                if v != expected || h.rtpTimestamp != expected { bad += 1 }
                expected &+= 1
            }
        }
        #expect(bad == 0)
    }
}

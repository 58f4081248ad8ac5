import BedrudProtocol
import Testing
@testable import BedrudRTC

/// Builds RTP packets for tests.
func makeRTP(pt: UInt8 = 111, seq: UInt16, ts: UInt32, ssrc: UInt32, marker: Bool = false, csrcs: [UInt32] = [], extensionBlock: (profile: UInt16, words: [UInt8])? = nil, payload: [UInt8] = [0xF8, 0xFF, 0xFE], padding: Int = 0) -> [UInt8] {
    var b: [UInt8] = [0x80 | UInt8(csrcs.count), (marker ? 0x80 : 0) | pt, UInt8(seq >> 8), UInt8(seq & 0xFF)]
    for v in [ts, ssrc] { b += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    for c in csrcs { b += [UInt8(c >> 24), UInt8((c >> 16) & 0xFF), UInt8((c >> 8) & 0xFF), UInt8(c & 0xFF)] }
    if let e = extensionBlock {
        b[0] |= 0x10
        b += [UInt8(e.profile >> 8), UInt8(e.profile & 0xFF), UInt8((e.words.count / 4) >> 8), UInt8((e.words.count / 4) & 0xFF)]
        b += e.words
    }
    b += payload
    if padding > 0 {
        b[0] |= 0x20
        b += [UInt8](repeating: 0, count: padding - 1) + [UInt8(padding)]
    }
    return b
}

@Suite("RTP header")
struct RTPHeaderTests {
    @Test("Fixed header fields, CSRCs, payload bounds")
    func basic() throws {
        let p = makeRTP(pt: 111, seq: 0xBEEF, ts: 0x0102_0304, ssrc: 0xDEAD_BEEF, marker: true, csrcs: [7, 8])
        let h = try p.withUnsafeBytes { try RTPHeader.parse($0) }
        #expect(h.marker && h.payloadType == 111 && h.sequenceNumber == 0xBEEF && h.timestamp == 0x0102_0304 && h.ssrc == 0xDEAD_BEEF)
        #expect(h.csrcCount == 2 && h.payloadOffset == 20 && h.payloadLength == 3 && h.extensionProfile == nil)
        p.withUnsafeBytes { #expect(h.csrc(1, in: $0) == 8) }
    }

    @Test("One-byte extensions (RFC 8285 §4.2) with padding in between")
    func oneByte() throws {
        // id 1 len 1 (2 bytes), padding 0, id 3 len 3 (4 bytes), padding to a word.
        let words: [UInt8] = [0x11, 0xAA, 0xBB, 0x00, 0x33, 1, 2, 3, 4, 0, 0, 0]
        let p = makeRTP(seq: 1, ts: 1, ssrc: 1, extensionBlock: (0xBEDE, words))
        let h = try p.withUnsafeBytes { try RTPHeader.parse($0) }
        #expect(h.extensionProfile == 0xBEDE && h.extensionLength == 12 && h.payloadOffset == 28)
        var seen: [(UInt8, [UInt8])] = []
        let ok = p.withUnsafeBytes { b in h.forEachExtension(in: b) { id, d in seen.append((id, Array(d))) } }
        #expect(ok)
        #expect(seen.map(\.0) == [1, 3] && seen[0].1 == [0xAA, 0xBB] && seen[1].1 == [1, 2, 3, 4])
    }

    @Test("Two-byte extensions (RFC 8285 §4.3)")
    func twoByte() throws {
        let words: [UInt8] = [5, 2, 0xCA, 0xFE, 0, 9, 0, 0]
        let p = makeRTP(seq: 1, ts: 1, ssrc: 1, extensionBlock: (0x1000, words))
        let h = try p.withUnsafeBytes { try RTPHeader.parse($0) }
        var seen: [(UInt8, Int)] = []
        #expect(p.withUnsafeBytes { b in h.forEachExtension(in: b) { id, d in seen.append((id, d.count)) } })
        #expect(seen.count == 2 && seen[0] == (5, 2) && seen[1] == (9, 0))
    }

    @Test("An element running past the block is reported malformed")
    func badElement() throws {
        let p = makeRTP(seq: 1, ts: 1, ssrc: 1, extensionBlock: (0xBEDE, [0x1F, 1, 2, 3]))
        let h = try p.withUnsafeBytes { try RTPHeader.parse($0) }
        #expect(!p.withUnsafeBytes { b in h.forEachExtension(in: b) { _, _ in } })
    }

    @Test("Padding is excluded from the payload")
    func padding() throws {
        let p = makeRTP(seq: 1, ts: 1, ssrc: 1, payload: [1, 2, 3, 4, 5], padding: 3)
        let h = try p.withUnsafeBytes { try RTPHeader.parse($0) }
        #expect(h.payloadLength == 5 && h.paddingLength == 3)
    }

    @Test("Absurd CSRC counts, extension lengths, padding and versions are refused")
    func refused() {
        var csrc = makeRTP(seq: 1, ts: 1, ssrc: 1, payload: [])
        csrc[0] = 0x8F  // 15 CSRCs in a 12-byte packet
        var ext = makeRTP(seq: 1, ts: 1, ssrc: 1, extensionBlock: (0xBEDE, [0, 0, 0, 0]), payload: [])
        ext[14] = 0xFF
        ext[15] = 0xFF  // 65535 words
        var pad = makeRTP(seq: 1, ts: 1, ssrc: 1, payload: [1])
        pad[0] |= 0x20
        pad[pad.count - 1] = 200
        var zeroPad = makeRTP(seq: 1, ts: 1, ssrc: 1, payload: [1, 0])
        zeroPad[0] |= 0x20
        var v1 = makeRTP(seq: 1, ts: 1, ssrc: 1)
        v1[0] = 0x40
        let cases: [([UInt8], RTPParseError)] = [
            ([], .tooShort), (Array(repeating: 0x80, count: 11), .tooShort), (csrc, .csrcOverrun), (ext, .extensionOverrun),
            (pad, .badPadding), (zeroPad, .badPadding), (v1, .badVersion),
        ]
        for (bytes, expected) in cases {
            #expect(throws: expected) { try bytes.withUnsafeBytes { try RTPHeader.parse($0) } }
        }
    }

    @Test("RFC 7983 demultiplexing by first byte; RTCP by PT 192–223")
    func demux() {
        func k(_ b: [UInt8]) -> DatagramKind { b.withUnsafeBytes { DatagramKind.classify($0) } }
        #expect(k([0x00, 0x01]) == .stun && k([0x03]) == .stun)
        #expect(k([20]) == .dtls && k([23, 0xFE]) == .dtls && k([63]) == .dtls)
        #expect(k([16]) == .zrtp && k([64]) == .turnChannel)
        #expect(k([0x80, 111]) == .rtp && k([0x80, 0x80 | 111]) == .rtp)
        #expect(k([0x80, 200]) == .rtcp && k([0x81, 201]) == .rtcp && k([0x80, 205]) == .rtcp && k([0x80, 223]) == .rtcp)
        #expect(k([0x80]) == .unknown && k([]) == .unknown && k([4]) == .unknown && k([192]) == .unknown)
    }
}

@Suite("RTP receive statistics and NACK")
struct RTPStatisticsTests {
    @Test("Sequence numbers unwrap to 64 bits across wraps and reordering")
    func unwrap() {
        var u = RTPCounterUnwrapper.sequenceNumbers()
        let a = u.unwrap(65534)
        #expect(u.unwrap(65535) == a + 1)
        #expect(u.unwrap(0) == a + 2)
        #expect(u.unwrap(65535) == a + 1)  // late packet from before the wrap
        #expect(u.unwrap(1) == a + 3)
        var v = RTPCounterUnwrapper.sequenceNumbers()
        let b = v.unwrap(10)
        #expect(v.unwrap(9) == b - 1)
        var w = RTPCounterUnwrapper.sequenceNumbers()
        var last = w.unwrap(0)
        for i in 1...200_000 {
            let x = w.unwrap(UInt32(UInt16(truncatingIfNeeded: i)))
            #expect(x == last + 1)
            last = x
            if x != last { break }
        }
    }

    @Test("Loss, fraction lost and extended highest sequence in the report block")
    func loss() {
        var s = RTPReceiveStatistics(clockRate: 48000)
        var t: UInt64 = 1_000_000_000
        for seq: UInt16 in 65530...65535 { _ = s.record(sequenceNumber: seq, rtpTimestamp: UInt32(seq) * 960, payloadBytes: 100, arrivalNanos: t); t += 20_000_000 }
        for seq: UInt16 in [0, 1, 3, 4] { _ = s.record(sequenceNumber: seq, rtpTimestamp: UInt32(seq) * 960, payloadBytes: 100, arrivalNanos: t); t += 20_000_000 }
        #expect(s.packetsReceived == 10 && s.expected == 11 && s.cumulativeLost == 1 && s.bytesReceived == 1000)
        let b = s.makeReportBlock(ssrc: 9, nowNanos: t)
        #expect(b.ssrc == 9 && b.cumulativeLost == 1 && b.extendedHighestSequence == 65536 + 4)
        #expect(b.fractionLost == UInt8((1 << 8) / 11))
        // Next interval without loss reports 0 fraction, same cumulative loss.
        _ = s.record(sequenceNumber: 5, rtpTimestamp: 5 * 960, payloadBytes: 100, arrivalNanos: t)
        let b2 = s.makeReportBlock(ssrc: 9, nowNanos: t)
        #expect(b2.fractionLost == 0 && b2.cumulativeLost == 1)
    }

    @Test("Jitter is 0 for perfect pacing and follows RFC 3550 A.8 for a constant offset pattern")
    func jitter() {
        var s = RTPReceiveStatistics(clockRate: 48000)
        for i in 0..<100 { _ = s.record(sequenceNumber: UInt16(i), rtpTimestamp: UInt32(i * 960), payloadBytes: 1, arrivalNanos: UInt64(i) * 20_000_000) }
        #expect(s.jitter == 0)
        var j = RTPReceiveStatistics(clockRate: 48000)
        // Alternate 0 and +5 ms arrival offset: |D| = 240 units every packet; J converges to 240.
        for i in 0..<2000 {
            let off: UInt64 = i % 2 == 0 ? 0 : 5_000_000
            _ = j.record(sequenceNumber: UInt16(truncatingIfNeeded: i), rtpTimestamp: UInt32(i * 960), payloadBytes: 1, arrivalNanos: UInt64(i) * 20_000_000 + off)
        }
        #expect(abs(Int(j.jitter) - 240) <= 2)
        #expect(abs(j.jitterSeconds - 0.005) < 0.0002)
    }

    @Test("DLSR counts 1/65536 s since the last sender report")
    func dlsr() {
        var s = RTPReceiveStatistics(clockRate: 48000)
        _ = s.record(sequenceNumber: 1, rtpTimestamp: 0, payloadBytes: 1, arrivalNanos: 1)
        s.recordSenderReport(compactNTP: 0x1234_5678, arrivalNanos: 1_000_000_000)
        let b = s.makeReportBlock(ssrc: 1, nowNanos: 1_500_000_000)
        #expect(b.lastSenderReport == 0x1234_5678 && b.delaySinceLastSenderReport == 32768)
    }

    @Test("NACK: reordering within the window is not requested; losses are, with retries and an age limit")
    func nack() {
        var cfg = NACKTracker.Configuration()
        cfg.reorderWindowNanos = 20_000_000
        cfg.retryIntervalNanos = 100_000_000
        cfg.maxRetries = 2
        var t = NACKTracker(configuration: cfg)
        var out = [UInt16](repeating: 0, count: 64)
        func due(_ now: UInt64) -> [UInt16] { out.withUnsafeMutableBufferPointer { b in let n = t.collectDue(nowNanos: now, into: b); return Array(b[0..<n]) } }
        t.packetArrived(100, nowNanos: 0)
        t.packetArrived(103, nowNanos: 1_000_000)  // 101, 102 missing
        #expect(t.pendingCount == 2)
        t.packetArrived(101, nowNanos: 5_000_000)  // reordered, not lost
        #expect(t.pendingCount == 1 && t.recovered == 1)
        #expect(due(10_000_000).isEmpty)  // still inside the reorder window
        #expect(due(30_000_000) == [102])
        #expect(due(40_000_000).isEmpty)  // retry interval
        #expect(due(140_000_000) == [102])
        #expect(due(300_000_000).isEmpty)  // max retries reached: forgotten
        #expect(t.pendingCount == 0 && t.requested == 2)
        // A jump larger than maxGap is a restart: nothing requested.
        t.packetArrived(10_000, nowNanos: 400_000_000)
        #expect(t.pendingCount == 0)
        // Capacity bounds the list.
        var small = NACKTracker.Configuration()
        small.capacity = 4
        var u = NACKTracker(configuration: small)
        u.packetArrived(0, nowNanos: 0)
        u.packetArrived(50, nowNanos: 0)
        #expect(u.pendingCount == 4)
    }
}

@Suite("RTCP")
struct RTCPTests {
    func sr(ssrc: UInt32, ntp: UInt64, rtp: UInt32, blocks: Int = 0) -> [UInt8] {
        var b: [UInt8] = [0x80 | UInt8(blocks), 200, 0, UInt8(6 + 6 * blocks)]
        func u32(_ v: UInt32) { b += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        u32(ssrc)
        u32(UInt32(ntp >> 32))
        u32(UInt32(ntp & 0xFFFF_FFFF))
        u32(rtp)
        u32(10)
        u32(1000)
        for i in 0..<blocks { for _ in 0..<6 { u32(UInt32(i)) } }
        return b
    }

    @Test("Compound SR + SDES + BYE parses; SR fields and compact NTP")
    func compound() throws {
        var w = [UInt8](repeating: 0, count: 200)
        let written = w.withUnsafeMutableBytes { buf -> Int in
            var wr = RTCPWriter(buffer: buf)
            let cname = Array("cname".utf8)
            _ = cname.withUnsafeBytes { wr.appendSourceDescription(ssrc: 5, cname: $0) }
            return wr.count
        }
        let bye: [UInt8] = [0x81, 203, 0, 1, 0, 0, 0, 5]
        let packet = sr(ssrc: 5, ntp: 0xAABB_CCDD_EEFF_0011, rtp: 48000, blocks: 1) + Array(w[0..<written]) + bye
        var types: [UInt8] = []
        var srSeen: RTCPSenderReport?
        var byes: [UInt32] = []
        var items: [(UInt32, UInt8, String)] = []
        try packet.withUnsafeBytes { b in
            try RTCPCompound.forEach(b) { v in
                types.append(v.packetType)
                if let s = RTCPSenderReport(v) {
                    srSeen = s
                    #expect(RTCPSenderReport.reportBlock(0, in: v).ssrc == 0)
                }
                RTCPGoodbye.forEachSource(v) { byes.append($0) }
                RTCPSourceDescription.forEachItem(v) { ssrc, type, data in items.append((ssrc, type, String(decoding: data, as: UTF8.self))) }
            }
        }
        #expect(types == [200, 202, 203])
        #expect(srSeen?.ssrc == 5 && srSeen?.rtpTimestamp == 48000 && srSeen?.packetCount == 10 && srSeen?.octetCount == 1000)
        #expect(srSeen?.ntpTimestamp == 0xAABB_CCDD_EEFF_0011 && srSeen?.compactNTP == 0xCCDD_EEFF)
        #expect(byes == [5])
        #expect(items.count == 1 && items[0].0 == 5 && items[0].1 == 1 && items[0].2 == "cname")
    }

    @Test("RR written and read back; negative cumulative loss keeps its sign")
    func receiverReport() throws {
        var buf = [UInt8](repeating: 0, count: 100)
        let block = RTCPReportBlock(ssrc: 77, fractionLost: 25, cumulativeLost: -3, extendedHighestSequence: 70_000, jitter: 12, lastSenderReport: 0xABCD, delaySinceLastSenderReport: 99)
        let n = buf.withUnsafeMutableBytes { b -> Int in
            var w = RTCPWriter(buffer: b)
            let ok = w.appendReceiverReport(senderSSRC: 1, blocks: [block])
            #expect(ok)
            return w.count
        }
        #expect(n == 32)
        try buf[0..<n].withUnsafeBytes { b in
            try RTCPCompound.forEach(b) { v in
                #expect(v.senderSSRC == 1 && RTCPReceiverReport.reportCount(v) == 1)
                #expect(RTCPReceiverReport.reportBlock(0, in: v) == block)
            }
        }
    }

    @Test("NACK packing into PID+BLP (RFC 4585 §6.2.1), across the 16-bit wrap", arguments: [
        [UInt16(5)], [5, 6, 7, 21], [5, 22], [65530, 65535, 0, 3], Array(100...140),
    ])
    func nackPacking(lost: [UInt16]) throws {
        var buf = [UInt8](repeating: 0, count: 400)
        let n = buf.withUnsafeMutableBytes { b -> Int in
            var w = RTCPWriter(buffer: b)
            let ok = lost.withUnsafeBufferPointer { w.appendNACK(senderSSRC: 1, mediaSSRC: 2, lost: $0) }
            #expect(ok)
            return w.count
        }
        var back: [UInt16] = []
        try buf[0..<n].withUnsafeBytes { b in
            try RTCPCompound.forEach(b) { v in
                #expect(RTCPGenericNACK.mediaSSRC(v) == 2)
                RTCPGenericNACK.forEachLost(v) { back.append($0) }
            }
        }
        #expect(back == lost)
    }

    @Test("PLI written and read")
    func pli() throws {
        var buf = [UInt8](repeating: 0, count: 12)
        buf.withUnsafeMutableBytes { b in
            var w = RTCPWriter(buffer: b)
            let first = w.appendPLI(senderSSRC: 1, mediaSSRC: 3)
            let second = w.appendPLI(senderSSRC: 1, mediaSSRC: 3)  // full
            #expect(first && !second)
        }
        try buf.withUnsafeBytes { b in try RTCPCompound.forEach(b) { v in #expect(RTCPPictureLossIndication.mediaSSRC(v) == 3) } }
    }

    @Test("Wrong lengths, versions, padding and truncated bodies are refused")
    func malformed() {
        let good = sr(ssrc: 1, ntp: 1, rtp: 1)
        var longLen = good
        longLen[3] = 50
        var badVersion = good
        badVersion[0] = 0x40
        var padMiddle = good + good
        padMiddle[0] |= 0x20
        var padTooBig = good
        padTooBig[0] |= 0x20
        padTooBig[padTooBig.count - 1] = 100
        var rcTooBig = good
        rcTooBig[0] = 0x85
        let cases: [[UInt8]] = [[], [0x80, 200], longLen, badVersion, padMiddle, padTooBig, rcTooBig, Array(good[0..<20]), [0x81, 205, 0, 1, 0, 0, 0, 1]]
        for c in cases {
            #expect(throws: RTCPParseError.self) { try c.withUnsafeBytes { b in try RTCPCompound.forEach(b) { _ in Issue.record("callback on invalid compound") } } }
        }
    }
}

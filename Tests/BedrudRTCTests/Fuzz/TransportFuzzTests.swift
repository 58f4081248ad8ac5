import BedrudProtocol
import BedrudRuntime
import CUsrsctp
import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

@Suite("Seeded random input into live transports: counted and dropped, never a crash")
struct TransportFuzzTests {
    @Test("SRTP: random and truncated packets never authenticate", arguments: fuzzSeeds)
    func srtp(seed: UInt64) throws {
        var g = SeededGenerator(seed: seed)
        for profile in SRTPProfile.allCases {
            let (a, b) = try srtpPair(profile)
            let good = try #require(protect(a, makeRTP(seq: 1, ts: 1, ssrc: 5, payload: Array(repeating: 3, count: 60))))
            for i in 0..<1500 {
                var p = i % 2 == 0 ? g.bytes(Int.random(in: 0..<120, using: &g)) : g.mutate(good, edits: 2)
                if i % 3 == 0, !p.isEmpty { p[0] = 0x80 | (p[0] & 0x3F) }
                if p == good { continue }
                let rtcp = i % 5 == 0
                let (status, _) = unprotect(b, p, rtcp: rtcp)
                if case .ok = status { Issue.record("garbage authenticated (seed \(seed), iteration \(i), \(profile))") }
            }
        }
    }

    @Test("Packet path: authenticated garbage RTP/RTCP is parsed, counted and dropped; rings only get valid packets", arguments: fuzzSeeds)
    func mediaReceiver(seed: UInt64) throws {
        var g = SeededGenerator(seed: seed)
        let (sender, receiverSRTP) = try srtpPair(.aeadAES128GCM)
        let r = MediaReceiver(maxDatagram: 1500, nack: .init())
        r.srtp = receiverSRTP
        let tracks = [1, 2, 3].map { RemoteTrack(ssrc: $0, mid: "\($0)", kind: "audio", streamID: nil, trackID: nil, participantSID: nil, trackSID: nil, payloadType: 111, clockRate: 48000, stereo: false, nack: true) }
        r.setTracks(tracks)
        let ring = PacketRing(capacity: 64, maxPayload: 200)
        #expect(r.attach(ring, ssrc: 1))
        var now: UInt64 = 1_000_000_000
        var fed = 0
        for i in 0..<1000 {
            var plain: [UInt8]
            if i % 2 == 0 {
                plain = makeRTP(seq: UInt16(truncatingIfNeeded: i), ts: UInt32(i * 960), ssrc: UInt32(1 + i % 4), payload: g.bytes(Int.random(in: 0..<300, using: &g)))
                plain = g.mutate(plain, edits: 1)
            } else {
                plain = g.bytes(Int.random(in: 8..<100, using: &g))
            }
            guard plain.count >= 12 else { continue }
            let isRTCP = i % 7 == 0
            plain[0] = 0x80 | (plain[0] & 0x3F)
            if isRTCP { plain[1] = UInt8.random(in: 200...206, using: &g) } else { plain[1] = plain[1] & 0x7F == 72 ? 111 : plain[1] & 0xBF }
            guard let protected = protect(sender, plain, rtcp: isRTCP) else { continue }
            protected.withUnsafeBytes { r.handle($0.baseAddress!, count: $0.count, isRTCP: isRTCP, nowNanos: now) }
            fed += 1
            now += 20_000_000
            if i % 50 == 0 {
                r.sendNACKs(nowNanos: now)
                r.sendReceiverReports(nowNanos: now)
            }
            while ring.pop({ h, p in
                #expect(h.ssrc == 1)
                #expect(p.count <= 200)
            }) {}
        }
        let c = r.counters
        #expect(c.srtpAuthFailures == 0)
        let accounted = c.rtpPackets + c.malformedRTP + c.rtcpPackets + c.srtpReplays + c.srtpOtherErrors
        #expect(accounted == UInt64(fed), "every datagram lands in exactly one counter")
        #expect(c.rtpPackets > 0 && c.unknownSSRCPackets > 0 && c.unattachedPackets > 0)
    }

    @Test("DTLS: garbage during and after the handshake; a connected session survives it", arguments: fuzzSeeds)
    func dtls(seed: UInt64) throws {
        var g = SeededGenerator(seed: seed)
        // Mid-handshake garbage may fail the handshake, but never crashes.
        let early = try DTLSPair()
        early.server.transport.start()
        early.client.transport.start()
        for _ in 0..<200 {
            var d = g.bytes(Int.random(in: 13..<200, using: &g))
            d[0] = UInt8.random(in: 20...25, using: &g)
            d[1] = 0xFE
            d[2] = 0xFD
            d[11] = 0
            d[12] = UInt8(d.count - 13)
            d.withUnsafeBytes { early.server.transport.handleDatagram($0) }
            g.mutate(d).withUnsafeBytes { early.client.transport.handleDatagram($0) }
        }
        early.run(maxTimerFires: 3)

        // After the handshake, well-formed-looking records with garbage inside are dropped
        // by OpenSSL (bad MAC) or by the scanner; the session keeps working.
        let p = try DTLSPair()
        p.server.transport.start()
        p.client.transport.start()
        p.run()
        #expect(p.client.connected && p.server.connected)
        for _ in 0..<500 {
            var d = g.bytes(Int.random(in: 13..<120, using: &g))
            d[0] = 23  // application_data
            d[1] = 0xFE
            d[2] = 0xFD
            d[3] = 0
            d[4] = 1  // epoch 1
            d[11] = 0
            d[12] = UInt8(d.count - 13)
            d.withUnsafeBytes { p.server.transport.handleDatagram($0) }
            g.bytes(Int.random(in: 0..<50, using: &g)).withUnsafeBytes { p.client.transport.handleDatagram($0) }
        }
        #expect(p.server.failure == nil && p.client.failure == nil)
        #expect(p.server.received.isEmpty)
        #expect(([1, 2, 3] as [UInt8]).withUnsafeBytes { p.client.transport.send($0) })
        p.run()
        #expect(p.server.received == [[1, 2, 3]])
    }

    @Test("SCTP: random chunks with valid checksums go into usrsctp without harm", arguments: fuzzSeeds)
    func sctp(seed: UInt64) async throws {
        let loop = GLibLoop(name: "fuzz-sctp")
        defer { loop.shutdown() }
        let result: (dropped: Int, sent: Int) = await withCheckedContinuation { c in
            loop.post {
                var g = SeededGenerator(seed: seed)
                final class Sink: SCTPTransportDelegate {
                    var sent = 0
                    func sctpSend(_ packet: UnsafeRawBufferPointer) { sent += 1 }
                    func sctpConnected() {}
                    func sctpClosed(failed: Bool) {}
                    func sctpChannelOpened(_ channel: DataChannelInfo) {}
                    func sctpChannelClosed(_ channel: DataChannelInfo) {}
                    func sctpMessage(_ channel: DataChannelInfo, data: [UInt8], binary: Bool) {}
                    func sctpSenderDry() {}
                }
                let sink = Sink()
                let t = SCTPTransport(loop: loop, localPort: 5000, remotePort: 5000, isDTLSClient: true, maxMessageSize: 65536, remoteMaxMessageSize: nil)
                t.delegate = sink
                try? t.start()
                for i in 0..<1000 {
                    // Common header (ports 5000 → 5000, random tag) + 1–3 random chunks.
                    var p: [UInt8] = [0x13, 0x88, 0x13, 0x88] + g.bytes(4) + [0, 0, 0, 0]
                    for _ in 0..<Int.random(in: 1...3, using: &g) {
                        let body = g.bytes(Int.random(in: 0..<40, using: &g))
                        let type = [0, 1, 2, 3, 6, 10, 11, 192, UInt8.random(in: 0...255, using: &g)][Int.random(in: 0..<9, using: &g)]
                        let len = 4 + body.count
                        p += [type, UInt8.random(in: 0...255, using: &g), UInt8(len >> 8), UInt8(len & 0xFF)] + body
                        while p.count % 4 != 0 { p.append(0) }
                    }
                    if i % 5 == 0 { p = g.mutate(p, edits: 2) }
                    if p.count >= 12 {
                        p[8] = 0; p[9] = 0; p[10] = 0; p[11] = 0
                        var crc = p.withUnsafeMutableBytes { usrsctp_crc32c($0.baseAddress, $0.count) }
                        withUnsafeBytes(of: &crc) { for k in 0..<4 { p[8 + k] = $0[k] } }
                    }
                    p.withUnsafeBytes { t.handleIncoming($0) }
                }
                t.close()
                c.resume(returning: (t.droppedPackets, sink.sent))
            }
        }
        // Structurally bad packets were stopped before usrsctp; the rest went in.
        #expect(result.dropped > 0 && result.dropped < 1000)
        #expect(result.sent > 0, "usrsctp answered nothing: checksums are probably wrong")
    }
}

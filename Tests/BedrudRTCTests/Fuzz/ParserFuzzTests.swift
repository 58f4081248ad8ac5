import BedrudProtocol
import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

/// SplitMix64: small, fast, reproducible from its seed.

/// Seeds each fuzz test runs with; a failing case names its seed in the test output.
let fuzzSeeds: [UInt64] = [1, 2, 3, 0xBEDD0D]

@Suite("Seeded random input: parsers never crash, refuse or report sanely")
struct ParserFuzzTests {
    @Test("SDP: random text and mutations of real offers", arguments: fuzzSeeds)
    func sdp(seed: UInt64) {
        var g = SeededGenerator(seed: seed)
        let corpus = [SDPFixtures.aiortcOffer, SDPFixtures.aiortcAnswer, SDPFixtures.liveKitSubscriberOffer].map { Array($0.utf8) }
        let local = LocalTransportParameters(iceUfrag: "u", icePassword: "p", fingerprint: DTLSFingerprint(algorithm: "sha-256", bytes: Array(repeating: 1, count: 32)), setup: .active)
        var parsed = 0
        for i in 0..<800 {
            let input: [UInt8]
            if i % 5 == 0 {
                input = g.bytes(Int.random(in: 0..<300, using: &g))
            } else {
                // Line-level and byte-level edits of a real SDP.
                var lines = String(decoding: corpus[i % corpus.count], as: UTF8.self).components(separatedBy: "\r\n")
                for _ in 0..<Int.random(in: 0...3, using: &g) where !lines.isEmpty {
                    let k = Int.random(in: 0..<lines.count, using: &g)
                    switch Int.random(in: 0..<3, using: &g) {
                    case 0: lines.remove(at: k)
                    case 1: lines.insert(lines[k], at: Int.random(in: 0...lines.count, using: &g))
                    default: lines[k] = String(decoding: g.mutate(Array(lines[k].utf8), edits: 2), as: UTF8.self)
                    }
                }
                input = g.mutate(Array(lines.joined(separator: "\r\n").utf8), edits: i % 3)
            }
            let text = String(decoding: input, as: UTF8.self)
            guard let sdp = try? SessionDescription(parsing: text) else { continue }
            parsed += 1
            // Whatever parses writes back to something that parses to the same value.
            #expect((try? SessionDescription(parsing: sdp.text)) == sdp, "seed \(seed) iteration \(i)")
            _ = try? RemoteTransportParameters(from: sdp)
            for m in sdp.media { _ = (m.ssrcs, m.rtpMaps, m.headerExtensions, m.fingerprints, m.sctpPort, m.direction, m.msid) }
            if let (answer, decisions) = try? SDPNegotiation.answer(to: sdp, local: local, policy: AnswerPolicy(), sessionID: 1, sessionVersion: 1) {
                #expect(answer.media.count == sdp.media.count)
                _ = RemoteTrack.tracks(in: sdp, decisions: decisions)
            }
        }
        #expect(parsed > 50)
    }

    @Test("ICE candidates, trickle JSON and server URLs", arguments: fuzzSeeds)
    func ice(seed: UInt64) {
        var g = SeededGenerator(seed: seed)
        let candidates = [
            "candidate:842163049 1 udp 1677729535 203.0.113.7 50123 typ srflx raddr 10.0.0.2 rport 50123 generation 0 ufrag abcd",
            "candidate:4 1 tcp 1518280447 2001:db8::1 7881 typ host tcptype passive",
        ].map { Array($0.utf8) }
        let json = Array(#"{"candidate":"candidate:1 1 udp 2130706431 203.0.113.7 50123 typ host","sdpMid":"0","sdpMLineIndex":0,"usernameFragment":null}"#.utf8)
        let urls = ["turn:203.0.113.7:3478?transport=udp", "turns:[2001:db8::1]:443?transport=tcp"].map { Array($0.utf8) }
        var accepted = 0
        for i in 0..<1500 {
            let c = String(decoding: i % 7 == 0 ? g.bytes(Int.random(in: 0..<80, using: &g)) : g.mutate(candidates[i % 2]), as: UTF8.self)
            if let parsed = try? ICECandidate(parsing: c) {
                accepted += 1
                #expect((try? ICECandidate(parsing: parsed.candidateString)) == parsed, "seed \(seed) iteration \(i)")
            }
            _ = ICECandidateInit(json: String(decoding: g.mutate(json), as: UTF8.self))
            _ = try? ICEServerURL(parsing: String(decoding: g.mutate(urls[i % 2]), as: UTF8.self))
        }
        #expect(accepted > 0)
    }

    @Test("RTP headers: absurd CSRC counts and extension lengths are refused, accepted ones stay in bounds", arguments: fuzzSeeds)
    func rtp(seed: UInt64) {
        var g = SeededGenerator(seed: seed)
        let valid = makeRTP(seq: 7, ts: 9, ssrc: 11, csrcs: [1], extensionBlock: (0xBEDE, [0x12, 1, 2, 3, 0x30, 9, 0, 0]), payload: Array(repeating: 0xAA, count: 30))
        var ok = 0
        for i in 0..<5000 {
            var p = i % 2 == 0 ? g.mutate(valid, edits: 3) : g.bytes(Int.random(in: 0..<64, using: &g))
            if i % 4 == 1, !p.isEmpty { p[0] = 0x80 | (p[0] & 0x3F) }  // version 2 so deeper checks run
            p.withUnsafeBytes { b in
                guard let h = try? RTPHeader.parse(b) else { return }
                ok += 1
                #expect(h.payloadOffset + h.payloadLength + h.paddingLength == b.count)
                #expect(h.payloadOffset >= 12 + 4 * h.csrcCount && h.payloadLength >= 0)
                let lo = h.extensionOffset, hi = h.extensionOffset + h.extensionLength
                h.forEachExtension(in: b) { _, d in
                    if d.count > 0 {
                        let start = d.baseAddress! - b.baseAddress!
                        #expect(start >= lo && start + d.count <= hi, "extension element outside its block (seed \(seed), iteration \(i))")
                    }
                }
            }
        }
        #expect(ok > 250)
    }

    @Test("RTCP compounds with wrong lengths never reach the callbacks; valid ones decode in bounds", arguments: fuzzSeeds)
    func rtcp(seed: UInt64) {
        var g = SeededGenerator(seed: seed)
        var base = [UInt8](repeating: 0, count: 300)
        let n = base.withUnsafeMutableBytes { b -> Int in
            var w = RTCPWriter(buffer: b)
            w.appendReceiverReport(senderSSRC: 1, blocks: [RTCPReportBlock(ssrc: 2, fractionLost: 1, cumulativeLost: 3, extendedHighestSequence: 4, jitter: 5, lastSenderReport: 6, delaySinceLastSenderReport: 7)])
            _ = Array("cname".utf8).withUnsafeBytes { w.appendSourceDescription(ssrc: 1, cname: $0) }
            _ = [UInt16(1), 2, 40].withUnsafeBufferPointer { w.appendNACK(senderSSRC: 1, mediaSSRC: 2, lost: $0) }
            w.appendPLI(senderSSRC: 1, mediaSSRC: 2)
            return w.count
        }
        let valid = Array(base[0..<n]) + [0x81, 203, 0, 1, 0, 0, 0, 9]
        var ok = 0
        for i in 0..<5000 {
            let p = i % 3 == 0 ? g.bytes(Int.random(in: 0..<80, using: &g)) : g.mutate(valid, edits: 3)
            p.withUnsafeBytes { b in
                do {
                    try RTCPCompound.forEach(b) { v in
                        #expect(v.bytes.count >= 4 && v.bytes.count <= b.count)
                        if let sr = RTCPSenderReport(v) { for k in 0..<sr.reportCount { _ = RTCPSenderReport.reportBlock(k, in: v) } }
                        for k in 0..<RTCPReceiverReport.reportCount(v) { _ = RTCPReceiverReport.reportBlock(k, in: v) }
                        RTCPGenericNACK.forEachLost(v) { _ in }
                        _ = RTCPPictureLossIndication.mediaSSRC(v)
                        RTCPGoodbye.forEachSource(v) { _ in }
                        RTCPSourceDescription.forEachItem(v) { _, _, d in
                            if d.count > 0 {
                                let start = d.baseAddress! - v.bytes.baseAddress!
                                #expect(start + d.count <= v.bytes.count)
                            }
                        }
                    }
                    ok += 1
                } catch {}
            }
        }
        #expect(ok > 250)
    }

    @Test("Datagram demux, DTLS records, SCTP packets and DCEP messages", arguments: fuzzSeeds)
    func smallCodecs(seed: UInt64) {
        var g = SeededGenerator(seed: seed)
        let dcep = DCEPMessage.open(label: "_reliable", protocol: "", reliability: .lossy, priority: 256).bytes
        let sctp = [UInt8](repeating: 0, count: 12) + [0, 3, 0, 20] + [UInt8](repeating: 7, count: 16) + [3, 0, 0, 16] + [UInt8](repeating: 0, count: 12)
        let dtls: [UInt8] = [22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4]
        for i in 0..<5000 {
            let r = g.bytes(Int.random(in: 0..<40, using: &g))
            r.withUnsafeBytes { _ = DatagramKind.classify($0) }
            for (valid, kind) in [(dcep, 0), (sctp, 1), (dtls, 2)] {
                let p = i % 4 == 0 ? r : g.mutate(valid, edits: 3)
                p.withUnsafeBytes { b in
                    switch kind {
                    case 0:
                        if let m = try? DCEPMessage(parsing: b), case .open = m { #expect((try? m.bytes.withUnsafeBytes { try DCEPMessage(parsing: $0) }) == m) }
                    case 1: _ = try? SCTPPacketValidator.validate(b)
                    default: _ = try? DTLSRecordScanner.validate(b)
                    }
                }
            }
        }
    }
}

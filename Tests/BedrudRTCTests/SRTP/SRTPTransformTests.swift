import Testing
import TestSupport
@testable import BedrudRTC

/// A pair of SRTP contexts that talk to each other (A's local key is B's remote key).
func srtpPair(_ profile: SRTPProfile) throws -> (LibSRTPTransform, LibSRTPTransform) {
    let n = profile.keyLength + profile.saltLength
    let k1 = (0..<n).map { UInt8($0) }
    let k2 = (0..<n).map { UInt8(200 - $0) }
    return (try LibSRTPTransform(profile: profile, localKey: k1, remoteKey: k2), try LibSRTPTransform(profile: profile, localKey: k2, remoteKey: k1))
}

/// Protects `packet` with `t` into a buffer with room for the trailer.
func protect(_ t: LibSRTPTransform, _ packet: [UInt8], rtcp: Bool = false) -> [UInt8]? {
    var buf = packet + [UInt8](repeating: 0, count: 200)
    let status = buf.withUnsafeMutableBytes { b in
        rtcp ? t.protectRTCP(b.baseAddress!, length: packet.count, capacity: b.count) : t.protectRTP(b.baseAddress!, length: packet.count, capacity: b.count)
    }
    guard case .ok(let n) = status else { return nil }
    return Array(buf[0..<n])
}

func unprotect(_ t: LibSRTPTransform, _ packet: [UInt8], rtcp: Bool = false) -> (SRTPStatus, [UInt8]) {
    var buf = packet
    let status = buf.withUnsafeMutableBytes { b -> SRTPStatus in
        guard let base = b.baseAddress else { return .malformed }
        return rtcp ? t.unprotectRTCP(base, length: b.count) : t.unprotectRTP(base, length: b.count)
    }
    if case .ok(let n) = status { return (status, Array(buf[0..<n])) }
    return (status, [])
}

@Suite("SRTP on libsrtp2")
struct SRTPTransformTests {
    @Test("Keying material splits as client key | server key | client salt | server salt (RFC 5764 §4.2)")
    func keying() throws {
        let p = SRTPProfile.aes128CMHMACSHA1_80
        let exported = (0..<60).map { UInt8($0) }
        let m = try #require(SRTPKeyingMaterial(profile: p, exported: exported))
        #expect(m.clientWriteKey == Array(0..<16) + Array(32..<46))
        #expect(m.serverWriteKey == Array(16..<32) + Array(46..<60))
        #expect(m.keys(isClient: true).local == m.clientWriteKey && m.keys(isClient: false).local == m.serverWriteKey)
        #expect(SRTPKeyingMaterial(profile: .aeadAES128GCM, exported: exported) == nil)
        #expect(SRTPKeyingMaterial(profile: .aeadAES128GCM, exported: Array(exported[0..<56])) != nil)
        #expect(SRTPProfile.openSSLList == "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80")
    }

    @Test("RTP and RTCP round-trip; tampering, short packets and replays are reported", arguments: SRTPProfile.allCases)
    func roundTrip(profile: SRTPProfile) throws {
        let (a, b) = try srtpPair(profile)
        let rtp = makeRTP(seq: 1000, ts: 48000, ssrc: 0x1234, payload: Array(repeating: 0x5A, count: 80))
        let protected = try #require(protect(a, rtp))
        #expect(protected.count == rtp.count + profile.rtpOverhead)
        #expect(Array(protected[12..<20]) != Array(rtp[12..<20]))  // payload is encrypted
        let (status, plain) = unprotect(b, protected)
        #expect(status == .ok(length: rtp.count) && plain == rtp)
        // The same packet again is a replay.
        #expect(unprotect(b, protected).0 == .replayed)
        // A flipped payload bit fails authentication.
        var tampered = try #require(protect(a, makeRTP(seq: 1001, ts: 48960, ssrc: 0x1234, payload: Array(repeating: 1, count: 40))))
        tampered[20] ^= 0x01
        #expect(unprotect(b, tampered).0 == .authenticationFailed)
        // Too short for a header and a tag.
        #expect(unprotect(b, Array(protected[0..<10])).0 == .malformed)
        #expect(unprotect(b, []).0 == .malformed)
        // A bad tag on a fresh sequence number.
        var badTag = try #require(protect(a, makeRTP(seq: 1002, ts: 1, ssrc: 0x1234)))
        badTag[badTag.count - 1] ^= 0xFF
        #expect(unprotect(b, badTag).0 == .authenticationFailed)
        // A new SSRC gets its own stream on first packet.
        let other = try #require(protect(a, makeRTP(seq: 5, ts: 1, ssrc: 0x9999)))
        #expect(unprotect(b, other).0 == .ok(length: other.count - profile.rtpOverhead))

        // RTCP: an RR.
        let rr: [UInt8] = [0x80, 201, 0, 1, 0, 0, 0, 7]
        let prr = try #require(protect(a, rr, rtcp: true))
        let (rs, plainRR) = unprotect(b, prr, rtcp: true)
        #expect(rs == .ok(length: 8) && plainRR == rr)
        var badRR = prr
        badRR[9] ^= 1
        #expect(unprotect(b, badRR, rtcp: true).0 != .ok(length: 8))
    }

    @Test("Keys of the wrong length are refused")
    func badKeys() {
        #expect(throws: SRTPError.self) { try LibSRTPTransform(profile: .aeadAES128GCM, localKey: [1, 2], remoteKey: [3]) }
    }
}

func hexBytes(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var i = s.startIndex
    while i < s.endIndex {
        let j = s.index(i, offsetBy: 2)
        out.append(UInt8(s[i..<j], radix: 16)!)
        i = j
    }
    return out
}

@Suite("SRTP AEAD_AES_128_GCM on OpenSSL EVP, checked against libsrtp2")
struct EVPGCMTests {
    @Test("SRTP key derivation: RFC 3711 Appendix B.3 vectors")
    func kdfVectors() throws {
        let key = hexBytes("E1F97A0D3E018BE0D64FA32C06DE4139")
        let salt = hexBytes("0EC675AD498AFEEBB6960B3AABE6")
        #expect(EVPGCMTransform.kdf(masterKey: key, masterSalt: salt, label: 0, length: 16) == hexBytes("C61E7A93744F39EE10734AFE3FF7A087"))
        #expect(EVPGCMTransform.kdf(masterKey: key, masterSalt: salt, label: 2, length: 14) == hexBytes("30CBBC08863D8C85D49DB34A9AE1"))
        #expect(EVPGCMTransform.kdf(masterKey: key, masterSalt: salt, label: 1, length: 20) == hexBytes("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
    }

    func pair() throws -> (evp: EVPGCMTransform, lib: LibSRTPTransform) {
        let k1 = (0..<28).map { UInt8(($0 * 37 + 11) & 0xFF) }
        let k2 = (0..<28).map { UInt8(($0 * 91 + 3) & 0xFF) }
        return (try EVPGCMTransform(localKey: k1, remoteKey: k2), try LibSRTPTransform(profile: .aeadAES128GCM, localKey: k2, remoteKey: k1))
    }

    func protectWith(_ t: any SRTPTransform, _ packet: [UInt8], rtcp: Bool = false) -> [UInt8]? {
        var buf = packet + [UInt8](repeating: 0, count: 200)
        let s = buf.withUnsafeMutableBytes { b in
            rtcp ? t.protectRTCP(b.baseAddress!, length: packet.count, capacity: b.count) : t.protectRTP(b.baseAddress!, length: packet.count, capacity: b.count)
        }
        guard case .ok(let n) = s else { return nil }
        return Array(buf[0..<n])
    }

    func unprotectWith(_ t: any SRTPTransform, _ packet: [UInt8], rtcp: Bool = false) -> (SRTPStatus, [UInt8]) {
        var buf = packet
        let s = buf.withUnsafeMutableBytes { b -> SRTPStatus in
            guard let p = b.baseAddress else { return .malformed }
            return rtcp ? t.unprotectRTCP(p, length: b.count) : t.unprotectRTP(p, length: b.count)
        }
        if case .ok(let n) = s { return (s, Array(buf[0..<n])) }
        return (s, [])
    }

    @Test("RTP both ways across a sequence-number wrap, with CSRCs and extensions, several SSRCs")
    func rtpInterop() throws {
        let (evp, lib) = try pair()
        for ssrc: UInt32 in [0x1111_1111, 0xDEAD_BEEF, 7] {
            for k in 0..<400 {
                let seq = UInt16(truncatingIfNeeded: 65_300 + k)
                let ext: (UInt16, [UInt8])? = k % 3 == 0 ? (0xBEDE, [0x10, 0xAB, 0, 0]) : nil
                let rtp = makeRTP(seq: seq, ts: UInt32(k * 960), ssrc: ssrc, csrcs: k % 5 == 0 ? [1, 2] : [], extensionBlock: ext, payload: (0..<(k % 90 + 1)).map { UInt8(truncatingIfNeeded: $0 + k) })
                let fromLib = try #require(protectWith(lib, rtp))
                let (s1, p1) = unprotectWith(evp, fromLib)
                #expect(s1 == .ok(length: rtp.count) && p1 == rtp, "libsrtp → EVP, SSRC \(ssrc) seq \(seq)")
                let fromEVP = try #require(protectWith(evp, rtp))
                let (s2, p2) = unprotectWith(lib, fromEVP)
                #expect(s2 == .ok(length: rtp.count) && p2 == rtp, "EVP → libsrtp, SSRC \(ssrc) seq \(seq)")
            }
        }
    }

    @Test("RTCP both ways; replays, tampering and truncation are refused")
    func rtcpAndErrors() throws {
        let (evp, lib) = try pair()
        for k in 0..<50 {
            let rr: [UInt8] = [0x81, 201, 0, 7, 0, 0, 0, UInt8(k)] + [UInt8](repeating: UInt8(k), count: 24)
            let fromLib = try #require(protectWith(lib, rr, rtcp: true))
            #expect(unprotectWith(evp, fromLib, rtcp: true).1 == rr)
            #expect(unprotectWith(evp, fromLib, rtcp: true).0 == .replayed)
            let fromEVP = try #require(protectWith(evp, rr, rtcp: true))
            #expect(unprotectWith(lib, fromEVP, rtcp: true).1 == rr)
        }
        let rtp = makeRTP(seq: 10, ts: 1, ssrc: 99, payload: Array(repeating: 1, count: 50))
        let sealed = try #require(protectWith(lib, rtp))
        let ancient = try #require(protectWith(lib, makeRTP(seq: 11, ts: 1, ssrc: 99)))
        var tampered = sealed
        tampered[30] ^= 4
        #expect(unprotectWith(evp, tampered).0 == .authenticationFailed)
        var badHeader = sealed
        badHeader[1] ^= 1  // the header is authenticated too
        #expect(unprotectWith(evp, badHeader).0 == .authenticationFailed)
        #expect(unprotectWith(evp, Array(sealed[0..<20])).0 == .malformed)
        #expect(unprotectWith(evp, sealed).0 == .ok(length: rtp.count))
        #expect(unprotectWith(evp, sealed).0 == .replayed)
        // Late but inside the window is fine; older than the window is refused.
        let later = try #require(protectWith(lib, makeRTP(seq: 2000, ts: 1, ssrc: 99)))
        #expect(unprotectWith(evp, later).0 == .ok(length: later.count - 16))
        let late = try #require(protectWith(lib, makeRTP(seq: 1500, ts: 1, ssrc: 99)))
        #expect(unprotectWith(evp, late).0 == .ok(length: late.count - 16))
        #expect(unprotectWith(evp, ancient).0 == .replayed)
    }

    @Test("Random input never authenticates", arguments: fuzzSeeds)
    func fuzz(seed: UInt64) throws {
        var g = SeededGenerator(seed: seed)
        let (evp, lib) = try pair()
        let good = try #require(protectWith(lib, makeRTP(seq: 1, ts: 1, ssrc: 5, payload: Array(repeating: 3, count: 60))))
        for i in 0..<2000 {
            var p = i % 2 == 0 ? g.bytes(Int.random(in: 0..<120, using: &g)) : g.mutate(good, edits: 2)
            if i % 3 == 0, !p.isEmpty { p[0] = 0x80 | (p[0] & 0x3F) }
            if p == good { continue }
            if case .ok = unprotectWith(evp, p, rtcp: i % 5 == 0).0 { Issue.record("garbage authenticated (seed \(seed), iteration \(i))") }
        }
    }
}

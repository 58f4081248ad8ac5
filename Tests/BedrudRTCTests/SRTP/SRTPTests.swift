import Testing
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
struct SRTPTests {
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

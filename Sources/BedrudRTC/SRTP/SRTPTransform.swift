// The SRTP/SRTCP (RFC 3711, RFC 7714) interface the packet path uses. Two implementations:
// LibSRTPTransform (libsrtp2; Debian builds it on NSS, which allocates several times per
// packet) and EVPGCMTransform (AEAD_AES_128_GCM on OpenSSL EVP, no allocation per packet),
// for which libsrtp2 is the test oracle. SRTPBackend picks one per negotiated profile.

/// DTLS-SRTP protection profiles (RFC 5764 §4.1.2, RFC 7714 §14.2) we negotiate,
/// in order of preference.
public enum SRTPProfile: UInt16, Sendable, CaseIterable, CustomStringConvertible {
    case aeadAES128GCM = 0x0007
    case aes128CMHMACSHA1_80 = 0x0001

    /// Master key bytes.
    public var keyLength: Int { 16 }
    /// Master salt bytes.
    public var saltLength: Int { self == .aeadAES128GCM ? 12 : 14 }
    /// Bytes an SRTP packet grows by (auth tag).
    public var rtpOverhead: Int { self == .aeadAES128GCM ? 16 : 10 }
    /// Name as OpenSSL's `use_srtp` list spells it.
    public var openSSLName: String { self == .aeadAES128GCM ? "SRTP_AEAD_AES_128_GCM" : "SRTP_AES128_CM_SHA1_80" }
    public var description: String { openSSLName }

    /// Colon-separated list for `SSL_CTX_set_tlsext_use_srtp`, preferred first.
    public static var openSSLList: String { allCases.map(\.openSSLName).joined(separator: ":") }
}

/// Master keys for both directions, split from the DTLS exporter output
/// (`EXTRACTOR-dtls_srtp`, RFC 5764 §4.2): client key | server key | client salt | server salt.
public struct SRTPKeyingMaterial: Sendable {
    public let profile: SRTPProfile
    /// key || salt the DTLS client uses to protect (and the server to unprotect).
    public let clientWriteKey: [UInt8]
    /// key || salt the DTLS server uses to protect.
    public let serverWriteKey: [UInt8]

    /// Splits `exported` (2 × (key + salt) bytes); nil if the length is wrong.
    public init?(profile: SRTPProfile, exported: [UInt8]) {
        let k = profile.keyLength, s = profile.saltLength
        guard exported.count == 2 * (k + s) else { return nil }
        self.profile = profile
        clientWriteKey = Array(exported[0..<k]) + Array(exported[(2 * k)..<(2 * k + s)])
        serverWriteKey = Array(exported[k..<(2 * k)]) + Array(exported[(2 * k + s)..<(2 * k + 2 * s)])
    }

    /// Our sending key and the peer's, given our DTLS role.
    public func keys(isClient: Bool) -> (local: [UInt8], remote: [UInt8]) {
        isClient ? (clientWriteKey, serverWriteKey) : (serverWriteKey, clientWriteKey)
    }
}

/// Outcome of one protect/unprotect call.
public enum SRTPStatus: Sendable, Equatable {
    /// Done; the packet now has this many bytes.
    case ok(length: Int)
    /// Authentication failed (tampered, wrong key, or garbage).
    case authenticationFailed
    /// Seen before, or too old for the replay window.
    case replayed
    /// Too short or otherwise not an SRTP packet.
    case malformed
    /// Any other library failure (counted, not fatal).
    case failed(code: Int32)
}

/// One direction-pair SRTP context: protects what we send, unprotects what we receive.
/// Streams for new SSRCs are created on their first packet.
///
/// Thread contract: confined to the thread that owns the transport (the ICE loop).
/// Calls work in place on the caller's buffer and must not allocate in an
/// implementation meant for the packet path.
public protocol SRTPTransform: AnyObject {
    var profile: SRTPProfile { get }
    /// Decrypts and verifies an SRTP packet of `length` bytes at `buffer` in place.
    func unprotectRTP(_ buffer: UnsafeMutableRawPointer, length: Int) -> SRTPStatus
    /// Same for SRTCP.
    func unprotectRTCP(_ buffer: UnsafeMutableRawPointer, length: Int) -> SRTPStatus
    /// Encrypts an RTP packet in place; `capacity` must leave room for the tag (see ``SRTPProfile/rtpOverhead``; SRTCP adds 4 more).
    func protectRTP(_ buffer: UnsafeMutableRawPointer, length: Int, capacity: Int) -> SRTPStatus
    /// Same for RTCP.
    func protectRTCP(_ buffer: UnsafeMutableRawPointer, length: Int, capacity: Int) -> SRTPStatus
}

/// Which implementation protects and unprotects.
public enum SRTPBackend: String, Sendable, Equatable {
    /// ``EVPGCMTransform`` (OpenSSL EVP, no allocation per packet) for AEAD_AES_128_GCM,
    /// libsrtp2 for AES128_CM_SHA1_80.
    case openSSLForGCM
    /// libsrtp2 for every profile.
    case libsrtp

    /// A transform for `profile` with these keys (key || salt each).
    public func makeTransform(profile: SRTPProfile, localKey: [UInt8], remoteKey: [UInt8]) throws(SRTPError) -> any SRTPTransform {
        if self == .openSSLForGCM, profile == .aeadAES128GCM {
            return try EVPGCMTransform(localKey: localKey, remoteKey: remoteKey)
        }
        return try LibSRTPTransform(profile: profile, localKey: localKey, remoteKey: remoteKey)
    }
}

/// Leaves packets as they are: what the packet path costs without SRTP (the RTC benchmark's
/// baseline), or a sender's pacing with SRTP out of the way (its tests). Never on a real
/// connection, hence `package`.
package final class IdentitySRTPTransform: SRTPTransform {
    package init() {}
    package var profile: SRTPProfile { .aeadAES128GCM }
    package func unprotectRTP(_ buffer: UnsafeMutableRawPointer, length: Int) -> SRTPStatus { .ok(length: length) }
    package func unprotectRTCP(_ buffer: UnsafeMutableRawPointer, length: Int) -> SRTPStatus { .ok(length: length) }
    package func protectRTP(_ buffer: UnsafeMutableRawPointer, length: Int, capacity: Int) -> SRTPStatus { .ok(length: length) }
    package func protectRTCP(_ buffer: UnsafeMutableRawPointer, length: Int, capacity: Int) -> SRTPStatus { .ok(length: length) }
}

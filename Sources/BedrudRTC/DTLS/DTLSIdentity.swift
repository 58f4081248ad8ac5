import COpenSSL

/// A self-signed ECDSA P-256 certificate and key for DTLS (RFC 8827 §6.5: WebRTC peers
/// authenticate by the certificate fingerprint in SDP, not by a CA).
///
/// One per session; fields never change after init, and OpenSSL's certificate and key
/// objects are reference-counted and safe to share read-only.
public final class DTLSIdentity: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init and the OpenSSL objects
    // are only read (SSL_CTX_use_certificate takes its own reference).
    let certificate: OpaquePointer
    let privateKey: OpaquePointer
    /// SHA-256 fingerprint for `a=fingerprint`.
    public let fingerprint: DTLSFingerprint

    /// Generates a new key and certificate valid from a day ago for `validityDays`.
    public init(commonName: String = "bedrud-bot", validityDays: Int = 30) throws(DTLSError) {
        guard let key = shim_EVP_EC_gen_P256() else { throw DTLSError(.setup("EC key generation failed: \(OpenSSLErrors.drain())")) }
        guard let x = X509_new() else {
            EVP_PKEY_free(key)
            throw DTLSError(.setup("X509_new failed"))
        }
        var ok = X509_set_version(x, 2) == 1
        var serial: Int = 0
        withUnsafeMutableBytes(of: &serial) { _ = RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32($0.count)) }
        ok = ok && ASN1_INTEGER_set(X509_get_serialNumber(x), serial & 0x7FFF_FFFF) == 1
        ok = ok && X509_gmtime_adj(X509_getm_notBefore(x), -86_400) != nil
        ok = ok && X509_gmtime_adj(X509_getm_notAfter(x), validityDays * 86_400) != nil
        ok = ok && X509_set_pubkey(x, key) == 1
        if let name = X509_get_subject_name(x) {
            ok = ok && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1
            ok = ok && X509_set_issuer_name(x, name) == 1
        } else {
            ok = false
        }
        ok = ok && X509_sign(x, key, EVP_sha256()) > 0
        guard ok, let fp = Self.digest(of: x, algorithm: "sha-256") else {
            X509_free(x)
            EVP_PKEY_free(key)
            throw DTLSError(.setup("self-signed certificate could not be built: \(OpenSSLErrors.drain())"))
        }
        certificate = x
        privateKey = key
        fingerprint = fp
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(privateKey)
    }

    /// The fingerprint of `cert` with an SDP hash name (`sha-1`, `sha-224`, `sha-256`, `sha-384`, `sha-512`).
    static func digest(of cert: OpaquePointer, algorithm: String) -> DTLSFingerprint? {
        let md: OpaquePointer?
        switch algorithm.lowercased() {
        case "sha-1": md = EVP_sha1()
        case "sha-224": md = EVP_sha224()
        case "sha-256": md = EVP_sha256()
        case "sha-384": md = EVP_sha384()
        case "sha-512": md = EVP_sha512()
        default: md = nil
        }
        guard let md else { return nil }
        var buf = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var len: UInt32 = 0
        guard X509_digest(cert, md, &buf, &len) == 1 else { return nil }
        return DTLSFingerprint(algorithm: algorithm, bytes: Array(buf[0..<Int(len)]))
    }
}

/// Reads OpenSSL's thread-local error queue into one line.
enum OpenSSLErrors {
    /// What ``drain()`` returns when the queue is empty.
    static let none = "no OpenSSL error recorded"

    static func drain() -> String {
        var parts: [String] = []
        while true {
            let e = ERR_get_error()
            if e == 0 { break }
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(e, &buf, buf.count)
            parts.append(buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
            if parts.count >= 4 { ERR_clear_error(); break }
        }
        return parts.isEmpty ? none : parts.joined(separator: "; ")
    }
}

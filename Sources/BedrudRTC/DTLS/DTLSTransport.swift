import COpenSSL

/// DTLS role (RFC 5763 §5): `a=setup:active` is the client.
public enum DTLSRole: String, Sendable, Equatable {
    case client, server
}

/// DTLS connection state as events report it.
public enum DTLSState: String, Sendable, Equatable {
    case new, connecting, connected, closed, failed
}

/// What a ``DTLSTransport`` asks of its owner. Called on the owner's thread, from inside
/// `start`, `handleDatagram`, `handleTimeout` or `send`.
protocol DTLSTransportDelegate: AnyObject {
    /// Send one datagram (a whole DTLS flight fragment) to the peer.
    func dtlsSend(_ datagram: UnsafeRawBufferPointer)
    /// Arm the retransmission timer for `nanos` from now, or cancel it (nil).
    func dtlsSetTimer(nanos: UInt64?)
    /// The handshake finished and the peer's certificate matched; SRTP keys are ready.
    func dtlsConnected(keys: SRTPKeyingMaterial?)
    /// Decrypted application data (SCTP packets).
    func dtlsReceived(_ data: UnsafeRawBufferPointer)
    /// The connection failed (handshake error, fingerprint mismatch, fatal alert).
    func dtlsFailed(_ error: DTLSError)
    /// The peer sent close_notify.
    func dtlsClosed()
}

/// DTLS 1.2 over the ICE transport with OpenSSL (RFC 6347, DTLS-SRTP RFC 5764).
///
/// Reads go through a memory BIO fed by ``handleDatagram(_:)``; writes go through a custom
/// BIO straight to the delegate, one datagram per write. The first retransmission is
/// after 100 ms (OpenSSL's default is 1 s), doubling up to 60 s.
///
/// Invalid records are discarded, never fatal (RFC 6347 §4.1.2.7): anyone who can send
/// a UDP datagram to our port could otherwise end the session. OpenSSL discards most of
/// them itself, but not all; see ``admit(_:)`` for the ones we take out first.
///
/// Thread contract: confined to the owner's thread (the ICE loop). Not Sendable.
final class DTLSTransport {
    let role: DTLSRole
    private(set) var state: DTLSState = .new
    private let ctx: OpaquePointer
    private let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    weak var delegate: (any DTLSTransportDelegate)?
    /// Fingerprints the peer's certificate must match (all usable ones, RFC 8122 §5).
    private(set) var remoteFingerprints: [DTLSFingerprint]
    /// Set by the verify callback when the peer's certificate did not match.
    fileprivate var mismatch: DTLSFingerprint?
    fileprivate var verified = false
    private var readBuffer = [UInt8](repeating: 0, count: 65_536)
    /// The records of a datagram that ``admit(_:)`` let through, when it dropped some
    /// (grows once to the largest such datagram, then keeps its capacity).
    private var admitted: [UInt8] = []
    /// Datagrams refused before OpenSSL, in whole (malformed) or in part (records that
    /// cannot be valid, see ``admit(_:)``).
    private(set) var droppedDatagrams = 0
    /// Records taken out of datagrams by ``admit(_:)`` before OpenSSL saw them.
    private(set) var droppedRecords = 0
    /// Selected SRTP profile after the handshake.
    private(set) var srtpProfile: SRTPProfile?

    static let mtu = 1200

    init(identity: DTLSIdentity, role: DTLSRole, remoteFingerprints: [DTLSFingerprint], profiles: [SRTPProfile] = SRTPProfile.allCases) throws(DTLSError) {
        self.role = role
        self.remoteFingerprints = remoteFingerprints
        ERR_clear_error()
        guard let ctx = SSL_CTX_new(DTLS_method()) else { throw DTLSError(.setup("SSL_CTX_new failed: \(OpenSSLErrors.drain())")) }
        var ok = shim_SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION) == 1
        ok = ok && shim_SSL_CTX_set_max_proto_version(ctx, DTLS1_2_VERSION) == 1
        ok = ok && SSL_CTX_use_certificate(ctx, identity.certificate) == 1
        ok = ok && SSL_CTX_use_PrivateKey(ctx, identity.privateKey) == 1
        ok = ok && SSL_CTX_check_private_key(ctx) == 1
        // Inverted convention: 0 means success.
        let list = (profiles.isEmpty ? SRTPProfile.allCases : profiles).map(\.openSSLName).joined(separator: ":")
        ok = ok && SSL_CTX_set_tlsext_use_srtp(ctx, list) == 0
        ok = ok && SSL_CTX_set_cipher_list(ctx, "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305") == 1
        ok = ok && shim_SSL_CTX_set1_groups_list(ctx, "X25519:P-256:P-384") == 1
        guard ok else {
            SSL_CTX_free(ctx)
            throw DTLSError(.setup("DTLS context setup failed: \(OpenSSLErrors.drain())"))
        }
        SSL_CTX_set_options(ctx, shim_SSL_OP_NO_QUERY_MTU | shim_SSL_OP_NO_RENEGOTIATION)
        SSL_CTX_set_verify(ctx, shim_SSL_VERIFY_PEER_FAIL_IF_NO_PEER_CERT, dtlsVerifyCallback)

        guard let ssl = SSL_new(ctx), let rbio = BIO_new(BIO_s_mem()), let wbio = BIO_new(DTLSWriteBIO.method) else {
            SSL_CTX_free(ctx)
            throw DTLSError(.setup("SSL/BIO allocation failed: \(OpenSSLErrors.drain())"))
        }
        _ = shim_BIO_set_mem_eof_return(rbio, -1)
        SSL_set_bio(ssl, rbio, wbio)  // ssl owns both BIOs now
        self.ctx = ctx
        self.ssl = ssl
        self.readBIO = rbio
        _ = shim_SSL_set_mtu(ssl, DTLSTransport.mtu)
        DTLS_set_timer_cb(ssl, dtlsTimerCallback)
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = shim_SSL_set_app_data(ssl, me)
        BIO_set_data(wbio, me)
        if role == .client { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(ctx)
    }

    /// Starts the handshake (a client sends its ClientHello now; a server waits).
    func start() {
        guard state == .new else { return }
        state = .connecting
        if role == .client { advanceHandshake() }
    }

    /// Replaces the expected fingerprints (a re-offer may list them again); only before the handshake ends.
    func updateRemoteFingerprints(_ f: [DTLSFingerprint]) {
        if state == .new || state == .connecting { remoteFingerprints = f }
    }

    /// Feeds one received DTLS datagram.
    func handleDatagram(_ datagram: UnsafeRawBufferPointer) {
        guard state == .connecting || state == .connected || state == .new else { return }
        do {
            _ = try DTLSRecordScanner.validate(datagram)
        } catch {
            droppedDatagrams += 1
            return
        }
        if state == .new {
            // A server that has not been started yet still accepts the first ClientHello.
            guard role == .server else { droppedDatagrams += 1; return }
            state = .connecting
        }
        let written: Bool
        switch admit(datagram) {
        case .all:
            written = BIO_write(readBIO, datagram.baseAddress, Int32(datagram.count)) == Int32(datagram.count)
        case .some:
            droppedDatagrams += 1
            written = admitted.withUnsafeBytes { BIO_write(readBIO, $0.baseAddress, Int32($0.count)) == Int32($0.count) }
        case .none:
            droppedDatagrams += 1
            return
        }
        guard written else {
            droppedDatagrams += 1
            return
        }
        if state == .connecting {
            advanceHandshake()
        }
        if state == .connected {
            readApplicationData()
        }
    }

    /// Called when the timer requested through the delegate fires.
    func handleTimeout() {
        guard state == .connecting else { return }
        ERR_clear_error()
        if shim_DTLSv1_handle_timeout(ssl) < 0 {
            fail(DTLSError(.handshake("retransmission failed: \(OpenSSLErrors.drain())")))
            return
        }
        scheduleTimer()
    }

    /// Encrypts and sends application data (one SCTP packet). Returns false if not connected or failed.
    @discardableResult
    func send(_ data: UnsafeRawBufferPointer) -> Bool {
        guard state == .connected, let base = data.baseAddress, data.count > 0 else { return false }
        ERR_clear_error()
        return SSL_write(ssl, base, Int32(data.count)) == Int32(data.count)
    }

    /// Sends close_notify (if connected) and stops.
    func close() {
        if state == .connected {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
        }
        if state != .failed { state = .closed }
        delegate?.dtlsSetTimer(nanos: nil)
    }

    // MARK: - Records OpenSSL would not survive

    /// What ``admit(_:)`` kept of a datagram.
    private enum Admission { case all, some, none }

    /// Smallest body of a protected (epoch ≥ 1) record under the negotiated AEAD: the
    /// explicit nonce and the tag, with zero bytes of plaintext. AES-GCM (RFC 5288 §3):
    /// 8 + 16; ChaCha20-Poly1305 (RFC 7905 §2): 16. Before a suite is chosen, the larger.
    static func minimumProtectedBody(cipherNID: Int32?) -> Int {
        switch cipherNID {
        case NID_chacha20_poly1305: Int(EVP_CHACHAPOLY_TLS_TAG_LEN)
        default: Int(EVP_GCM_TLS_EXPLICIT_IV_LEN + EVP_GCM_TLS_TAG_LEN)
        }
    }

    /// Takes out of a structurally valid datagram the records that cannot be valid and
    /// that OpenSSL 3.0 (3.0.19 here) would end the session over instead of discarding
    /// them: protected (epoch ≥ 1) records shorter than the AEAD's nonce + tag.
    ///
    /// OpenSSL's `tls1_enc` hands the record's additional data to the cipher
    /// (`EVP_CTRL_AEAD_TLS1_AAD`); the AES-GCM and ChaCha20-Poly1305 providers refuse a
    /// length below their overhead, and `tls1_enc` turns that refusal into a fatal
    /// internal_error (`SSLfatal`), which also sends the peer a fatal alert and so ends
    /// its side too. `dtls1_process_record` wraps decryption in `ERR_set_mark` /
    /// `ERR_pop_to_mark`, which pops the error `SSLfatal` just raised: `SSL_read` returns
    /// -1, SSL_ERROR_SYSCALL, with an empty error queue (openssl/openssl#25290).
    ///
    /// Every other invalid record we could produce (bad tag, wrong or future epoch,
    /// replayed sequence number, wrong version, oversized) OpenSSL discards itself.
    /// Thirteen bytes of header and a body of the stated length are guaranteed by
    /// ``DTLSRecordScanner``, which ran first.
    private func admit(_ datagram: UnsafeRawBufferPointer) -> Admission {
        var minimumProtected: Int?
        var o = 0
        var kept = 0
        var dropped = false
        while o + 13 <= datagram.count {
            let epoch = datagram.loadBE16(at: o + 3)
            let length = Int(datagram.loadBE16(at: o + 11))
            let end = min(datagram.count, o + 13 + length)
            var valid = true
            if epoch != 0 {
                let minimum = minimumProtected ?? Self.minimumProtectedBody(cipherNID: negotiatedCipherNID)
                minimumProtected = minimum
                valid = length >= minimum
            }
            if valid {
                if dropped { admitted.append(contentsOf: datagram[o..<end]) }
                kept += 1
            } else {
                if !dropped {
                    admitted.removeAll(keepingCapacity: true)
                    admitted.append(contentsOf: datagram[0..<o])
                    dropped = true
                }
                droppedRecords += 1
            }
            o = end
        }
        return !dropped ? .all : kept > 0 ? .some : .none
    }

    /// The AEAD of the negotiated suite, once OpenSSL has chosen one.
    private var negotiatedCipherNID: Int32? {
        guard let cipher = SSL_get_current_cipher(ssl) else { return nil }
        return SSL_CIPHER_get_cipher_nid(cipher)
    }

    // MARK: - Internals

    private func advanceHandshake() {
        ERR_clear_error()
        let r = SSL_do_handshake(ssl)
        if r == 1 {
            handshakeDone()
            return
        }
        let err = SSL_get_error(ssl, r)
        if err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE {
            scheduleTimer()
            return
        }
        if let m = mismatch {
            fail(DTLSError(.fingerprintMismatch(expected: remoteFingerprints, actual: m)))
        } else {
            fail(DTLSError(.handshake(OpenSSLErrors.drain())))
        }
    }

    private func handshakeDone() {
        delegate?.dtlsSetTimer(nanos: nil)
        // The verify callback runs during the handshake; a peer that sent no certificate
        // never reaches it (FAIL_IF_NO_PEER_CERT), but check once more here.
        guard verified, let cert = SSL_get1_peer_certificate(ssl) else {
            fail(DTLSError(.handshake("peer presented no certificate")))
            return
        }
        defer { X509_free(cert) }
        guard Self.matches(cert, remoteFingerprints) != nil else {
            let actual = DTLSIdentity.digest(of: cert, algorithm: "sha-256")
            fail(DTLSError(.fingerprintMismatch(expected: remoteFingerprints, actual: actual)))
            return
        }
        var keys: SRTPKeyingMaterial?
        if let p = SSL_get_selected_srtp_profile(ssl), let profile = SRTPProfile(rawValue: UInt16(truncatingIfNeeded: p.pointee.id)) {
            var out = [UInt8](repeating: 0, count: 2 * (profile.keyLength + profile.saltLength))
            let label = "EXTRACTOR-dtls_srtp"
            let ok = SSL_export_keying_material(ssl, &out, out.count, label, label.utf8.count, nil, 0, 0) == 1
            if ok { keys = SRTPKeyingMaterial(profile: profile, exported: out) }
            for i in out.indices { out[i] = 0 }
            srtpProfile = profile
        }
        state = .connected
        delegate?.dtlsConnected(keys: keys)
    }

    private func readApplicationData() {
        while state == .connected {
            ERR_clear_error()
            let n = readBuffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if n > 0 {
                readBuffer.withUnsafeBytes { delegate?.dtlsReceived(UnsafeRawBufferPointer(rebasing: $0[0..<Int(n)])) }
                continue
            }
            let err = SSL_get_error(ssl, n)
            switch err {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return
            case SSL_ERROR_ZERO_RETURN:
                state = .closed
                delegate?.dtlsClosed()
                return
            default:
                // OpenSSL can end a session without leaving an error behind (see admit(_:)).
                let recorded = OpenSSLErrors.drain()
                fail(DTLSError(.connection(err == SSL_ERROR_SYSCALL && recorded == OpenSSLErrors.none
                    ? "OpenSSL ended the session (SSL_ERROR_SYSCALL) and recorded no error" : recorded)))
                return
            }
        }
    }

    private func scheduleTimer() {
        var tv = timeval()
        if shim_DTLSv1_get_timeout(ssl, &tv) == 1 {
            let ns = UInt64(max(0, tv.tv_sec)) * 1_000_000_000 + UInt64(max(0, tv.tv_usec)) * 1000
            delegate?.dtlsSetTimer(nanos: max(ns, 1_000_000))
        } else {
            delegate?.dtlsSetTimer(nanos: nil)
        }
    }

    private func fail(_ e: DTLSError) {
        guard state != .failed else { return }
        state = .failed
        delegate?.dtlsSetTimer(nanos: nil)
        delegate?.dtlsFailed(e)
    }

    /// The first expected fingerprint that `cert` matches, if any. Every fingerprint with
    /// a hash we support must match (as aiortc and libwebrtc require); unsupported ones are skipped.
    static func matches(_ cert: OpaquePointer, _ expected: [DTLSFingerprint]) -> DTLSFingerprint? {
        var matched: DTLSFingerprint?
        for f in expected {
            guard let actual = DTLSIdentity.digest(of: cert, algorithm: f.algorithm) else { continue }
            guard actual.bytes == f.bytes else { return nil }
            matched = matched ?? f
        }
        return matched
    }

    fileprivate func verifyPeer(_ cert: OpaquePointer) -> Bool {
        if Self.matches(cert, remoteFingerprints) != nil {
            verified = true
            return true
        }
        mismatch = DTLSIdentity.digest(of: cert, algorithm: remoteFingerprints.first?.algorithm ?? "sha-256")
        return false
    }

    fileprivate func writeDatagram(_ p: UnsafeRawBufferPointer) { delegate?.dtlsSend(p) }
}

// MARK: - OpenSSL callbacks (no captures; the transport is found through app data)

private let dtlsVerifyCallback: @convention(c) (Int32, OpaquePointer?) -> Int32 = { _, store in
    guard let store, let ssl = shim_X509_STORE_CTX_get_ssl(store), let me = shim_SSL_get_app_data(ssl) else { return 0 }
    // Self-signed certificates fail chain verification by design; the SDP fingerprint
    // is the trust anchor, checked for the leaf only.
    guard X509_STORE_CTX_get_error_depth(store) == 0 else { return 1 }
    guard let cert = X509_STORE_CTX_get_current_cert(store) else { return 0 }
    let t = Unmanaged<DTLSTransport>.fromOpaque(me).takeUnretainedValue()
    return t.verifyPeer(cert) ? 1 : 0
}

private let dtlsTimerCallback: @convention(c) (OpaquePointer?, UInt32) -> UInt32 = { _, previous in
    previous == 0 ? 100_000 : min(previous &* 2, 60_000_000)
}

/// The write-side BIO: each write is one datagram handed to the transport's delegate.
enum DTLSWriteBIO {
    nonisolated(unsafe) static let method: OpaquePointer = {
        let m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "bedrud-dtls-datagram")!
        BIO_meth_set_write(m) { bio, data, len in
            guard let bio, let data, len > 0, let me = BIO_get_data(bio) else { return len }
            let t = Unmanaged<DTLSTransport>.fromOpaque(me).takeUnretainedValue()
            t.writeDatagram(UnsafeRawBufferPointer(start: data, count: Int(len)))
            return len
        }
        BIO_meth_set_ctrl(m) { _, cmd, _, _ in
            switch cmd {
            case BIO_CTRL_FLUSH: return 1
            case BIO_CTRL_DGRAM_QUERY_MTU: return DTLSTransport.mtu
            case BIO_CTRL_WPENDING, BIO_CTRL_PENDING: return 0
            default: return 0
            }
        }
        BIO_meth_set_create(m) { bio in
            BIO_set_init(bio, 1)
            return 1
        }
        BIO_meth_set_destroy(m) { bio in
            BIO_set_data(bio, nil)
            return 1
        }
        return m
    }()
}

/// Why DTLS failed.
public struct DTLSError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: Sendable, Equatable {
        case setup(String)
        case handshake(String)
        case connection(String)
        case fingerprintMismatch(expected: [DTLSFingerprint], actual: DTLSFingerprint?)
        case timeout
    }
    let code: Code
    init(_ code: Code) { self.code = code }

    /// True when the peer's certificate did not match the fingerprint its SDP announced.
    public var isFingerprintMismatch: Bool {
        if case .fingerprintMismatch = code { true } else { false }
    }

    public var description: String {
        switch code {
        case .setup(let d): "DTLS setup failed: \(d)."
        case .handshake(let d): "DTLS handshake failed: \(d)."
        case .connection(let d): "DTLS connection failed: \(d)."
        case .fingerprintMismatch(let expected, let actual):
            "DTLS peer certificate does not match the fingerprint in its SDP (expected \(expected.first?.description ?? "none"), got \(actual?.description ?? "unknown")); the connection was refused."
        case .timeout: "DTLS handshake did not finish in time; the peer may not be reachable."
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import Synchronization

/// TLS over a ``TCPSocket``, with the trust rules of ``TLSConfiguration``.
///
/// OpenSSL's SSL object must not be used by two threads at once, while a WebSocket has
/// a reader thread and a writer. Every SSL call therefore runs under `lock`, and the
/// socket is non-blocking: a call that would block returns WANT_READ/WANT_WRITE, the
/// lock is released, and the thread waits on the socket before trying again.
public final class TLSStream: ByteStream, @unchecked Sendable {
    // @unchecked: `ssl` is only touched under `lock`; `socket` is thread-safe.
    private let socket: TCPSocket
    private let ssl: OpaquePointer
    private let lock = Mutex<Void>(())
    private let context: TLSContext
    public var endpoint: String { socket.endpoint }

    /// Connects and completes the handshake, then applies the trust rules.
    /// - Parameter host: the name the certificate must carry (also sent as SNI unless an IP literal).
    public static func connect(
        host: String, port: UInt16, configuration: TLSConfiguration, deadline: Deadline
    ) throws -> TLSStream {
        let socket = try TCPSocket.connect(host: host, port: port, deadline: deadline)
        do {
            return try TLSStream(socket: socket, host: host, configuration: configuration, deadline: deadline)
        } catch {
            socket.close()
            throw error
        }
    }

    init(socket: TCPSocket, host: String, configuration: TLSConfiguration, deadline: Deadline) throws {
        self.socket = socket
        let endpoint = socket.endpoint
        do {
            context = try TLSContext.shared(for: configuration)
        } catch let e as NetworkError {
            throw NetworkError(e.code, endpoint: endpoint, detail: e.detail)
        }
        guard let ssl = SSL_new(context.ctx) else {
            throw NetworkError(.tlsHandshakeFailed, endpoint: endpoint, detail: openSSLErrors())
        }
        self.ssl = ssl
        SSL_set_fd(ssl, socket.fd)
        let isIP = Self.isIPLiteral(host)
        if !isIP { _ = shim_SSL_set_tlsext_host_name(ssl, host) }
        if !configuration.insecure && configuration.pinnedSHA256.isEmpty {
            if isIP {
                X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
            } else {
                SSL_set1_host(ssl, host)
            }
        }
        try handshake(deadline: deadline)
        try checkTrust(configuration)
    }

    deinit {
        SSL_free(ssl)
    }

    static func isIPLiteral(_ host: String) -> Bool {
        var a4 = in_addr()
        var a6 = in6_addr()
        return inet_pton(AF_INET, host, &a4) == 1 || inet_pton(AF_INET6, host, &a6) == 1
    }

    private func handshake(deadline: Deadline) throws {
        while true {
            let (rc, err) = lock.withLock { _ -> (Int32, Int32) in
                ERR_clear_error()
                let rc = SSL_connect(ssl)
                return (rc, rc == 1 ? 0 : SSL_get_error(ssl, rc))
            }
            if rc == 1 { return }
            switch err {
            case SSL_ERROR_WANT_READ:
                guard try socket.wait(POLLIN, deadline: deadline) else {
                    throw NetworkError(.timedOut, endpoint: endpoint, detail: "TLS handshake")
                }
            case SSL_ERROR_WANT_WRITE:
                guard try socket.wait(POLLOUT, deadline: deadline) else {
                    throw NetworkError(.timedOut, endpoint: endpoint, detail: "TLS handshake")
                }
            case SSL_ERROR_SYSCALL, SSL_ERROR_ZERO_RETURN:
                let e = errno
                throw NetworkError(.tlsHandshakeFailed, endpoint: endpoint,
                                   detail: e == 0 || err == SSL_ERROR_ZERO_RETURN ? "the server closed the connection during the handshake; is it really a TLS port?" : errnoText(e))
            default:
                throw NetworkError(.tlsHandshakeFailed, endpoint: endpoint, detail: openSSLErrors())
            }
        }
    }

    /// The SHA-256 fingerprint of the server's certificate (DER), if it sent one.
    public var peerFingerprint: [UInt8]? {
        lock.withLock { _ in
            guard let cert = SSL_get1_peer_certificate(ssl) else { return nil }
            defer { X509_free(cert) }
            var md = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var len: UInt32 = 0
            guard X509_digest(cert, EVP_sha256(), &md, &len) == 1 else { return nil }
            return Array(md.prefix(Int(len)))
        }
    }

    private func checkTrust(_ configuration: TLSConfiguration) throws {
        if configuration.insecure { return }
        let fingerprint = peerFingerprint
        if !configuration.pinnedSHA256.isEmpty {
            guard let fp = fingerprint, configuration.pinnedSHA256.contains(fp) else {
                let actual = fingerprint.map { "the server presented \(CertificateFingerprint.format($0))" } ?? "the server presented no certificate"
                throw NetworkError(.certificatePinMismatch, endpoint: endpoint, detail: actual)
            }
            return
        }
        let result = lock.withLock { _ in SSL_get_verify_result(ssl) }
        guard fingerprint != nil else {
            throw NetworkError(.certificateUntrusted, endpoint: endpoint, detail: "the server presented no certificate")
        }
        if result != X509_V_OK {
            let reason = String(cString: X509_verify_cert_error_string(result))
            let fp = fingerprint.map { "; its SHA-256 fingerprint is \(CertificateFingerprint.format($0))" } ?? ""
            throw NetworkError(.certificateUntrusted, endpoint: endpoint, detail: reason + fp)
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let (rc, err, n) = lock.withLock { _ -> (Int32, Int32, Int) in
                ERR_clear_error()
                var n = 0
                let rc = SSL_read_ex(ssl, base, buffer.count, &n)
                return (rc, rc == 1 ? 0 : SSL_get_error(ssl, rc), n)
            }
            if rc == 1 { return n }
            switch err {
            case SSL_ERROR_ZERO_RETURN:
                return 0
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                // Wait in short slices: another thread's SSL_write may consume socket
                // bytes (TLS 1.3 post-handshake messages), so re-check SSL regularly.
                let slice = min(deadline, .after(seconds: 0.25))
                let ready = try socket.wait(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline: slice)
                if !ready && deadline.hasPassed {
                    throw NetworkError(.timedOut, endpoint: endpoint, detail: "waiting for data")
                }
            case SSL_ERROR_SYSCALL:
                let e = errno
                if e == 0 { return 0 }
                if e == ECONNRESET { throw NetworkError(.connectionReset, endpoint: endpoint) }
                throw NetworkError(.io, endpoint: endpoint, detail: errnoText(e))
            default:
                throw NetworkError(.io, endpoint: endpoint, detail: "TLS: \(openSSLErrors())")
            }
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer, deadline: Deadline) throws {
        guard let base = bytes.baseAddress else { return }
        var sent = 0
        while sent < bytes.count {
            let (rc, err, n) = lock.withLock { _ -> (Int32, Int32, Int) in
                ERR_clear_error()
                var n = 0
                let rc = SSL_write_ex(ssl, base + sent, bytes.count - sent, &n)
                return (rc, rc == 1 ? 0 : SSL_get_error(ssl, rc), n)
            }
            if rc == 1 {
                sent += n
                continue
            }
            switch err {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                guard try socket.wait(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline: deadline) else {
                    throw NetworkError(.timedOut, endpoint: endpoint, detail: "sending")
                }
            case SSL_ERROR_SYSCALL:
                let e = errno
                if e == EPIPE || e == ECONNRESET || e == 0 { throw NetworkError(.connectionReset, endpoint: endpoint) }
                throw NetworkError(.io, endpoint: endpoint, detail: errnoText(e))
            default:
                throw NetworkError(.io, endpoint: endpoint, detail: "TLS: \(openSSLErrors())")
            }
        }
    }

    public func shutdown() { socket.shutdown() }

    public func close() {
        lock.withLock { _ in _ = SSL_shutdown(ssl) }  // best effort close_notify; non-blocking
        socket.close()
    }

    public var isDeadWhenIdle: Bool {
        if lock.withLock({ _ in SSL_pending(ssl) }) > 0 { return true }
        return socket.isDeadWhenIdle
    }
}

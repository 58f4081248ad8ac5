import COpenSSL
import Synchronization

/// An OpenSSL client context for one ``TLSConfiguration``: TLS 1.2 minimum, the trust
/// store loaded once. Contexts are cached per configuration and shared by connections.
final class TLSContext: @unchecked Sendable {
    // @unchecked: an SSL_CTX is safe to share between threads once configured; it is
    // never reconfigured after init.
    let ctx: OpaquePointer
    let configuration: TLSConfiguration

    private static let cache = Mutex<[TLSConfiguration: TLSContext]>([:])

    static func shared(for configuration: TLSConfiguration) throws -> TLSContext {
        if let c = cache.withLock({ $0[configuration] }) { return c }
        let c = try TLSContext(configuration)
        cache.withLock { $0[configuration] = c }
        return c
    }

    private init(_ configuration: TLSConfiguration) throws {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else {
            throw NetworkError(.tlsHandshakeFailed, endpoint: "", detail: "cannot create a TLS context: \(openSSLErrors())")
        }
        self.ctx = ctx
        self.configuration = configuration
        _ = shim_SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)
        SSL_CTX_set_options(ctx, shim_SSL_OP_IGNORE_UNEXPECTED_EOF | shim_SSL_OP_NO_COMPRESSION | shim_SSL_OP_NO_RENEGOTIATION)
        _ = shim_SSL_CTX_set_mode(ctx, shim_SSL_MODE_ENABLE_PARTIAL_WRITE | shim_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER)
        // Verification runs during the handshake either way and its result is checked
        // afterwards (see TLSStream), so that a failure can report the certificate's
        // fingerprint and the connection is closed before any byte is sent.
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
        if let ca = configuration.caFile {
            guard SSL_CTX_load_verify_locations(ctx, ca, nil) == 1 else {
                let why = openSSLErrors()
                // No SSL_CTX_free here: every stored property is set, so deinit frees ctx.
                throw NetworkError(.tlsHandshakeFailed, endpoint: "", detail: "cannot read CA file \(ca): \(why)")
            }
        } else {
            SSL_CTX_set_default_verify_paths(ctx)
        }
    }

    deinit { SSL_CTX_free(ctx) }
}

/// Drains OpenSSL's error queue of this thread into one readable string.
func openSSLErrors() -> String {
    var parts: [String] = []
    while true {
        let e = ERR_get_error()
        if e == 0 { break }
        var buf = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(e, &buf, buf.count)
        let text = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        // "error:0A000086:SSL routines::certificate verify failed" → keep the reason.
        parts.append(text.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? text)
    }
    return parts.isEmpty ? "unknown TLS error" : parts.joined(separator: "; ")
}

/// A failure of the network stack: name resolution, TCP, TLS, HTTP framing or WebSocket.
///
/// `description` is one sentence for a person: what happened and, where it helps, what
/// to do. It never contains credentials, tokens or request bodies.
public struct NetworkError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        case invalidURL
        case nameResolutionFailed
        case connectionRefused
        case hostUnreachable
        case timedOut
        case connectionReset
        case connectionClosed
        case tlsHandshakeFailed
        case certificateUntrusted
        case certificatePinMismatch
        case protocolViolation
        case responseTooLarge
        case tooManyRedirects
        case redirectNotAllowed
        case cancelled
        case io
    }

    public let code: Code
    /// Where: `host:port`, or the URL with secrets masked.
    public let endpoint: String
    /// Extra detail (the OS or OpenSSL reason, the phase that timed out, ...).
    public let detail: String

    public init(_ code: Code, endpoint: String, detail: String = "") {
        self.code = code
        self.endpoint = endpoint
        self.detail = detail
    }

    public var description: String {
        let d = detail.isEmpty ? "" : " (\(detail))"
        switch code {
        case .invalidURL: return "Invalid URL \(endpoint)\(d)."
        case .nameResolutionFailed: return "Could not resolve the host name of \(endpoint)\(d); check the server URL and DNS."
        case .connectionRefused: return "Connection to \(endpoint) was refused; is the server running on that port?"
        case .hostUnreachable: return "Cannot reach \(endpoint)\(d); check the address and the network."
        case .timedOut: return "Timed out talking to \(endpoint)\(d)."
        case .connectionReset: return "The connection to \(endpoint) was reset by the server\(d)."
        case .connectionClosed: return "The server at \(endpoint) closed the connection unexpectedly\(d)."
        case .tlsHandshakeFailed: return "TLS handshake with \(endpoint) failed\(d)."
        case .certificateUntrusted:
            return "The TLS certificate of \(endpoint) is not trusted\(d). Set ca_file = PATH (or pin_sha256 = FINGERPRINT) for this instance, or tls_insecure = yes to skip verification."
        case .certificatePinMismatch:
            return "The TLS certificate of \(endpoint) does not match the pinned fingerprint\(d). If the server's certificate changed on purpose, update pin_sha256."
        case .protocolViolation: return "The server at \(endpoint) sent a malformed response\(d)."
        case .responseTooLarge: return "The response from \(endpoint) is larger than allowed\(d)."
        case .tooManyRedirects: return "Too many redirects from \(endpoint)."
        case .redirectNotAllowed: return "The server at \(endpoint) redirected to another origin\(d); only same-origin redirects are followed."
        case .cancelled: return "The request to \(endpoint) was cancelled."
        case .io: return "Network error talking to \(endpoint)\(d)."
        }
    }
}

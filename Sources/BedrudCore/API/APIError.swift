import BedrudNet

/// A failed call to a Bedrud server's REST API.
///
/// `description` is one sentence naming the server and the call, what went wrong, and
/// the server's own `error` text when it sent one. It never contains tokens or passwords.
public struct APIError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The server URL is not an absolute http(s) URL.
        case invalidURL
        /// Transport failure: see `network`.
        case network
        /// 401: credentials or token refused (after one refresh attempt, if any).
        case unauthorized
        /// 403: banned, full, private room, registration closed, insufficient rights.
        case forbidden
        /// 404: no such room or route.
        case notFound
        /// 409: e.g. a room with this name exists.
        case conflict
        /// 410: e.g. guest-join to a room the server put to sleep.
        case gone
        /// 429: rate limited.
        case rateLimited
        /// 400 and other 4xx: the server rejected the input.
        case rejected
        /// 5xx.
        case serverError
        /// 2xx whose body is not what Bedrud sends (HTML, garbage, wrong JSON).
        case badResponse
        /// Not logged in for this instance (no stored session, no credentials).
        case notLoggedIn
    }

    public let code: Code
    /// HTTP status, when there was a response.
    public let status: Int?
    /// The server's `error` text, or our description of the body.
    public let message: String
    /// `POST /api/auth/login on https://host` — never with query secrets.
    public let call: String
    public let network: NetworkError?
    /// 429's `Retry-After` in seconds, when the server sent one (delta-seconds form).
    public var retryAfter: Double?
    /// The body said `requiresVerification: true` (v0.12.0's login 403 when the account's
    /// email is not verified, auth_handler.go:325-333).
    public var requiresVerification = false
    /// Seconds spent waiting out 429s before this one ended the call.
    public var rateLimitWaited: Double?

    public init(_ code: Code, status: Int? = nil, message: String, call: String, network: NetworkError? = nil) {
        self.code = code
        self.status = status
        self.message = message
        self.call = call
        self.network = network
    }

    /// The account's email must be verified before this call is allowed: login's 403
    /// with `requiresVerification`, or the auth middleware's 403 "Email not verified"
    /// (v0.12.0 middleware/auth.go:165-197).
    public var needsEmailVerification: Bool {
        code == .forbidden && (requiresVerification || message.lowercased().contains("email not verified")
            || message.lowercased().contains("verify your email"))
    }

    public var description: String {
        switch code {
        case .network: return network?.description ?? "Network error: \(message)."
        case .invalidURL: return "Invalid server URL: \(message)."
        case .notLoggedIn: return message
        case .badResponse: return "Unexpected answer to \(call): \(message). Is this a Bedrud server?"
        case .rateLimited:
            let waited = rateLimitWaited.map { " after waiting \(Int($0.rounded())) s in all (network.rate_limit_wait)" } ?? ""
            return "\(call) was refused by the server's rate limit (HTTP 429 Too Many Requests)\(waited): \(message)."
        default:
            let s = status.map { "HTTP \($0)" } ?? "error"
            return "\(call) failed with \(s): \(message)."
        }
    }

    /// Maps an HTTP status to a code.
    static func code(for status: Int) -> Code {
        switch status {
        case 401: .unauthorized
        case 403: .forbidden
        case 404: .notFound
        case 409: .conflict
        case 410: .gone
        case 429: .rateLimited
        case 400..<500: .rejected
        default: .serverError
        }
    }
}

import BedrudNet
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Synchronization

/// JSON over HTTP to one Bedrud server: `<server>/api` + endpoint.
///
/// A plain client: it sends an `Authorization: Bearer` header when given a token, maps
/// every failure to ``APIError``, and decodes tolerant models. Refreshing and retrying
/// on 401 is ``AuthManager``'s job (see `AuthManager.authorized`). Safe to share.
public final class APIClient: Sendable {
    /// The server's origin plus any path prefix, e.g. `https://meet.example.com`.
    public let server: WebURL
    public let http: HTTPClient
    private let logger = Logger("api")
    /// Seconds a call may wait out 429s in all (`network.rate_limit_wait`); 0 fails at the first.
    public let rateLimitWait: Double
    /// Told before each wait out of a 429, on the calling task.
    private let onRateLimited: (@Sendable (RateLimitNotice) -> Void)?
    /// Unix seconds now, for a `Retry-After` given as an HTTP date (the bot layer passes
    /// the wall clock; without one such a date is read as no advice).
    private let wallClock: (@Sendable () -> Double)?

    /// One wait out of a 429: which call, how long, and whether it is this client's first.
    public struct RateLimitNotice: Sendable {
        public var call: String
        public var seconds: Double
        public var first: Bool
        public var limit: Double
    }
    private let waitedBefore = Mutex(false)

    public init(server: WebURL, http: HTTPClient, rateLimitWait: Double = 0, onRateLimited: (@Sendable (RateLimitNotice) -> Void)? = nil,
                wallClock: (@Sendable () -> Double)? = nil) {
        var s = server
        if s.path.hasSuffix("/") && s.path.count > 1 { s.path.removeLast() }
        s.query = nil
        self.server = s
        self.http = http
        self.rateLimitWait = rateLimitWait
        self.onRateLimited = onRateLimited
        self.wallClock = wallClock
    }

    /// `https://host[:port][/prefix]` without a trailing slash.
    public var serverDescription: String { server.path == "/" ? server.origin : server.origin + server.path }

    func url(_ endpoint: String) -> WebURL {
        let base = server.path == "/" ? "" : server.path
        var u = server
        let ep = endpoint.hasPrefix("/") ? endpoint : "/" + endpoint
        if let q = ep.firstIndex(of: "?") {
            u.path = base + "/api" + ep[..<q]
            u.query = String(ep[ep.index(after: q)...])
        } else {
            u.path = base + "/api" + ep
            u.query = nil
        }
        return u
    }

    /// Sends a request and returns the raw response if its status is 2xx.
    /// - Throws: ``APIError`` for transport failures and non-2xx statuses.
    public func send(_ method: String, _ endpoint: String, json body: (any Encodable & Sendable)? = nil, bearer: String? = nil) async throws -> HTTPResponse {
        var req = HTTPRequest(method: method, url: url(endpoint))
        req.headers.set("Accept", "application/json")
        if let body {
            do {
                req.body = Array(try JSONEncoder().encode(AnyEncodable(body)))
            } catch {
                throw APIError(.rejected, message: "could not encode the request: \(error)", call: callName(method, endpoint))
            }
            req.headers.set("Content-Type", "application/json")
        }
        return try await send(req, bearer: bearer)
    }

    /// Sends a prepared request (used for multipart uploads). A 429 is waited out as the
    /// server asks (``RateLimitWait``), within ``rateLimitWait`` seconds in all: Bedrud's
    /// limiter refuses before the handler runs, so asking again is safe for every call.
    public func send(_ request: HTTPRequest, bearer: String? = nil) async throws -> HTTPResponse {
        var wait = RateLimitWait(maxTotal: rateLimitWait)
        while true {
            do {
                return try await sendOnce(request, bearer: bearer)
            } catch var e as APIError where e.code == .rateLimited {
                guard let seconds = wait.next(retryAfter: e.retryAfter, random: Double.random(in: 0..<1)) else {
                    if wait.waited > 0 { e.rateLimitWaited = wait.waited }
                    throw e
                }
                let first = waitedBefore.withLock { w in defer { w = true }; return !w }
                onRateLimited?(RateLimitNotice(call: e.call, seconds: seconds, first: first, limit: rateLimitWait))
                try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            }
        }
    }

    private func sendOnce(_ request: HTTPRequest, bearer: String?) async throws -> HTTPResponse {
        var req = request
        if let bearer { req.headers.set("Authorization", "Bearer \(bearer)") }
        let call = callName(req.method, req.url.path)
        let resp: HTTPResponse
        do {
            resp = try await http.send(req)
        } catch let e as NetworkError {
            throw APIError(.network, message: e.description, call: call, network: e)
        }
        logger.debug("\(call) → \(resp.status)")
        guard resp.isSuccess else {
            var error = APIError(APIError.code(for: resp.status), status: resp.status, message: Self.errorMessage(resp), call: call)
            if resp.status == 429 {
                let header = resp.headers["Retry-After"]
                if let now = wallClock?() {
                    error.retryAfter = RetryAfter.seconds(header, now: now)
                } else if let v = header?.trimmingWhitespaceScalars(), Int(v) != nil {
                    error.retryAfter = RetryAfter.seconds(v, now: 0)  // seconds need no clock
                }
            }
            if case .object(let obj)? = try? JSONDecoder().decode(JSONValue.self, from: Data(resp.body)), obj["requiresVerification"]?.bool == true {
                error.requiresVerification = true
            }
            throw error
        }
        return resp
    }

    /// Sends and decodes the JSON answer.
    public func request<T: Decodable>(_ type: T.Type, _ method: String, _ endpoint: String, json body: (any Encodable & Sendable)? = nil, bearer: String? = nil) async throws -> T {
        let resp = try await send(method, endpoint, json: body, bearer: bearer)
        return try decode(type, resp, call: callName(method, endpoint))
    }

    func callName(_ method: String, _ endpoint: String) -> String {
        let path = endpoint.hasPrefix("/api") ? endpoint : "/api" + (endpoint.hasPrefix("/") ? endpoint : "/" + endpoint)
        return "\(method) \(path.split(separator: "?").first ?? "") on \(server.origin)"
    }

    /// Decodes a 2xx body, describing what arrived when it is not the expected JSON.
    public func decode<T: Decodable>(_ type: T.Type, _ resp: HTTPResponse, call: String) throws -> T {
        guard !resp.body.isEmpty else {
            throw APIError(.badResponse, status: resp.status, message: "the body was empty", call: call)
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(resp.body))
        } catch {
            throw APIError(.badResponse, status: resp.status, message: Self.describeUnexpected(resp, decodingError: error), call: call)
        }
    }

    /// The server's `{"error": "..."}` text, or a short description of what it sent.
    static func errorMessage(_ resp: HTTPResponse) -> String {
        if resp.body.isEmpty { return "empty body" }
        if case .object(let obj)? = try? JSONDecoder().decode(JSONValue.self, from: Data(resp.body)) {
            if let e = obj["error"]?.string { return e }
            if let e = obj["message"]?.string { return e }
            return "no error text in the JSON body"
        }
        let text = resp.text.trimmingWhitespaceScalars()
        if looksLikeHTML(text) { return "the server answered with an HTML page" }
        let oneLine = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return oneLine.count > 200 ? String(oneLine.prefix(200)) + "…" : oneLine
    }

    static func looksLikeHTML(_ text: String) -> Bool {
        let lower = text.prefix(200).lowercased()
        return lower.hasPrefix("<!doctype html") || lower.hasPrefix("<html") || lower.contains("<body")
    }

    static func describeUnexpected(_ resp: HTTPResponse, decodingError: any Error) -> String {
        let text = resp.text.trimmingWhitespaceScalars()
        if looksLikeHTML(text) { return "an HTML page instead of JSON (a web server or proxy at this URL?)" }
        guard (try? JSONDecoder().decode(JSONValue.self, from: Data(resp.body))) != nil else {
            return "not JSON (\(text.prefix(60).filter { !$0.isNewline })…)"
        }
        switch decodingError {
        case DecodingError.keyNotFound(let key, _): return "the JSON has no '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let ctx), DecodingError.valueNotFound(_, let ctx):
            let path = ctx.codingPath.map(\.stringValue).joined(separator: ".")
            return "the JSON has the wrong type at '\(path.isEmpty ? "top level" : path)'"
        default: return "JSON of an unexpected shape"
        }
    }
}

/// Type-erases an Encodable body.
struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ v: any Encodable) { value = v }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

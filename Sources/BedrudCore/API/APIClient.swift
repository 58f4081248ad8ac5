import BedrudNet
import BedrudProtocol
import FoundationEssentials

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

    public init(server: WebURL, http: HTTPClient) {
        var s = server
        if s.path.hasSuffix("/") && s.path.count > 1 { s.path.removeLast() }
        s.query = nil
        self.server = s
        self.http = http
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

    /// Sends a prepared request (used for multipart uploads).
    public func send(_ request: HTTPRequest, bearer: String? = nil) async throws -> HTTPResponse {
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
            if resp.status == 429 { error.retryAfter = Self.retryAfter(resp.headers["Retry-After"]) }
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

    /// `Retry-After` in its delta-seconds form (RFC 9110 §10.2.3), capped at an hour; an
    /// HTTP date or garbage gives nil (the caller backs off on its own schedule).
    static func retryAfter(_ value: String?) -> Double? {
        guard let v = value?.trimmingWhitespaceScalars(), let n = Int(v), n >= 0 else { return nil }
        return Double(min(n, 3600))
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

import BedrudNet
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials

/// Opens LiveKit signalling WebSockets and explains failed upgrades.
///
/// LiveKit checks the token and the room before it answers the upgrade; a refusal is an
/// ordinary HTTP status with the reason as text. The WebSocket client reports that status
/// and body directly; when a proxy hides them (an empty body, a dropped connection) the
/// same query is sent to `/rtc/validate`, as the official SDKs do (livekit-protocol.md §1.4).
public struct SignalClient: Sendable {
    public let livekitHost: String
    public let tls: TLSConfiguration
    public let connectTimeout: Double
    public let clientInfo: SignalURL.ClientInfo
    private let logger: Logger

    public init(livekitHost: String, tls: TLSConfiguration, connectTimeout: Double = 15, clientInfo: SignalURL.ClientInfo, logRoom: String? = nil) {
        logger = Logger("signal", room: logRoom)
        self.livekitHost = livekitHost
        self.tls = tls
        self.connectTimeout = connectTimeout
        self.clientInfo = clientInfo
    }

    /// An upgrade that did not work: the classification RoomState needs, and a sentence
    /// for people.
    public struct ConnectError: Error, Sendable, CustomStringConvertible {
        public let failure: SignalConnectFailure
        public let description: String
    }

    /// Opens the WebSocket for a join or resume.
    public func open(_ request: SignalConnectRequest) async throws(ConnectError) -> WebSocketClient {
        let url: WebURL
        do {
            url = try SignalURL.connect(livekitHost: livekitHost, mode: request.mode, client: clientInfo)
        } catch {
            throw ConnectError(failure: .rejected(status: 0), description: "\(error)")
        }
        var headers = HTTPHeaders()
        headers.set("Authorization", "Bearer \(request.token)")
        var options = WebSocketOptions()
        options.logRoom = logger.room
        options.connectTimeout = connectTimeout
        options.tls = tls
        options.userAgent = "bedrud-bot/\(clientInfo.version)"
        options.maxMessageSize = 16 * 1024 * 1024
        do {
            return try await WebSocketClient.connect(url, headers: headers, options: options)
        } catch let e as WebSocketHandshakeError {
            if e.body.isEmpty, let explained = await validate(url, token: request.token) { throw explained }
            throw Self.classify(status: e.status, body: e.body, endpoint: url.origin, token: request.token)
        } catch let e as NetworkError {
            if e.code == .connectionClosed || e.code == .protocolViolation, let explained = await validate(url, token: request.token) {
                throw explained
            }
            throw ConnectError(failure: .unreachable(Self.cause(of: e.code)), description: e.description)
        } catch {
            throw ConnectError(failure: .unreachable(.unreachable), description: "\(error)")
        }
    }

    /// The cause a failed connect names in the final message (refused, DNS, TLS, timeout).
    static func cause(of code: NetworkError.Code) -> NetworkCause {
        switch code {
        case .connectionRefused: .refused
        case .nameResolutionFailed: .dns
        case .tlsHandshakeFailed, .certificateUntrusted, .certificatePinMismatch: .tls
        case .timedOut: .timeout
        default: .unreachable
        }
    }

    /// `GET …/rtc/validate` with the same query and token.
    func validate(_ url: WebURL, token: String) async -> ConnectError? {
        var options = HTTPClientOptions()
        options.tls = tls
        options.connectTimeout = connectTimeout
        options.requestTimeout = connectTimeout
        options.keepAlive = false
        var req = HTTPRequest(method: "GET", url: SignalURL.validate(url))
        req.headers.set("Authorization", "Bearer \(token)")
        guard let resp = try? await HTTPClient(options: options).send(req) else { return nil }
        if resp.isSuccess { return nil }
        logger.debug("validate answered \(resp.status)")
        return Self.classify(status: resp.status, body: resp.text.trimmingWhitespace(), endpoint: url.origin, token: token)
    }

    /// What LiveKit's answer to the upgrade (or to `/rtc/validate`, which runs the same
    /// checks) means, from LiveKit's `pkg/service` (rtcservice.go, utils.go, auth.go):
    /// - 401: the token was refused — no or a malformed Authorization header, a token that
    ///   does not verify (auth.go:73, :86, :92, :98), or one without the room-join grant
    ///   (utils.go:345, :350; rtcservice.go:148).
    /// - 403: a permission the session start denied (psrpc PermissionDenied turned into
    ///   HTTP, rtcservice.go:405-411): LiveKit does not allow this join.
    /// - 404: the room does not exist and is not auto-created (utils.go:393, the text
    ///   "requested room does not exist"); another 404 is a route that is not LiveKit's.
    /// - 400: the request as given (no identity or room name, one too long, a join
    ///   request it cannot decode: utils.go:354-375, rtcservice.go:158-207).
    /// - 5xx: LiveKit failed — 500 when the room allocator or the session start failed
    ///   (utils.go:395, rtcservice.go:405, :479), 503 when the node is at its limits
    ///   (utils.go:403). Retried once by ``RoomState``.
    /// The body is LiveKit's error text (utils.go:84-87); the join token is cut out of it,
    /// since the verifier's error is passed through whole (auth.go:98). Pure.
    static func classify(status: Int, body: String, endpoint: String, token: String = "") -> ConnectError {
        let text = redact(body, token: token)
        let reason = text.isEmpty ? "" : ": \(text.prefix(200))"
        switch status {
        case 401:
            return ConnectError(failure: .unauthorized(status: status), description: "LiveKit at \(endpoint) refused the join token (HTTP \(status)\(reason)).")
        case 403:
            return ConnectError(failure: .forbidden, description: "LiveKit at \(endpoint) answered HTTP 403\(reason).")
        case 404 where text.contains("requested room does not exist"):
            return ConnectError(failure: .roomNotFound, description: "LiveKit at \(endpoint) has no such room (\(text.prefix(200))).")
        default:
            return ConnectError(failure: .rejected(status: status), description: "LiveKit at \(endpoint) refused the connection with HTTP \(status)\(reason).")
        }
    }

    /// `body` with `token`, and anything shaped like a JWT (`eyJ…` in three dot-separated
    /// base64url parts), replaced by "[token]", so a server that quotes the token in its
    /// refusal never gets it printed or logged.
    static func redact(_ body: String, token: String) -> String {
        var text = body
        if token.count >= 8 { text = text.replacing(token, with: "[token]") }
        func isTokenChar(_ c: Character) -> Bool {
            c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_" || c == "." || c == "=")
        }
        var out = ""
        var run = ""
        func flush() {
            let parts = run.split(separator: ".", omittingEmptySubsequences: false)
            if run.hasPrefix("eyJ"), parts.count >= 3, parts.prefix(3).allSatisfy({ !$0.isEmpty }) {
                out += "[token]"
            } else {
                out += run
            }
            run = ""
        }
        for c in text {
            if isTokenChar(c) {
                run.append(c)
            } else {
                flush()
                out.append(c)
            }
        }
        flush()
        return out
    }
}

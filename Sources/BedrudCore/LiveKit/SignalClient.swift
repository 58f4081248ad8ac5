import BedrudNet
import BedrudProtocol
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
            throw Self.classify(status: e.status, body: e.body, endpoint: url.origin)
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
        return Self.classify(status: resp.status, body: resp.text.trimmingWhitespace(), endpoint: url.origin)
    }

    static func classify(status: Int, body: String, endpoint: String) -> ConnectError {
        let reason = body.isEmpty ? "" : ": \(body.prefix(200))"
        switch status {
        case 401, 403:
            return ConnectError(failure: .unauthorized(status: status), description: "LiveKit at \(endpoint) refused the join token (HTTP \(status)\(reason)).")
        case 404 where body.contains("requested room does not exist"):
            return ConnectError(failure: .roomNotFound, description: "LiveKit at \(endpoint) has no such room (\(body.prefix(200))).")
        default:
            return ConnectError(failure: .rejected(status: status), description: "LiveKit at \(endpoint) refused the connection with HTTP \(status)\(reason).")
        }
    }
}

import BedrudProtocol
import BedrudRuntime
import COpenSSL
import Dispatch
import FoundationEssentials
import Synchronization

/// Limits and timeouts of a ``WebSocketClient``.
public struct WebSocketOptions: Sendable {
    /// TCP, TLS and the HTTP upgrade together.
    public var connectTimeout: Double = 10
    /// Longest a single frame may take to send.
    public var writeTimeout: Double = 10
    /// Longest silence from the server before the connection counts as dead; nil for no
    /// limit (the signalling layer runs its own ping timeout).
    public var readTimeout: Double?
    public var maxMessageSize: Int = 16 * 1024 * 1024
    /// Messages waiting to be sent before `send` fails instead of queueing more.
    public var sendQueueLimit: Int = 1024
    /// Messages received but not yet read from `messages`. When that many wait, the read
    /// thread stops reading the socket until the reader takes one (TCP's flow control then
    /// holds the server back): memory stays bounded and no message is lost. Each such stop is
    /// counted (``WebSocketClient/readerStalls``).
    public var receiveQueueLimit: Int = 4096
    public var tls: TLSConfiguration = .system
    public var userAgent: String = "bedrud-bot"
    /// The room of this connection's log lines when one process records several (``Logger/room``).
    public var logRoom: String?

    public init() {}
}

/// The server refused the WebSocket upgrade with an ordinary HTTP response.
public struct WebSocketHandshakeError: Error, Sendable, CustomStringConvertible {
    public let status: Int
    /// The response body as text (LiveKit puts its reason here), trimmed.
    public let body: String
    public let endpoint: String
    public var description: String {
        let b = body.isEmpty ? "" : ": \(body)"
        return "The server at \(endpoint) refused the WebSocket upgrade with HTTP \(status)\(b)."
    }
}

/// An RFC 6455 WebSocket client on the shared TCP/TLS stack.
///
/// Messages arrive in order on `messages`, read by a dedicated thread; server pings are
/// answered with pongs automatically (and still delivered). The stream finishes after
/// the server's close frame, or throws when the connection fails or the server breaks
/// the protocol. Reconnecting is the caller's decision. Sending is safe from any task:
/// frames go through a bounded queue to a writer thread, so nothing blocks the
/// cooperative pool.
public final class WebSocketClient: Sendable {
    public let url: WebURL
    public let messages: WebSocketMessages
    /// Response headers of the upgrade.
    public let responseHeaders: HTTPHeaders

    private let stream: any ByteStream
    private let options: WebSocketOptions
    private let continuation: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
    private let state = Mutex<State>(State())
    private let stalls = Atomic<Int>(0)
    /// Times the read thread waited because `receiveQueueLimit` messages were unread.
    public var readerStalls: Int { stalls.load(ordering: .relaxed) }
    /// One credit per message `messages` may still hold; the reader of `messages` gives one back per message taken.
    private let credits: DispatchSemaphore
    private let wake = DispatchSemaphore(value: 0)
    private let logger: Logger

    private struct Pending: @unchecked Sendable {
        // @unchecked: the continuation is resumed exactly once, by the writer thread.
        var bytes: [UInt8]
        var done: CheckedContinuation<Void, any Error>?
        var isClose: Bool
    }

    private struct State {
        var queue: [Pending] = []
        var closeSent = false
        var closeReceived = false
        var dead: NetworkError?
        var writerStopped = false
    }

    // MARK: - Connecting

    /// Connects, upgrades and starts reading.
    /// - Throws: ``NetworkError``, or ``WebSocketHandshakeError`` when the server answers
    ///   the upgrade with a plain HTTP status (e.g. LiveKit's 401 for a bad token).
    public static func connect(_ url: WebURL, headers: HTTPHeaders = HTTPHeaders(), options: WebSocketOptions = WebSocketOptions()) async throws -> WebSocketClient {
        guard ["ws", "wss", "http", "https"].contains(url.scheme) else {
            throw NetworkError(.invalidURL, endpoint: url.scheme + "://" + url.authority, detail: "expected ws:// or wss://")
        }
        let slot = CancellationSlot()
        return try await BlockingWork.run(name: "ws-connect", slot: slot) {
            try handshake(url, headers: headers, options: options, slot: slot)
        }
    }

    private static func handshake(_ url: WebURL, headers: HTTPHeaders, options: WebSocketOptions, slot: CancellationSlot) throws -> WebSocketClient {
        let deadline = Deadline.after(seconds: options.connectTimeout)
        let shown = Redact.query(url.description)
        let stream: any ByteStream = url.isSecure
            ? try TLSStream.connect(host: url.host, port: url.port, configuration: options.tls, deadline: deadline)
            : try TCPSocket.connect(host: url.host, port: url.port, deadline: deadline)
        slot.use(stream)
        do {
            var keyBytes = [UInt8](repeating: 0, count: 16)
            for i in 0..<16 { keyBytes[i] = UInt8.random(in: 0...255) }
            let key = Data(keyBytes).base64EncodedString()
            var req = HTTPRequest(method: "GET", url: url, headers: headers)
            req.headers.set("Upgrade", "websocket")
            req.headers.set("Connection", "Upgrade")
            req.headers.set("Sec-WebSocket-Key", key)
            req.headers.set("Sec-WebSocket-Version", "13")
            try stream.write(req.serializedHead(userAgent: options.userAgent, keepAlive: true), deadline: deadline)

            var parser = HTTPResponseParser(maxBodyBytes: 64 * 1024)
            var buf = [UInt8](repeating: 0, count: 16 * 1024)
            while !parser.isComplete {
                let n = try buf.withUnsafeMutableBytes { try stream.read(into: $0, deadline: deadline) }
                if n == 0 {
                    do { try parser.finish() } catch {
                        throw NetworkError(.connectionClosed, endpoint: stream.endpoint, detail: "during the WebSocket upgrade")
                    }
                    break
                }
                do {
                    try buf.withUnsafeBytes { try parser.feed(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                } catch {
                    throw NetworkError(.protocolViolation, endpoint: stream.endpoint, detail: "WebSocket upgrade: \((error as? HTTPResponseParser.ParseError)?.message ?? "\(error)")")
                }
            }
            guard let head = parser.head else {
                throw NetworkError(.protocolViolation, endpoint: stream.endpoint, detail: "no answer to the WebSocket upgrade")
            }
            guard head.status == 101 else {
                let text = String(decoding: parser.body.prefix(500), as: UTF8.self).trimmingWhitespaceScalars()
                throw WebSocketHandshakeError(status: head.status, body: text, endpoint: shown)
            }
            guard head.headers["Upgrade"]?.lowercased() == "websocket",
                  head.headers["Connection"]?.lowercased().split(separator: ",").contains(where: { $0.trimmingWhitespaceScalars(newlines: false) == "upgrade" }) == true else {
                throw NetworkError(.protocolViolation, endpoint: stream.endpoint, detail: "101 without Upgrade: websocket")
            }
            guard head.headers["Sec-WebSocket-Accept"] == acceptValue(for: key) else {
                throw NetworkError(.protocolViolation, endpoint: stream.endpoint, detail: "wrong Sec-WebSocket-Accept in the upgrade answer")
            }
            if let ext = head.headers["Sec-WebSocket-Extensions"], !ext.isEmpty {
                throw NetworkError(.protocolViolation, endpoint: stream.endpoint, detail: "the server enabled an extension we did not ask for (\(ext))")
            }
            slot.use(nil)
            let client = WebSocketClient(url: url, stream: stream, headers: head.headers, options: options)
            client.start(leftover: parser.leftover)
            return client
        } catch {
            slot.use(nil)
            stream.close()
            throw error
        }
    }

    /// `base64(SHA-1(key + GUID))`, RFC 6455 §4.2.2 (public for test servers).
    public static func acceptValue(for key: String) -> String {
        let input = Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        _ = input.withUnsafeBufferPointer { SHA1($0.baseAddress, $0.count, &digest) }
        return Data(digest).base64EncodedString()
    }

    private init(url: WebURL, stream: any ByteStream, headers: HTTPHeaders, options: WebSocketOptions) {
        self.url = url
        self.stream = stream
        self.options = options
        self.responseHeaders = headers
        logger = Logger("websocket", room: options.logRoom)
        let limit = max(1, options.receiveQueueLimit)
        // Made empty and filled by signals: libdispatch traps when a semaphore is freed below
        // its starting value, which a client dropped with messages unread would be.
        let credits = DispatchSemaphore(value: 0)
        for _ in 0..<limit { credits.signal() }
        self.credits = credits
        // The close message takes no credit, hence the one extra slot.
        let (received, continuation) = AsyncThrowingStream<WebSocketMessage, any Error>.makeStream(bufferingPolicy: .bufferingOldest(limit + 1))
        (messages, self.continuation) = (WebSocketMessages(stream: received, credits: credits), continuation)
    }

    private func start(leftover: [UInt8]) {
        continuation.onTermination = { [weak self] reason in
            if case .cancelled = reason { self?.abort() }
        }
        OSThread.start(name: "ws-read") { [self] in readLoop(leftover: leftover) }
        OSThread.start(name: "ws-write") { [self] in writeLoop() }
    }

    // MARK: - Sending

    /// Sends one message as a single frame. `.close` starts the closing handshake.
    /// - Throws: ``NetworkError`` when the connection is gone or the send queue is full.
    public func send(_ message: WebSocketMessage) async throws {
        let frame: WebSocketFrame
        switch message {
        case .text(let s): frame = WebSocketFrame(opcode: .text, payload: Array(s.utf8))
        case .data(let d): frame = WebSocketFrame(opcode: .binary, payload: d)
        case .ping(let d): frame = WebSocketFrame(opcode: .ping, payload: Array(d.prefix(125)))
        case .pong(let d): frame = WebSocketFrame(opcode: .pong, payload: Array(d.prefix(125)))
        case .close(let code, let reason): frame = Self.closeFrame(code: code ?? 1000, reason: reason)
        }
        let isClose: Bool
        if case .close = message { isClose = true } else { isClose = false }
        try await withCheckedThrowingContinuation { (cont: CheckedContinuation<Void, any Error>) in
            let error = state.withLock { s -> NetworkError? in
                if let d = s.dead { return d }
                if s.closeSent { return NetworkError(.connectionClosed, endpoint: stream.endpoint, detail: "the WebSocket is closing") }
                if s.queue.count >= options.sendQueueLimit { return NetworkError(.io, endpoint: stream.endpoint, detail: "WebSocket send queue full") }
                if isClose { s.closeSent = true }
                s.queue.append(Pending(bytes: frame.encode(maskKey: Self.randomMask()), done: cont, isClose: isClose))
                return nil
            }
            if let error {
                cont.resume(throwing: error)
            } else {
                wake.signal()
            }
        }
    }

    public func send(text: String) async throws { try await send(.text(text)) }
    public func send(data: [UInt8]) async throws { try await send(.data(data)) }

    /// Closes politely: sends a close frame, waits up to `timeout` for the server's
    /// close (the end of `messages`), then drops the connection.
    public func close(code: UInt16 = 1000, reason: String = "", timeout: Double = 1) async {
        try? await send(.close(code: code, reason: reason))
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if state.withLock({ $0.closeReceived || $0.dead != nil }) { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        abort()
    }

    /// Drops the connection at once, without a closing handshake (as a network failure would).
    public func abort() {
        state.withLock { s in
            if s.dead == nil { s.dead = NetworkError(.cancelled, endpoint: stream.endpoint, detail: "WebSocket closed") }
        }
        stream.shutdown()
        wake.signal()
    }

    static func closeFrame(code: UInt16, reason: String) -> WebSocketFrame {
        var payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
        payload += Array(reason.utf8.prefix(123))
        return WebSocketFrame(opcode: .close, payload: payload)
    }

    static func randomMask() -> (UInt8, UInt8, UInt8, UInt8) {
        let v = UInt32.random(in: 0...UInt32.max)
        return (UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF))
    }

    /// Queues a frame from the reader thread (pongs, close replies) without waiting.
    private func enqueueInternal(_ frame: WebSocketFrame, isClose: Bool = false) {
        let queued = state.withLock { s -> Bool in
            guard s.dead == nil, !s.closeSent else { return false }
            if isClose { s.closeSent = true }
            s.queue.append(Pending(bytes: frame.encode(maskKey: Self.randomMask()), done: nil, isClose: isClose))
            return true
        }
        if queued { wake.signal() }
    }

    private func writeLoop() {
        while true {
            wake.wait()
            while true {
                let next = state.withLock { s -> (Pending?, NetworkError?) in
                    if let d = s.dead { return (nil, d) }
                    return (s.queue.isEmpty ? nil : s.queue.removeFirst(), nil)
                }
                if let dead = next.1 {
                    failPending(dead)
                    state.withLock { $0.writerStopped = true }
                    return
                }
                guard let item = next.0 else { break }
                do {
                    try stream.write(item.bytes, deadline: .after(seconds: options.writeTimeout))
                    item.done?.resume()
                } catch {
                    let e = (error as? NetworkError) ?? NetworkError(.io, endpoint: stream.endpoint, detail: "\(error)")
                    item.done?.resume(throwing: e)
                    fail(e)
                }
            }
        }
    }

    private func failPending(_ e: NetworkError) {
        let pending = state.withLock { s -> [Pending] in
            let p = s.queue
            s.queue.removeAll()
            return p
        }
        for p in pending { p.done?.resume(throwing: e) }
    }

    /// Marks the connection dead and wakes everyone.
    private func fail(_ e: NetworkError) {
        state.withLock { s in if s.dead == nil { s.dead = e } }
        stream.shutdown()
        wake.signal()
    }

    // MARK: - Reading

    /// Waits until `messages` has room for one more; gives up when the connection is closed.
    private func takeCredit() throws {
        if credits.wait(timeout: .now()) == .success { return }
        stalls.add(1, ordering: .relaxed)
        while credits.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            if let dead = state.withLock({ $0.dead }) { throw dead }
        }
    }

    private func readLoop(leftover: [UInt8]) {
        var decoder = WebSocketFrameDecoder(maxFramePayload: options.maxMessageSize)
        var assembler = WebSocketMessageAssembler(maxMessageSize: options.maxMessageSize)
        decoder.append(leftover)
        var buf = [UInt8](repeating: 0, count: 64 * 1024)
        defer {
            // Let the writer finish, then release the socket.
            wake.signal()
            var spins = 0
            while !state.withLock({ $0.writerStopped }) && spins < 200 {
                OSThread.sleep(seconds: 0.005)
                spins += 1
                if spins == 100 { stream.shutdown(); wake.signal() }
            }
            stream.close()
        }
        do {
            while true {
                while let frame = try decoder.next() {
                    guard let message = try assembler.push(frame) else { continue }
                    switch message {
                    case .ping(let data):
                        enqueueInternal(WebSocketFrame(opcode: .pong, payload: data))
                    case .close(let code, _):
                        let alreadySent = state.withLock { s -> Bool in
                            s.closeReceived = true
                            return s.closeSent
                        }
                        continuation.yield(message)
                        if !alreadySent {
                            enqueueInternal(Self.closeFrame(code: code ?? 1000, reason: ""), isClose: true)
                            // Give the writer a moment to send the echo before dropping the link.
                            var waited = 0
                            while waited < 100 && state.withLock({ !$0.queue.isEmpty && $0.dead == nil }) {
                                OSThread.sleep(seconds: 0.005)
                                waited += 1
                            }
                        }
                        fail(NetworkError(.connectionClosed, endpoint: stream.endpoint, detail: "closed"))
                        continuation.finish()
                        return
                    default:
                        break
                    }
                    try takeCredit()
                    continuation.yield(message)
                }
                let deadline = options.readTimeout.map { Deadline.after(seconds: $0) } ?? .distantFuture
                let n = try buf.withUnsafeMutableBytes { try stream.read(into: $0, deadline: deadline) }
                if n == 0 {
                    throw NetworkError(.connectionClosed, endpoint: stream.endpoint, detail: "no close frame")
                }
                buf.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            }
        } catch let e as WebSocketProtocolError {
            logger.warning("protocol error from \(stream.endpoint): \(e.message); closing with \(e.closeCode)")
            enqueueInternal(Self.closeFrame(code: e.closeCode, reason: ""), isClose: true)
            OSThread.sleep(seconds: 0.05)
            let ne = NetworkError(.protocolViolation, endpoint: stream.endpoint, detail: "WebSocket: \(e.message)")
            fail(ne)
            continuation.finish(throwing: ne)
        } catch {
            let wasAborted = state.withLock { $0.dead?.code == .cancelled }
            let ne = (error as? NetworkError) ?? NetworkError(.io, endpoint: stream.endpoint, detail: "\(error)")
            fail(ne)
            continuation.finish(throwing: wasAborted ? NetworkError(.cancelled, endpoint: stream.endpoint, detail: "WebSocket closed") : ne)
        }
    }
}

/// The messages of one connection, in order. Taking one lets the read thread queue
/// another (``WebSocketOptions/receiveQueueLimit``).
public struct WebSocketMessages: AsyncSequence, Sendable {
    public typealias Element = WebSocketMessage
    fileprivate let stream: AsyncThrowingStream<WebSocketMessage, any Error>
    fileprivate let credits: DispatchSemaphore

    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate var base: AsyncThrowingStream<WebSocketMessage, any Error>.AsyncIterator
        fileprivate let credits: DispatchSemaphore

        public mutating func next() async throws -> WebSocketMessage? {
            let message = try await base.next()
            if let message, !message.isClose { credits.signal() }
            return message
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator(), credits: credits) }
}

private extension WebSocketMessage {
    var isClose: Bool { if case .close = self { true } else { false } }
}

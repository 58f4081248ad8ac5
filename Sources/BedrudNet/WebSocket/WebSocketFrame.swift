/// RFC 6455 §5 framing, pure: frames in, bytes out, and an incremental decoder that
/// gives the same frames whatever the byte boundaries.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-------+-+-------------+-------------------------------+
/// |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
/// |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
/// |N|V|V|V|       |S|             |   (if payload len==126/127)   |
/// | |1|2|3|       |K|             |                               |
/// +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
/// |     Extended payload length continued, if payload len == 127  |
/// + - - - - - - - - - - - - - - - +-------------------------------+
/// |                               |Masking-key, if MASK set to 1  |
/// +-------------------------------+-------------------------------+
/// | Masking-key (continued)       |          Payload Data         |
/// +-------------------------------- - - - - - - - - - - - - - - - +
/// ```
public struct WebSocketFrame: Sendable, Equatable {
    public enum Opcode: UInt8, Sendable {
        case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA
        public var isControl: Bool { rawValue & 0x8 != 0 }
    }

    public var fin: Bool
    public var opcode: Opcode
    public var payload: [UInt8]

    public init(fin: Bool = true, opcode: Opcode, payload: [UInt8] = []) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// Serializes the frame; `maskKey` is required for client frames (RFC 6455 §5.3).
    public func encode(maskKey: (UInt8, UInt8, UInt8, UInt8)?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 14)
        out.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = maskKey == nil ? 0 : 0x80
        let n = payload.count
        if n < 126 {
            out.append(maskBit | UInt8(n))
        } else if n <= 0xFFFF {
            out.append(maskBit | 126)
            out.append(UInt8(n >> 8))
            out.append(UInt8(n & 0xFF))
        } else {
            out.append(maskBit | 127)
            for i in (0..<8).reversed() { out.append(UInt8((UInt64(n) >> (UInt64(i) * 8)) & 0xFF)) }
        }
        if let (a, b, c, d) = maskKey {
            let key = [a, b, c, d]
            out += key
            for (i, byte) in payload.enumerated() { out.append(byte ^ key[i & 3]) }
        } else {
            out += payload
        }
        return out
    }
}

/// Why a WebSocket stream is invalid; `closeCode` is what to send the peer (RFC 6455 §7.4).
public struct WebSocketProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let closeCode: UInt16
    public var description: String { message }
}

/// Incremental frame decoder for frames from a server (which must not be masked).
public struct WebSocketFrameDecoder: Sendable {
    public let maxFramePayload: Int
    private var buffer: [UInt8] = []
    private var start = 0

    public init(maxFramePayload: Int) {
        self.maxFramePayload = maxFramePayload
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 64 * 1024 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) { bytes.withUnsafeBytes { append($0) } }

    /// The next complete frame, or nil when more bytes are needed.
    public mutating func next() throws(WebSocketProtocolError) -> WebSocketFrame? {
        let avail = buffer.count - start
        guard avail >= 2 else { return nil }
        let b0 = buffer[start], b1 = buffer[start + 1]
        guard b0 & 0x70 == 0 else {
            throw WebSocketProtocolError(message: "frame uses reserved bits (no extension was negotiated)", closeCode: 1002)
        }
        guard let opcode = WebSocketFrame.Opcode(rawValue: b0 & 0x0F) else {
            throw WebSocketProtocolError(message: "unknown frame opcode \(b0 & 0x0F)", closeCode: 1002)
        }
        let fin = b0 & 0x80 != 0
        guard b1 & 0x80 == 0 else {
            throw WebSocketProtocolError(message: "the server sent a masked frame", closeCode: 1002)
        }
        var header = 2
        var length = UInt64(b1 & 0x7F)
        if length == 126 {
            guard avail >= 4 else { return nil }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            header = 4
            guard length >= 126 else { throw WebSocketProtocolError(message: "frame length not minimally encoded", closeCode: 1002) }
        } else if length == 127 {
            guard avail >= 10 else { return nil }
            length = 0
            for i in 0..<8 { length = length << 8 | UInt64(buffer[start + 2 + i]) }
            header = 10
            guard length >> 63 == 0 else { throw WebSocketProtocolError(message: "frame length has its top bit set", closeCode: 1002) }
            guard length > 0xFFFF else { throw WebSocketProtocolError(message: "frame length not minimally encoded", closeCode: 1002) }
        }
        if opcode.isControl {
            guard fin else { throw WebSocketProtocolError(message: "fragmented control frame", closeCode: 1002) }
            guard length <= 125 else { throw WebSocketProtocolError(message: "control frame longer than 125 bytes", closeCode: 1002) }
        }
        guard length <= UInt64(maxFramePayload) else {
            throw WebSocketProtocolError(message: "frame of \(length) bytes exceeds the \(maxFramePayload)-byte limit", closeCode: 1009)
        }
        let total = header + Int(length)
        guard avail >= total else { return nil }
        let payload = Array(buffer[(start + header)..<(start + total)])
        start += total
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }
}

/// A whole WebSocket message, after reassembling fragments.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case data([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// The peer's close frame: code (nil if it sent none) and reason.
    case close(code: UInt16?, reason: String)
}

/// Turns frames into messages: fragmentation, interleaved control frames, UTF-8 of text
/// messages and close reasons, close codes, and the message size limit. Pure.
public struct WebSocketMessageAssembler: Sendable {
    public let maxMessageSize: Int
    private var partialOpcode: WebSocketFrame.Opcode?
    private var partial: [UInt8] = []

    public init(maxMessageSize: Int) { self.maxMessageSize = maxMessageSize }

    public mutating func push(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> WebSocketMessage? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close:
            let p = frame.payload
            if p.isEmpty { return .close(code: nil, reason: "") }
            guard p.count >= 2 else { throw WebSocketProtocolError(message: "close frame with a 1-byte payload", closeCode: 1002) }
            let code = UInt16(p[0]) << 8 | UInt16(p[1])
            guard Self.isValidCloseCode(code) else { throw WebSocketProtocolError(message: "invalid close code \(code)", closeCode: 1002) }
            guard let reason = String(validating: p[2...], as: UTF8.self) else {
                throw WebSocketProtocolError(message: "close reason is not valid UTF-8", closeCode: 1007)
            }
            return .close(code: code, reason: reason)
        case .text, .binary:
            guard partialOpcode == nil else {
                throw WebSocketProtocolError(message: "new message started before the previous one finished", closeCode: 1002)
            }
            if frame.fin { return try finish(frame.opcode, frame.payload) }
            partialOpcode = frame.opcode
            partial = frame.payload
            try checkSize()
            return nil
        case .continuation:
            guard let op = partialOpcode else {
                throw WebSocketProtocolError(message: "continuation frame without a message to continue", closeCode: 1002)
            }
            partial += frame.payload
            try checkSize()
            guard frame.fin else { return nil }
            let whole = partial
            partial = []
            partialOpcode = nil
            return try finish(op, whole)
        }
    }

    private func checkSize() throws(WebSocketProtocolError) {
        guard partial.count <= maxMessageSize else {
            throw WebSocketProtocolError(message: "message exceeds the \(maxMessageSize)-byte limit", closeCode: 1009)
        }
    }

    private func finish(_ op: WebSocketFrame.Opcode, _ bytes: [UInt8]) throws(WebSocketProtocolError) -> WebSocketMessage {
        guard bytes.count <= maxMessageSize else {
            throw WebSocketProtocolError(message: "message exceeds the \(maxMessageSize)-byte limit", closeCode: 1009)
        }
        if op == .text {
            guard let s = String(validating: bytes, as: UTF8.self) else {
                throw WebSocketProtocolError(message: "text message is not valid UTF-8", closeCode: 1007)
            }
            return .text(s)
        }
        return .data(bytes)
    }

    /// RFC 6455 §7.4: codes a peer may send.
    static func isValidCloseCode(_ c: UInt16) -> Bool {
        switch c {
        case 1000...1003, 1007...1011, 1012...1014: return true
        case 3000...4999: return true
        default: return false
        }
    }
}

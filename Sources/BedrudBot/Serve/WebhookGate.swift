import BedrudProtocol
import FoundationEssentials

/// What Bedrud POSTs to a webhook endpoint (v0.12.0 queue/handler_dispatch_webhook.go:38-52,
/// handlers/room.go:3148-3185): `{event, timestamp, data}` with `data` `{roomId, roomName,
/// userId}` for the room events and `{}` for `ping`.
public struct WebhookEnvelope: Decodable, Sendable, Equatable {
    public struct Data: Decodable, Sendable, Equatable {
        public var roomId: String?
        public var roomName: String?
        public var userId: String?
        public init(roomId: String? = nil, roomName: String? = nil, userId: String? = nil) {
            self.roomId = roomId
            self.roomName = roomName
            self.userId = userId
        }
    }
    public var event: String
    /// RFC 3339, UTC, whole seconds (Go's `time.RFC3339`).
    public var timestamp: String
    public var data: Data

    public init(event: String, timestamp: String, data: Data = Data()) {
        self.event = event
        self.timestamp = timestamp
        self.data = data
    }

    enum CodingKeys: String, CodingKey { case event, timestamp, data }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        event = try c.decode(String.self, forKey: .event)
        timestamp = try c.decode(String.self, forKey: .timestamp)
        data = try c.decodeIfPresent(Data.self, forKey: .data) ?? Data()
    }

    /// The events Bedrud v0.12.0 knows (models/webhook.go).
    public enum Kind: String, Sendable, CaseIterable {
        case roomCreated = "room.created"
        case roomEnded = "room.ended"
        case participantJoined = "participant.joined"
        case recordingCompleted = "recording.completed"
        case ping
    }
    public var kind: Kind? { Kind(rawValue: event) }
}

/// Decides whether a POST to the webhook endpoint is Bedrud's, from its raw body and the
/// signature header, as a pure value: the HMAC is computed by the shell (``expected``), the
/// clock is passed in. A request is accepted only when
/// - `X-Bedrud-Signature` is `sha256=` and the hex HMAC-SHA256 of the raw body under one
///   of the current secrets, compared in constant time;
/// - the body is an envelope whose `timestamp` is within five minutes of now (the
///   signature covers it, so it cannot be moved);
/// - the same envelope was not accepted before (a replay).
///
/// Refusals say nothing in the answer beyond the status (401 for any signature problem).
public struct WebhookGate: Sendable {
    public enum Refusal: String, Sendable, Equatable {
        /// Missing, malformed or wrong signature: 401.
        case signature
        /// Signed, but not an envelope we can read: 400.
        case malformed
        /// Signed, but its timestamp is more than ``window`` from now: 400.
        case stale
        /// An envelope accepted before: 409.
        case replay

        public var status: Int {
            switch self {
            case .signature: 401
            case .malformed, .stale: 400
            case .replay: 409
            }
        }
    }

    public enum Verdict: Sendable, Equatable {
        case accept(WebhookEnvelope)
        case refuse(Refusal)
    }

    /// How far an envelope's timestamp may be from now, either way: five minutes.
    public static let window: Double = 300
    /// Signatures remembered for replays; past it the oldest go first (a valid signature
    /// is needed to add one, and the window makes older ones stale anyway).
    public static let memory = 100_000

    /// Accepted signatures and when they stop mattering (`now` + window), oldest first.
    private var seen: [String: Double] = [:]
    private var order: [(signature: String, until: Double)] = []
    private var orderStart = 0

    public init() {}

    /// - Parameters:
    ///   - signatureHeader: the `X-Bedrud-Signature` header as sent.
    ///   - expected: `sha256=<hex>` of the body under each current secret (one, or two
    ///     while a rotated secret is being rolled out).
    public mutating func judge(body: [UInt8], signatureHeader: String?, expected: [String], now: Double) -> Verdict {
        guard let header = signatureHeader, expected.contains(where: { Self.constantTimeEqual(Array(header.utf8), Array($0.utf8)) }) else {
            return .refuse(.signature)
        }
        guard let envelope = try? JSONDecoder().decode(WebhookEnvelope.self, from: Data(body)),
              let sent = RFC3339.seconds(envelope.timestamp) else { return .refuse(.malformed) }
        guard abs(now - sent) <= Self.window else { return .refuse(.stale) }
        forget(before: now)
        guard seen[header] == nil else { return .refuse(.replay) }
        remember(header, until: now + Self.window * 2)
        return .accept(envelope)
    }

    /// Constant time for equal lengths: every byte is looked at whatever differs.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }

    public var remembered: Int { seen.count }

    private mutating func remember(_ signature: String, until: Double) {
        if seen.count >= Self.memory, orderStart < order.count {
            seen[order[orderStart].signature] = nil
            orderStart += 1
        }
        seen[signature] = until
        order.append((signature, until))
    }

    private mutating func forget(before now: Double) {
        while orderStart < order.count, order[orderStart].until < now {
            seen[order[orderStart].signature] = nil
            orderStart += 1
        }
        if orderStart > 1024, orderStart * 2 > order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
    }
}

/// RFC 3339 date-times as Go's `time.RFC3339` writes them (`2026-12-06T16:34:46Z`, or with
/// a numeric offset and optional fractional seconds), to seconds since 1970.
public enum RFC3339 {
    public static func seconds(_ text: String) -> Double? {
        let b = Array(text.utf8)
        func num(_ i: Int, _ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for j in i..<(i + n) {
                guard b[j] >= 48, b[j] <= 57 else { return nil }
                v = v * 10 + Int(b[j] - 48)
            }
            return v
        }
        guard b.count >= 20, let y = num(0, 4), b[4] == 45, let mo = num(5, 2), b[7] == 45, let d = num(8, 2),
              b[10] == 84 || b[10] == 116 || b[10] == 32, let h = num(11, 2), b[13] == 58, let mi = num(14, 2), b[16] == 58, let s = num(17, 2),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45, let oh = num(i + 1, 2), b.count > i + 3, b[i + 3] == 58, let om = num(i + 4, 2) {
            offset = (oh * 3600 + om * 60) * (b[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = Int(CivilDate.days(year: Int64(y), month: Int64(mo), day: Int64(d)))
        return Double(days * 86_400 + h * 3600 + mi * 60 + s - offset) + fraction
    }
}

import FoundationEssentials

/// The claims of a JWT, read without checking its signature: the client only needs to
/// know when a token expires and whom it names. Never logs or returns the token itself.
public struct JWTClaims: Sendable, Equatable {
    /// Raw claims as JSON values (strings, numbers, bools, arrays, objects).
    public let json: [String: JSONValue]

    /// Decodes the payload of a compact JWS (`header.payload.signature`).
    /// Returns nil for anything that is not three base64url parts with a JSON object payload.
    public init?(token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Self.base64URLDecode(String(parts[1])),
              case .object(let obj)? = try? JSONDecoder().decode(JSONValue.self, from: data) else { return nil }
        json = obj
    }

    /// `exp` as Unix seconds.
    public var expiresAt: Double? { json["exp"]?.number }
    public var issuedAt: Double? { json["iat"]?.number }
    public var subject: String? { json["sub"]?.string }
    public var name: String? { json["name"]?.string }
    /// Bedrud's `accesses` claim (superadmin, admin, moderator, user, guest).
    public var accesses: [String] { json["accesses"]?.array?.compactMap(\.string) ?? [] }

    /// True when the token has no `exp` or it lies within `leeway` seconds of `now`
    /// (Unix seconds) — a JWT without `exp` counts as expired, as Bedrud's iOS app does.
    public func isExpired(now: Double, leeway: Double = 30) -> Bool {
        guard let exp = expiresAt else { return true }
        return exp - leeway <= now
    }

    public static func base64URLDecode(_ s: String) -> Data? {
        var b = String(String.UnicodeScalarView(s.unicodeScalars.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 }))
        while b.count % 4 != 0 { b += "=" }
        return Data(base64Encoded: b)
    }
}

/// A JSON value, for reading loosely typed documents such as JWT claims and Bedrud's
/// data-channel payloads.
public enum JSONValue: Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    public var string: String? { if case .string(let s) = self { s } else { nil } }
    public var number: Double? { if case .number(let n) = self { n } else { nil } }
    public var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var object: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
}

extension JSONValue: Decodable {
    /// Reads any JSON value. Numbers become doubles; `true`/`false` stay booleans (the
    /// decoder never turns a number into a bool or back).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }
}

extension JSONValue: Encodable {
    /// Writes the value back as JSON, so a document read loosely (e.g. a room's settings
    /// with keys this client does not know) survives a round trip. Whole numbers are
    /// written without a fraction.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .number(let n):
            if n.rounded() == n, abs(n) < 9.0e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
        case .bool(let b): try c.encode(b)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        case .null: try c.encodeNil()
        }
    }
}

import Foundation

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
              let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        json = obj.compactMapValues(JSONValue.init)
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
        var b = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
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

    public init?(_ any: Any) {
        switch any {
        case let s as String: self = .string(s)
        case let n as NSNumber:
            // NSNumber bridges both bools and numbers; tell them apart by objCType.
            if String(cString: n.objCType) == "c" {
                self = .bool(n.boolValue)
            } else {
                self = .number(n.doubleValue)
            }
        case let a as [Any]: self = .array(a.compactMap(JSONValue.init))
        case let o as [String: Any]: self = .object(o.compactMapValues(JSONValue.init))
        case is NSNull: self = .null
        default: return nil
        }
    }

    public var string: String? { if case .string(let s) = self { s } else { nil } }
    public var number: Double? { if case .number(let n) = self { n } else { nil } }
    public var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var object: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
}

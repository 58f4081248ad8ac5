import COpenSSL

/// HMAC-SHA256 (RFC 2104 with SHA-256) by OpenSSL, for checking signed webhooks.
public enum HMACSHA256 {
    /// The 32-byte MAC of `message` under `key`.
    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        key.withUnsafeBytes { k in
            message.withUnsafeBytes { m in
                out.withUnsafeMutableBytes { o in
                    _ = HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.bindMemory(to: UInt8.self).baseAddress, m.count,
                             o.bindMemory(to: UInt8.self).baseAddress, &length)
                }
            }
        }
        return out
    }

    /// The MAC as lower-case hex, as Go's `hex.EncodeToString` writes it.
    public static func hex(key: [UInt8], message: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var s = [UInt8]()
        s.reserveCapacity(64)
        for b in mac(key: key, message: message) {
            s.append(digits[Int(b >> 4)])
            s.append(digits[Int(b & 15)])
        }
        return String(decoding: s, as: UTF8.self)
    }
}

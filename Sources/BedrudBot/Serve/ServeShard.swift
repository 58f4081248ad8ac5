/// `K/N`: this replica records the rooms whose id hashes to K of N buckets. Every replica
/// gets every webhook (Bedrud sends each event to each registered endpoint), so N
/// replicas with shards 0/N … N-1/N record each meeting exactly once, without talking to
/// each other.
public struct ServeShard: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, n <= 1000, k >= 0, k < n else { return nil }
        index = k
        count = n
    }

    public var description: String { "\(index)/\(count)" }

    /// Whether `roomID` is this shard's: FNV-1a (64-bit) of its UTF-8 bytes, modulo N.
    /// The hash is written here, not taken from the standard library, whose `Hasher` is
    /// seeded per process: every replica, of any version, must agree.
    public func owns(roomID: String) -> Bool { Self.bucket(roomID, of: count) == index }

    public static func bucket(_ roomID: String, of n: Int) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in roomID.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        return Int(h % UInt64(n))
    }
}

/// `HOST:PORT` for serve's port: `127.0.0.1:8095`, `0.0.0.0:8095`, `[::1]:8095`,
/// `localhost:8095`. Port 0 lets the kernel choose (tests).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: UInt16

    public init?(_ text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !hostPart.isEmpty, hostPart.utf8.count <= 253, let p = UInt16(portPart),
              hostPart.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:".contains($0)) }) else { return nil }
        host = String(hostPart)
        port = p
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

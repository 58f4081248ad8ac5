import BedrudProtocol

/// How a TLS client decides whether to trust a server. One configuration serves both
/// REST (https) and signalling (wss), so a self-signed Bedrud deployment is trusted the
/// same way everywhere.
///
/// Order of precedence: `insecure` skips every check; else, if `pinnedSHA256` is not
/// empty, the server's leaf certificate must match one of the pins (the chain and the
/// host name are then not checked: the pin is the trust); else the chain must verify
/// against `caFile` (when set, instead of the system store) or the system store, and the
/// certificate must name the host.
public struct TLSConfiguration: Sendable, Hashable {
    /// PEM file with the CA certificate(s) to trust instead of the system store.
    public var caFile: String?
    /// SHA-256 fingerprints (32 bytes each) of acceptable server certificates (DER).
    public var pinnedSHA256: [[UInt8]]
    /// Skip verification entirely. The CLI prints a warning on every run when set.
    public var insecure: Bool

    public init(caFile: String? = nil, pinnedSHA256: [[UInt8]] = [], insecure: Bool = false) {
        self.caFile = caFile
        self.pinnedSHA256 = pinnedSHA256
        self.insecure = insecure
    }

    public static let system = TLSConfiguration()
}

/// SHA-256 certificate fingerprints as people write them: `AB:CD:…`, `abcd…`, with or
/// without colons or spaces, or `sha256/BASE64`.
public enum CertificateFingerprint {
    /// Parses a fingerprint. Returns nil unless it is exactly 32 bytes.
    public static func parse(_ text: String) -> [UInt8]? {
        var t = text.trimmingWhitespace()
        if t.lowercased().hasPrefix("sha256/") {
            return base64Decode(String(t.dropFirst(7))).flatMap { $0.count == 32 ? $0 : nil }
        }
        if t.lowercased().hasPrefix("sha256:") || t.lowercased().hasPrefix("sha-256:") {
            t = String(t[t.index(after: t.firstIndex(of: ":")!)...])
        }
        let hex = t.filter { $0 != ":" && $0 != " " && $0 != "-" }
        guard hex.count == 64 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(32)
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            guard let b = UInt8(hex[i..<j], radix: 16) else { return nil }
            out.append(b)
            i = j
        }
        return out
    }

    /// `AB:CD:…` uppercase hex with colons, the form `openssl x509 -fingerprint` prints.
    public static func format(_ bytes: [UInt8]) -> String {
        bytes.map { b in
            let s = String(b, radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }.joined(separator: ":")
    }

    static func base64Decode(_ s: String) -> [UInt8]? {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var map = [Int](repeating: -1, count: 256)
        for (i, c) in table.enumerated() { map[Int(c)] = i }
        map[Int(UInt8(ascii: "-"))] = 62
        map[Int(UInt8(ascii: "_"))] = 63
        var out: [UInt8] = []
        var acc = 0, bits = 0
        for c in s.utf8 where c != UInt8(ascii: "=") {
            let v = map[Int(c)]
            guard v >= 0 else { return nil }
            acc = (acc << 6) | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((acc >> bits) & 0xFF))
            }
        }
        return out
    }
}

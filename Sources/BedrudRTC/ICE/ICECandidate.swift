import FoundationEssentials
import Glibc

/// A parsed ICE candidate line (RFC 8839 §5.1):
/// `candidate:<foundation> <component> <transport> <priority> <address> <port> typ <type> [raddr <a>] [rport <p>] [name value]…`
///
/// Pure value; libnice parses the line again when it is added, this parse is the
/// gate that keeps garbage and unsupported forms (mDNS names) away from it.
public struct ICECandidate: Sendable, Equatable {
    public enum Transport: String, Sendable { case udp, tcp }
    public enum Kind: String, Sendable { case host, srflx, prflx, relay }

    public var foundation: String
    public var component: Int
    public var transport: Transport
    public var priority: UInt32
    public var address: String
    public var port: UInt16
    public var kind: Kind
    public var relatedAddress: String?
    public var relatedPort: UInt16?
    /// `active`, `passive` or `so` for TCP candidates (RFC 6544).
    public var tcpType: String?
    /// Remaining `name value` pairs (generation, ufrag, network-id, …).
    public var extensions: [String: String]

    /// Longest candidate line accepted.
    public static let maxLength = 1024

    /// Parses a candidate with or without the `a=` and `candidate:` prefixes.
    public init(parsing line: String) throws(ICECandidateError) {
        guard line.utf8.count <= Self.maxLength else { throw ICECandidateError(.tooLong) }
        var s = Substring(line).trimmingSpaces()[...]
        if s.hasPrefix("a=") { s = s.dropFirst(2) }
        if s.hasPrefix("candidate:") { s = s.dropFirst(10) }
        let f = s.split(separator: " ", omittingEmptySubsequences: true)
        guard f.count >= 8 else { throw ICECandidateError(.tooFewFields) }
        guard (1...32).contains(f[0].count), f[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/") })
        else { throw ICECandidateError(.badFoundation) }
        guard let comp = Int(f[1]), (1...256).contains(comp) else { throw ICECandidateError(.badComponent) }
        guard let tr = Transport(rawValue: f[2].lowercased()) else { throw ICECandidateError(.unsupportedTransport) }
        guard let prio = UInt32(f[3]) else { throw ICECandidateError(.badPriority) }
        let addr = String(f[4])
        guard Self.isIPAddress(addr) else {
            throw ICECandidateError(addr.lowercased().hasSuffix(".local") ? .mDNSName : .badAddress)
        }
        guard let port = UInt16(f[5]) else { throw ICECandidateError(.badPort) }
        guard f[6] == "typ", let kind = Kind(rawValue: f[7].lowercased()) else { throw ICECandidateError(.badType) }
        foundation = String(f[0])
        component = comp
        transport = tr
        priority = prio
        address = addr
        self.port = port
        self.kind = kind
        extensions = [:]
        var i = 8
        while i + 1 < f.count {
            let name = String(f[i]), value = String(f[i + 1])
            switch name {
            case "raddr":
                guard Self.isIPAddress(value) else { throw ICECandidateError(.badAddress) }
                relatedAddress = value
            case "rport":
                guard let p = UInt16(value) else { throw ICECandidateError(.badPort) }
                relatedPort = p
            case "tcptype":
                tcpType = value.lowercased()
            default:
                extensions[name] = value
            }
            i += 2
        }
        guard i == f.count else { throw ICECandidateError(.danglingExtension) }
        if transport == .tcp, tcpType == nil { throw ICECandidateError(.missingTCPType) }
    }

    /// The line without prefixes, as `candidate:` attribute value.
    public var attributeValue: String {
        var s = "\(foundation) \(component) \(transport.rawValue.uppercased()) \(priority) \(address) \(port) typ \(kind.rawValue)"
        if let relatedAddress { s += " raddr \(relatedAddress)" }
        if let relatedPort { s += " rport \(relatedPort)" }
        if let tcpType { s += " tcptype \(tcpType)" }
        for k in extensions.keys.sorted() { s += " \(k) \(extensions[k] ?? "")" }
        return s
    }

    /// `candidate:…`, the form LiveKit's trickle JSON carries.
    public var candidateString: String { "candidate:" + attributeValue }

    static func isIPAddress(_ s: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return s.withCString { inet_pton(AF_INET, $0, &v4) == 1 || inet_pton(AF_INET6, $0, &v6) == 1 }
    }
}

/// Why a candidate line was refused.
public struct ICECandidateError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: Sendable, Equatable {
        case tooLong, tooFewFields, badFoundation, badComponent, unsupportedTransport, badPriority
        case badAddress, mDNSName, badPort, badType, danglingExtension, missingTCPType, badJSON
    }
    let code: Code
    init(_ code: Code) { self.code = code }

    public var description: String {
        switch code {
        case .tooLong: "ICE candidate is too long."
        case .tooFewFields: "ICE candidate has too few fields."
        case .badFoundation: "ICE candidate foundation is malformed."
        case .badComponent: "ICE candidate component id is malformed."
        case .unsupportedTransport: "ICE candidate transport is neither UDP nor TCP."
        case .badPriority: "ICE candidate priority is malformed."
        case .badAddress: "ICE candidate address is not an IP address."
        case .mDNSName: "ICE candidate uses an mDNS .local name, which is not supported."
        case .badPort: "ICE candidate port is malformed."
        case .badType: "ICE candidate type is missing or unknown."
        case .danglingExtension: "ICE candidate has an extension name without a value."
        case .missingTCPType: "ICE TCP candidate has no tcptype."
        case .badJSON: "ICE candidate JSON is not an RTCIceCandidateInit object."
        }
    }
}

// The trickled candidate JSON (`RTCIceCandidateInit`) is `BedrudProtocol.ICECandidateInit`,
// shared with the signalling layer.

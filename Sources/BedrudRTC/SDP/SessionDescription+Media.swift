// Typed views of the SDP attributes WebRTC uses: mid and BUNDLE (RFC 8843), ICE
// (RFC 8839), DTLS fingerprint and setup (RFC 8122, RFC 5763), RTP maps and format
// parameters (RFC 8866 §6.6, §6.15), RTCP feedback (RFC 4585), header extensions
// (RFC 8285), SSRC attributes (RFC 5576), msid (RFC 8830), SCTP (RFC 8841).

/// Media direction attribute (RFC 8866 §6.7).
public enum MediaDirection: String, Sendable, Equatable {
    case sendrecv, sendonly, recvonly, inactive

    /// The direction seen from the other side.
    public var reversed: MediaDirection {
        switch self {
        case .sendonly: .recvonly
        case .recvonly: .sendonly
        default: self
        }
    }

    public var sends: Bool { self == .sendrecv || self == .sendonly }
    public var receives: Bool { self == .sendrecv || self == .recvonly }
}

/// DTLS setup role (RFC 4145, RFC 5763 §5).
public enum DTLSSetupRole: String, Sendable, Equatable {
    case actpass, active, passive, holdconn
}

/// `a=rtpmap:<pt> <encoding>/<clock>[/<channels>]`.
public struct RTPMap: Sendable, Equatable {
    public var payloadType: UInt8
    public var encoding: String
    public var clockRate: Int
    public var channels: Int

    public init(payloadType: UInt8, encoding: String, clockRate: Int, channels: Int = 1) {
        self.payloadType = payloadType
        self.encoding = encoding
        self.clockRate = clockRate
        self.channels = channels
    }

    init?(attributeValue v: String) {
        let parts = v.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, let pt = UInt8(parts[0]), pt < 128 else { return nil }
        let enc = parts[1].split(separator: "/", omittingEmptySubsequences: false)
        guard enc.count >= 2, !enc[0].isEmpty, let clock = Int(enc[1]), clock > 0 else { return nil }
        var channels = 1
        if enc.count >= 3 {
            guard let c = Int(enc[2]), c > 0, c <= 255 else { return nil }
            channels = c
        }
        self.init(payloadType: pt, encoding: String(enc[0]), clockRate: clock, channels: channels)
    }

    var attributeValue: String {
        channels > 1 ? "\(payloadType) \(encoding)/\(clockRate)/\(channels)" : "\(payloadType) \(encoding)/\(clockRate)"
    }
}

/// `a=extmap:<id>[/<direction>] <uri> [<attributes>]`.
public struct HeaderExtensionMap: Sendable, Equatable {
    public var id: Int
    public var uri: String

    init?(attributeValue v: String) {
        let parts = v.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count >= 2 else { return nil }
        let idText = parts[0].split(separator: "/", maxSplits: 1).first ?? ""
        guard let id = Int(idText), (1...255).contains(id) else { return nil }
        self.id = id
        self.uri = String(parts[1])
    }
}

/// What the `a=ssrc` and `a=msid` lines say about one SSRC.
public struct SSRCDescription: Sendable, Equatable {
    public var ssrc: UInt32
    public var cname: String?
    /// msid stream id (for LiveKit: `PA_<participant>|TR_<track>`).
    public var streamID: String?
    /// msid track id (for LiveKit: `TR_<track>`).
    public var trackID: String?
}

/// A certificate fingerprint from `a=fingerprint:<algorithm> <hex:hex:…>`.
public struct DTLSFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// Lower-case hash name as in the SDP (`sha-256`, `sha-1`, `sha-384`, `sha-512`).
    public var algorithm: String
    public var bytes: [UInt8]

    public init(algorithm: String, bytes: [UInt8]) {
        self.algorithm = algorithm.lowercased()
        self.bytes = bytes
    }

    /// Parses `sha-256 AB:CD:…`; nil if the value is malformed.
    public init?(attributeValue v: String) {
        let parts = v.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else { return nil }
        var bytes: [UInt8] = []
        for pair in parts[1].split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.count == 2, let b = UInt8(pair, radix: 16) else { return nil }
            bytes.append(b)
        }
        guard (16...64).contains(bytes.count) else { return nil }
        self.init(algorithm: String(parts[0]), bytes: bytes)
    }

    /// Upper-case colon-separated hex, as written in SDP.
    public var hex: String {
        bytes.map { b in
            let s = String(b, radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }.joined(separator: ":")
    }

    public var attributeValue: String { "\(algorithm) \(hex)" }
    public var description: String { attributeValue }
}

extension MediaDescription {
    func values(_ name: String) -> [String] {
        attributes.compactMap { $0.name == name ? ($0.value ?? "") : nil }
    }

    func value(_ name: String) -> String? {
        attributes.first(where: { $0.name == name }).map { $0.value ?? "" }
    }

    func has(_ name: String) -> Bool { attributes.contains { $0.name == name } }

    /// `a=mid`.
    public var mid: String? { value("mid") }

    /// The direction attribute; `sendrecv` when none is given (RFC 8866 §6.7).
    public var direction: MediaDirection {
        for a in attributes { if let d = MediaDirection(rawValue: a.name) { return d } }
        return .sendrecv
    }

    /// True for `a=bundle-only` (RFC 8843 §6), whose port 0 does not mean rejected.
    public var isBundleOnly: Bool { has("bundle-only") }

    /// Port 0 without `a=bundle-only`: the offerer (or answerer) rejected this section.
    public var isRejected: Bool { port == 0 && !isBundleOnly }

    public var iceUfrag: String? { value("ice-ufrag") }
    public var icePassword: String? { value("ice-pwd") }
    public var fingerprints: [DTLSFingerprint] { values("fingerprint").compactMap(DTLSFingerprint.init(attributeValue:)) }
    public var setup: DTLSSetupRole? { value("setup").flatMap { DTLSSetupRole(rawValue: $0.lowercased()) } }

    public var rtpMaps: [RTPMap] { values("rtpmap").compactMap(RTPMap.init(attributeValue:)) }

    /// The `a=fmtp` parameters of `payloadType`, as written (e.g. `minptime=10;useinbandfec=1`).
    public func formatParameters(for payloadType: UInt8) -> String? {
        let prefix = "\(payloadType) "
        for v in values("fmtp") where v.hasPrefix(prefix) {
            return String(v.dropFirst(prefix.count)).trimmingSpaces()
        }
        return nil
    }

    /// `a=rtcp-fb` values for `payloadType`, including the wildcard `*` lines, without
    /// surrounding blanks (pion v3 writes `a=rtcp-fb:111 nack ` with a trailing space).
    public func rtcpFeedback(for payloadType: UInt8) -> [String] {
        let prefix = "\(payloadType) "
        return values("rtcp-fb").compactMap { v in
            if v.hasPrefix(prefix) { return v.dropFirst(prefix.count).trimmingSpaces() }
            if v.hasPrefix("* ") { return v.dropFirst(2).trimmingSpaces() }
            return nil
        }
    }

    public var headerExtensions: [HeaderExtensionMap] { values("extmap").compactMap(HeaderExtensionMap.init(attributeValue:)) }

    /// `a=msid:<stream> <track>` of the section.
    public var msid: (streamID: String, trackID: String?)? {
        guard let v = value("msid") else { return nil }
        let p = v.split(separator: " ", omittingEmptySubsequences: true)
        guard let s = p.first else { return nil }
        return (String(s), p.count > 1 ? String(p[1]) : nil)
    }

    /// SSRCs from `a=ssrc` lines in first-seen order, with their cname and msid. The
    /// section's `a=msid` fills in streams the `a=ssrc` lines leave out.
    public var ssrcs: [SSRCDescription] {
        var order: [UInt32] = []
        var byID: [UInt32: SSRCDescription] = [:]
        for v in values("ssrc") {
            let p = v.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard let first = p.first, let ssrc = UInt32(first) else { continue }
            if byID[ssrc] == nil {
                order.append(ssrc)
                byID[ssrc] = SSRCDescription(ssrc: ssrc)
            }
            guard p.count == 2 else { continue }
            let attr = p[1]
            if attr.hasPrefix("cname:") {
                byID[ssrc]?.cname = String(attr.dropFirst(6))
            } else if attr.hasPrefix("msid:") {
                let m = attr.dropFirst(5).split(separator: " ", omittingEmptySubsequences: true)
                if let s = m.first { byID[ssrc]?.streamID = String(s) }
                if m.count > 1 { byID[ssrc]?.trackID = String(m[1]) }
            }
        }
        // SSRCs that only repair others (FID/FEC groups) are not tracks of their own.
        var secondary = Set<UInt32>()
        for g in values("ssrc-group") {
            let p = g.split(separator: " ", omittingEmptySubsequences: true)
            if p.count >= 3 { for s in p.dropFirst(2) { if let v = UInt32(s) { secondary.insert(v) } } }
        }
        let section = msid
        return order.filter { !secondary.contains($0) }.compactMap { ssrc in
            guard var d = byID[ssrc] else { return nil }
            if d.streamID == nil, let section {
                d.streamID = section.streamID
                d.trackID = section.trackID
            }
            return d
        }
    }

    /// SCTP port: `a=sctp-port` (RFC 8841), or the legacy `a=sctpmap:<port> webrtc-datachannel`.
    public var sctpPort: UInt16? {
        if let v = value("sctp-port"), let p = UInt16(v.trimmingSpaces()) { return p }
        if let v = value("sctpmap"), let first = v.split(separator: " ").first, let p = UInt16(first) { return p }
        return nil
    }

    /// `a=max-message-size` (RFC 8841 §6); nil when absent.
    public var maxMessageSize: Int? { value("max-message-size").flatMap { Int($0.trimmingSpaces()) } }

    /// `a=candidate` values, without the `candidate:` attribute name.
    public var candidates: [String] { values("candidate") }
    public var hasEndOfCandidates: Bool { has("end-of-candidates") }
    public var isRTCPMux: Bool { has("rtcp-mux") }
    public var isReducedSizeRTCP: Bool { has("rtcp-rsize") }
    public var isDataChannel: Bool { kind == "application" && proto.uppercased().contains("SCTP") }
}

extension SessionDescription {
    func values(_ name: String) -> [String] {
        attributes.compactMap { $0.name == name ? ($0.value ?? "") : nil }
    }

    /// Mid lists of `a=group:BUNDLE` lines.
    public var bundleGroups: [[String]] {
        values("group").compactMap { v in
            let p = v.split(separator: " ", omittingEmptySubsequences: true)
            guard p.first == "BUNDLE" else { return nil }
            return p.dropFirst().map(String.init)
        }
    }

    /// Session-level `a=ice-lite` (RFC 8839 §5.3).
    public var isICELite: Bool { attributes.contains { $0.name == "ice-lite" } }

    /// ICE credentials for a section: its own, else the session's.
    public func iceCredentials(for index: Int) -> (ufrag: String, password: String)? {
        let m = media[index]
        let u = m.iceUfrag ?? values("ice-ufrag").first
        let p = m.icePassword ?? values("ice-pwd").first
        guard let u, let p, !u.isEmpty, !p.isEmpty else { return nil }
        return (u, p)
    }

    /// Fingerprints for a section: its own, else the session's.
    public func fingerprints(for index: Int) -> [DTLSFingerprint] {
        let own = media[index].fingerprints
        return own.isEmpty ? values("fingerprint").compactMap(DTLSFingerprint.init(attributeValue:)) : own
    }

    /// Setup role for a section: its own, else the session's.
    public func setup(for index: Int) -> DTLSSetupRole? {
        media[index].setup ?? values("setup").first.flatMap { DTLSSetupRole(rawValue: $0.lowercased()) }
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}

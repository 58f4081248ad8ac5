// Offer/answer (RFC 3264, JSEP RFC 8829 §5.3) for a receive-only recorder: answer each
// offered section in place, accept Opus, decline what we cannot use, keep the data
// section; and write our own offers (data channels, later audio) for a publisher PC.

/// What the local side puts into every description it writes.
public struct LocalTransportParameters: Sendable, Equatable {
    public var iceUfrag: String
    public var icePassword: String
    public var fingerprint: DTLSFingerprint
    /// Our DTLS role as written in `a=setup`.
    public var setup: DTLSSetupRole
    /// `candidate:…` values gathered so far; written into the first bundled section.
    public var candidates: [String]
    /// True when gathering has finished (`a=end-of-candidates`).
    public var endOfCandidates: Bool

    public init(iceUfrag: String, icePassword: String, fingerprint: DTLSFingerprint, setup: DTLSSetupRole, candidates: [String] = [], endOfCandidates: Bool = false) {
        self.iceUfrag = iceUfrag
        self.icePassword = icePassword
        self.fingerprint = fingerprint
        self.setup = setup
        self.candidates = candidates
        self.endOfCandidates = endOfCandidates
    }
}

/// How sections we cannot use are declined. Either way the section names one offered
/// codec with its `a=rtpmap` (see ``SDPNegotiation/declinedSection(_:port:)``): LiveKit's
/// pion refuses an answer whose sections list a payload type without one.
public enum DeclinePolicy: Sendable, Equatable {
    /// Port 0 (RFC 3264 §6), out of BUNDLE. A section that carries the BUNDLE tag cannot
    /// be rejected without rejecting the whole group, so that one is answered `inactive` instead.
    case reject
    /// Port 9 with one offered codec and `a=inactive`, kept in BUNDLE.
    case inactive
}

/// Answer-side choices.
public struct AnswerPolicy: Sendable, Equatable {
    /// Video is answered `inactive` in BUNDLE by default. Pion takes port 0 as well, but
    /// a stack that reads port 0 as a live section outside BUNDLE (aiortc does) then sets
    /// up a second transport for it that never connects and holds up later sections.
    public var video: DeclinePolicy = .inactive
    /// Answer `stereo=1` where the offer has `sprop-stereo=1` (LiveKit gotcha 9).
    public var acceptStereo = true
    /// Answer `a=rtcp-fb:<opus> nack` where the offer has it, so the SFU retransmits.
    public var acceptNACK = true
    /// Our `a=max-message-size`; incoming data-channel messages up to this size are accepted.
    public var maxMessageSize = 262_144
    /// Our SCTP port (`a=sctp-port`).
    public var sctpPort: UInt16 = 5000

    public init() {}
}

/// What the answer did with one offered section.
public struct SectionDecision: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        /// Audio accepted with this Opus payload type; `stereo` when we answered stereo=1.
        case audio(payloadType: UInt8, clockRate: Int, stereo: Bool, nack: Bool)
        /// Data channels accepted on the remote SCTP port.
        case data(remotePort: UInt16, remoteMaxMessageSize: Int?)
        /// Port 0.
        case rejected(reason: String)
        /// Kept, but `a=inactive`.
        case inactive(reason: String)
    }
    public var index: Int
    public var mid: String?
    public var kind: String
    public var outcome: Outcome
}

/// The peer's transport parameters, read from its offer or answer.
public struct RemoteTransportParameters: Sendable, Equatable {
    public var iceUfrag: String
    public var icePassword: String
    public var fingerprints: [DTLSFingerprint]
    public var setup: DTLSSetupRole
    public var isICELite: Bool
    /// `(mid, candidate value)` pairs from `a=candidate` lines.
    public var candidates: [(mid: String?, index: Int, candidate: String)]
    public var endOfCandidates: Bool
    /// Remote SCTP port and max message size when a data section is present and not rejected.
    public var sctpPort: UInt16?
    public var maxMessageSize: Int?

    public static func == (a: Self, b: Self) -> Bool {
        a.iceUfrag == b.iceUfrag && a.icePassword == b.icePassword && a.fingerprints == b.fingerprints && a.setup == b.setup
            && a.isICELite == b.isICELite && a.endOfCandidates == b.endOfCandidates && a.sctpPort == b.sctpPort
            && a.maxMessageSize == b.maxMessageSize
            && a.candidates.map { "\($0.mid ?? "")|\($0.index)|\($0.candidate)" } == b.candidates.map { "\($0.mid ?? "")|\($0.index)|\($0.candidate)" }
    }

    /// Reads the shared (bundled) transport of `sdp`: every section that is not rejected
    /// must use the same ICE credentials and fingerprints, since one transport carries all.
    public init(from sdp: SessionDescription) throws(SDPError) {
        var creds: (ufrag: String, password: String)?
        var fps: [DTLSFingerprint]?
        var setup: DTLSSetupRole?
        var candidates: [(mid: String?, index: Int, candidate: String)] = []
        var eoc = false
        var sctpPort: UInt16?
        var maxMessage: Int?
        // With BUNDLE, one transport carries everything: its candidates are those of the
        // tagged (first) section; others may list candidates of transports never used.
        let tag = sdp.bundleGroups.first?.first
        let tagPresent = tag != nil && sdp.media.contains { $0.mid == tag && !$0.isRejected }
        for (i, m) in sdp.media.enumerated() where !m.isRejected {
            guard let c = sdp.iceCredentials(for: i) else { throw SDPError(.missingICECredentials, mediaIndex: i) }
            if let creds, creds != c { throw SDPError(.bundleMismatch, mediaIndex: i) }
            creds = c
            let f = sdp.fingerprints(for: i)
            guard !f.isEmpty else { throw SDPError(.missingFingerprint, mediaIndex: i) }
            if let fps, fps != f { throw SDPError(.bundleMismatch, mediaIndex: i) }
            fps = f
            if setup == nil { setup = sdp.setup(for: i) }
            if !tagPresent || m.mid == tag {
                for cand in m.candidates { candidates.append((m.mid, i, "candidate:" + cand)) }
            }
            eoc = eoc || m.hasEndOfCandidates
            if m.isDataChannel, sctpPort == nil {
                sctpPort = m.sctpPort ?? 5000
                maxMessage = m.maxMessageSize
            }
        }
        guard let creds, let fps else { throw SDPError(.noUsableSection) }
        self.iceUfrag = creds.ufrag
        self.icePassword = creds.password
        self.fingerprints = fps
        // RFC 5763 §5: an offer without a=setup means actpass; an answer without it, active.
        self.setup = setup ?? .actpass
        self.isICELite = sdp.isICELite
        self.candidates = candidates
        self.endOfCandidates = eoc
        self.sctpPort = sctpPort
        self.maxMessageSize = maxMessage
    }
}

/// Builds answers and offers.
public enum SDPNegotiation {
    /// The DTLS role to answer with for an offered `a=setup` (RFC 5763 §5): we take the
    /// client (`active`) role whenever the offerer lets us, as libwebrtc does.
    public static func answerSetup(for offered: DTLSSetupRole) throws(SDPError) -> DTLSSetupRole {
        switch offered {
        case .actpass, .passive: return .active
        case .active: return .passive
        case .holdconn: throw SDPError(.unsupportedSetup)
        }
    }

    /// Answers `offer` section by section, in place (same count and order of `m=` lines).
    ///
    /// Audio: Opus only, with the offer's payload type, `useinbandfec=1`, `stereo=1` where
    /// the offer has `sprop-stereo=1`; RED and other codecs are left out, so the SFU sends
    /// plain Opus. Video and unknown media: declined per `policy.video`. Data: the first
    /// section accepted, any further one declined. Every section of the answer satisfies
    /// pion's rule that each non-zero payload type has an `a=rtpmap` in its section.
    /// - Returns: the answer and what was decided for each section.
    public static func answer(
        to offer: SessionDescription, local: LocalTransportParameters, policy: AnswerPolicy,
        sessionID: UInt64, sessionVersion: UInt64
    ) throws(SDPError) -> (SessionDescription, [SectionDecision]) {
        let bundle = offer.bundleGroups.first ?? []
        let bundleTag = bundle.first
        var sections: [MediaDescription] = []
        var decisions: [SectionDecision] = []
        var acceptedMids: [String] = []
        var wroteCandidates = false

        var acceptedData = false

        for (i, m) in offer.media.enumerated() {
            let isTag = m.mid != nil && m.mid == bundleTag
            func decline(_ reason: String, policy: DeclinePolicy) -> (MediaDescription, SectionDecision.Outcome, Bool) {
                if policy == .inactive || isTag {
                    var s = Self.declinedSection(m, port: 9)
                    s.attributes.append(SDPAttribute("inactive"))
                    return (s, .inactive(reason: reason), true)
                }
                var s = Self.declinedSection(m, port: 0)
                s.lines = [SDPLine("c", "IN IP4 0.0.0.0")]
                s.attributes.insert(contentsOf: m.mid.map { [SDPAttribute("mid", $0)] } ?? [], at: 0)
                return (s, .rejected(reason: reason), false)
            }

            var section: MediaDescription
            var outcome: SectionDecision.Outcome
            var accepted: Bool

            if m.isRejected {
                // Also a recycled section (RFC 8829 §5.2.2): it stays rejected, in the same
                // pion-readable shape as every other declined section.
                section = Self.declinedSection(m, port: 0)
                section.lines = [SDPLine("c", "IN IP4 0.0.0.0")]
                section.attributes.insert(contentsOf: m.mid.map { [SDPAttribute("mid", $0)] } ?? [], at: 0)
                outcome = .rejected(reason: "the offer rejected it")
                accepted = false
            } else if m.kind == "audio" {
                if let opus = m.rtpMaps.first(where: { $0.encoding.lowercased() == "opus" && $0.clockRate == 48000 }) {
                    section = MediaDescription(kind: "audio", port: 9, proto: m.proto, formats: ["\(opus.payloadType)"])
                    section.attributes.append(SDPAttribute("rtpmap", opus.attributeValue))
                    let offered = FormatParameters(m.formatParameters(for: opus.payloadType) ?? "")
                    var fmtp = FormatParameters("")
                    fmtp.set("minptime", offered.value("minptime") ?? "10")
                    fmtp.set("useinbandfec", "1")
                    let stereo = policy.acceptStereo && offered.value("sprop-stereo") == "1"
                    if stereo { fmtp.set("stereo", "1") }
                    section.attributes.append(SDPAttribute("fmtp", "\(opus.payloadType) \(fmtp.text)"))
                    let nack = policy.acceptNACK && m.rtcpFeedback(for: opus.payloadType).contains("nack")
                    if nack { section.attributes.append(SDPAttribute("rtcp-fb", "\(opus.payloadType) nack")) }
                    let dir: MediaDirection = m.direction.sends ? .recvonly : .inactive
                    section.attributes.append(SDPAttribute(dir.rawValue))
                    if m.isRTCPMux { section.attributes.append(SDPAttribute("rtcp-mux")) }
                    if m.isReducedSizeRTCP { section.attributes.append(SDPAttribute("rtcp-rsize")) }
                    outcome = .audio(payloadType: opus.payloadType, clockRate: opus.clockRate, stereo: stereo, nack: nack)
                    accepted = true
                } else {
                    (section, outcome, accepted) = decline("no Opus in the offer", policy: .reject)
                }
            } else if m.isDataChannel && acceptedData {
                (section, outcome, accepted) = decline("a second data section (one SCTP association per transport)", policy: .reject)
            } else if m.isDataChannel {
                acceptedData = true
                section = MediaDescription(kind: "application", port: 9, proto: m.proto, formats: m.formats)
                if m.proto.uppercased() == "DTLS/SCTP" {
                    section.formats = ["\(policy.sctpPort)"]
                    section.attributes.append(SDPAttribute("sctpmap", "\(policy.sctpPort) webrtc-datachannel 1024"))
                } else {
                    section.attributes.append(SDPAttribute("sctp-port", "\(policy.sctpPort)"))
                }
                section.attributes.append(SDPAttribute("max-message-size", "\(policy.maxMessageSize)"))
                outcome = .data(remotePort: m.sctpPort ?? 5000, remoteMaxMessageSize: m.maxMessageSize)
                accepted = true
            } else if m.kind == "video" {
                (section, outcome, accepted) = decline("video is not received by a recorder", policy: policy.video)
            } else {
                (section, outcome, accepted) = decline("media kind \(m.kind) is not supported", policy: .reject)
            }

            let credentials = [
                SDPAttribute("ice-ufrag", local.iceUfrag), SDPAttribute("ice-pwd", local.icePassword),
                SDPAttribute("ice-options", "trickle"), SDPAttribute("fingerprint", local.fingerprint.attributeValue),
                SDPAttribute("setup", local.setup.rawValue),
            ]
            if !accepted {
                // Rejected sections carry our credentials too (never candidates): pion does
                // not need them, but aiortc refuses an answer with a section without them,
                // and they are the same as everywhere else, so no stack can read a conflict.
                section.attributes.insert(contentsOf: credentials, at: m.mid == nil ? 0 : 1)
            }
            if accepted {
                // Transport attributes go into every accepted section (JSEP §5.3.1),
                // candidates only into the first one (they belong to the shared transport).
                var transport: [SDPAttribute] = []
                if let mid = m.mid { transport.append(SDPAttribute("mid", mid)) }
                transport += credentials
                if !wroteCandidates {
                    wroteCandidates = true
                    for c in local.candidates { transport.append(SDPAttribute("candidate", Self.stripCandidatePrefix(c))) }
                    if local.endOfCandidates { transport.append(SDPAttribute("end-of-candidates")) }
                }
                section.lines = [SDPLine("c", "IN IP4 0.0.0.0")]
                section.attributes = transport + section.attributes
                if let mid = m.mid, bundle.contains(mid) { acceptedMids.append(mid) }
            }
            sections.append(section)
            decisions.append(SectionDecision(index: i, mid: m.mid, kind: m.kind, outcome: outcome))
        }
        guard decisions.contains(where: {
            switch $0.outcome {
            case .audio, .data: true
            case .rejected, .inactive: false
            }
        }) else {
            throw SDPError(.noUsableSection)
        }

        var attrs: [SDPAttribute] = []
        // Keep the offer's BUNDLE order; rejected mids leave the group (RFC 8843 §7.3.3).
        let ordered = bundle.filter { acceptedMids.contains($0) }
        if !ordered.isEmpty { attrs.append(SDPAttribute("group", (["BUNDLE"] + ordered).joined(separator: " "))) }
        if offer.attributes.contains(where: { $0.name == "extmap-allow-mixed" }) { attrs.append(SDPAttribute("extmap-allow-mixed")) }
        let answer = SessionDescription(
            origin: .init(sessionID: "\(sessionID)", sessionVersion: "\(sessionVersion)"),
            attributes: attrs, media: sections)
        return (answer, decisions)
    }

    /// One section of an offer we write.
    public enum OfferSection: Sendable, Equatable {
        /// `m=application … webrtc-datachannel`.
        case data(mid: String)
        /// An Opus section; `ssrc`/`streamID`/`trackID` describe what we send.
        case audio(mid: String, direction: MediaDirection, payloadType: UInt8, ssrc: UInt32?, cname: String?, streamID: String?, trackID: String?)
    }

    /// Writes an offer (`a=setup:actpass`) with the given sections, all bundled.
    public static func offer(
        sections: [OfferSection], local: LocalTransportParameters, maxMessageSize: Int = 262_144, sctpPort: UInt16 = 5000,
        sessionID: UInt64, sessionVersion: UInt64
    ) -> SessionDescription {
        var media: [MediaDescription] = []
        var mids: [String] = []
        for (i, s) in sections.enumerated() {
            var m: MediaDescription
            var attrs: [SDPAttribute] = []
            let mid: String
            switch s {
            case .data(let id):
                mid = id
                m = MediaDescription(kind: "application", port: 9, proto: "UDP/DTLS/SCTP", formats: ["webrtc-datachannel"])
                attrs.append(SDPAttribute("sctp-port", "\(sctpPort)"))
                attrs.append(SDPAttribute("max-message-size", "\(maxMessageSize)"))
            case .audio(let id, let dir, let pt, let ssrc, let cname, let streamID, let trackID):
                mid = id
                m = MediaDescription(kind: "audio", port: 9, proto: "UDP/TLS/RTP/SAVPF", formats: ["\(pt)"])
                attrs.append(SDPAttribute("rtpmap", "\(pt) opus/48000/2"))
                attrs.append(SDPAttribute("fmtp", "\(pt) minptime=10;useinbandfec=1"))
                attrs.append(SDPAttribute(dir.rawValue))
                attrs.append(SDPAttribute("rtcp-mux"))
                if let streamID { attrs.append(SDPAttribute("msid", trackID.map { "\(streamID) \($0)" } ?? streamID)) }
                if let ssrc {
                    if let cname { attrs.append(SDPAttribute("ssrc", "\(ssrc) cname:\(cname)")) }
                    if let streamID { attrs.append(SDPAttribute("ssrc", "\(ssrc) msid:\(streamID)\(trackID.map { " " + $0 } ?? "")")) }
                }
            }
            var transport = [SDPAttribute("mid", mid), SDPAttribute("ice-ufrag", local.iceUfrag), SDPAttribute("ice-pwd", local.icePassword),
                             SDPAttribute("ice-options", "trickle"), SDPAttribute("fingerprint", local.fingerprint.attributeValue),
                             SDPAttribute("setup", local.setup.rawValue)]
            if i == 0 {
                for c in local.candidates { transport.append(SDPAttribute("candidate", stripCandidatePrefix(c))) }
                if local.endOfCandidates { transport.append(SDPAttribute("end-of-candidates")) }
            }
            m.lines = [SDPLine("c", "IN IP4 0.0.0.0")]
            m.attributes = transport + attrs
            media.append(m)
            mids.append(mid)
        }
        var attrs: [SDPAttribute] = []
        if !mids.isEmpty { attrs.append(SDPAttribute("group", (["BUNDLE"] + mids).joined(separator: " "))) }
        attrs.append(SDPAttribute("msid-semantic", "WMS *"))
        return SessionDescription(origin: .init(sessionID: "\(sessionID)", sessionVersion: "\(sessionVersion)"), attributes: attrs, media: media)
    }

    /// The format line and codec attributes of a section we decline, in the shape pion
    /// (LiveKit's WebRTC stack) accepts. Pion reads every payload type of an audio or video
    /// answer section through that section's `a=rtpmap`, rejected or not, and fails the
    /// whole answer with "payload type not found" when one has none. It also takes the
    /// codecs of the first video section of our answer as the only video codecs it may
    /// ever send on this connection: a track whose codec is not among them fails to bind
    /// ("unable to start track, codec is not supported by remote"), which fails that
    /// answer or a later one. So a declined section names every offered format that has
    /// an rtpmap, in the offer's order, with its rtpmap and fmtp (as a browser's answer
    /// does); `0`, which pion skips, when none has one; `a=rtcp-mux` where offered. Non-RTP
    /// sections keep their first format.
    static func declinedSection(_ m: MediaDescription, port: Int) -> MediaDescription {
        guard m.proto.uppercased().contains("RTP") else {
            return MediaDescription(kind: m.kind, port: port, proto: m.proto, formats: Array(m.formats.prefix(1)))
        }
        let maps = m.rtpMaps
        var s = MediaDescription(kind: m.kind, port: port, proto: m.proto, formats: [])
        for f in m.formats {
            guard let map = maps.first(where: { "\($0.payloadType)" == f }), !s.formats.contains(f) else { continue }
            s.formats.append(f)
            s.attributes.append(SDPAttribute("rtpmap", map.attributeValue))
            if let fmtp = m.formatParameters(for: map.payloadType), !fmtp.isEmpty {
                s.attributes.append(SDPAttribute("fmtp", "\(map.payloadType) \(fmtp)"))
            }
        }
        if s.formats.isEmpty { s.formats = ["0"] }
        // aiortc refuses an answer whose audio/video section, rejected or not, lacks it.
        if m.isRTCPMux { s.attributes.append(SDPAttribute("rtcp-mux")) }
        return s
    }

    static func stripCandidatePrefix(_ c: String) -> String {
        var s = Substring(c)
        if s.hasPrefix("a=") { s = s.dropFirst(2) }
        if s.hasPrefix("candidate:") { s = s.dropFirst(10) }
        return String(s)
    }
}

/// `key=value;key=value` format parameters (RFC 8866 §6.15), order preserved.
public struct FormatParameters: Sendable, Equatable {
    public private(set) var pairs: [(key: String, value: String)]

    public init(_ text: String) {
        pairs = text.split(separator: ";", omittingEmptySubsequences: true).map { part in
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(kv[0]).trimmingSpaces(), kv.count > 1 ? String(kv[1]).trimmingSpaces() : "")
        }.filter { !$0.0.isEmpty }
    }

    public func value(_ key: String) -> String? { pairs.first { $0.key.lowercased() == key.lowercased() }?.value }

    public mutating func set(_ key: String, _ value: String) {
        if let i = pairs.firstIndex(where: { $0.key.lowercased() == key.lowercased() }) {
            pairs[i].value = value
        } else {
            pairs.append((key, value))
        }
    }

    public var text: String { pairs.map { "\($0.key)=\($0.value)" }.joined(separator: ";") }

    public static func == (a: Self, b: Self) -> Bool { a.text == b.text }
}

// The publisher PC's audio sections, as LiveKit's SFU expects them (issue 14 §3): Opus
// only (no RED, so `disable_red` in AddTrackRequest), NACK feedback, the audio-level
// header extension (LiveKit's speaker detection reads it), `usedtx=1` with DTX and
// stereo fmtp when stereo, sendonly, and `a=msid` whose track id is the AddTrackRequest
// `cid`. Kept apart from SDPNegotiation (the answer side): it only adds to the offer
// SDPNegotiation writes.

/// One audio track we publish, as the offer describes it.
public struct LocalAudioTrack: Sendable, Equatable {
    public var mid: String
    public var ssrc: UInt32
    public var cname: String
    /// msid stream id (LiveKit: anything; the SDKs use a random id).
    public var streamID: String
    /// msid track id: the AddTrackRequest `cid`, so the SFU can match the two.
    public var trackID: String
    public var payloadType: UInt8 = 111
    public var stereo: Bool = false
    public var dtx: Bool = false
    /// RFC 8285 id of `urn:ietf:params:rtp-hdrext:ssrc-audio-level`.
    public var audioLevelID: UInt8 = 1

    public init(mid: String, ssrc: UInt32, cname: String, streamID: String, trackID: String, stereo: Bool = false, dtx: Bool = false) {
        self.mid = mid
        self.ssrc = ssrc
        self.cname = cname
        self.streamID = streamID
        self.trackID = trackID
        self.stereo = stereo
        self.dtx = dtx
    }

    public static let audioLevelURI = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"

    /// The Opus fmtp we offer.
    var formatParameters: String {
        var f = "minptime=10;useinbandfec=1"
        if dtx { f += ";usedtx=1" }
        if stereo { f += ";stereo=1;sprop-stereo=1" }
        return f
    }

    var offerSection: SDPNegotiation.OfferSection {
        .audio(mid: mid, direction: .sendonly, payloadType: payloadType, ssrc: ssrc, cname: cname, streamID: streamID, trackID: trackID)
    }

    /// Adds what SDPNegotiation's generic audio section lacks: our fmtp, NACK, audio level.
    func complete(_ m: inout MediaDescription) {
        var attrs = m.attributes
        if let i = attrs.firstIndex(where: { $0.name == "fmtp" }) {
            attrs[i] = SDPAttribute("fmtp", "\(payloadType) \(formatParameters)")
        }
        let at = (attrs.firstIndex { $0.name == "fmtp" }).map { $0 + 1 } ?? attrs.endIndex
        attrs.insert(contentsOf: [
            SDPAttribute("rtcp-fb", "\(payloadType) nack"),
            SDPAttribute("extmap", "\(audioLevelID) \(Self.audioLevelURI)"),
        ], at: at)
        m.attributes = attrs
    }

    /// What the server's answer accepted for this track.
    public struct Accepted: Sendable, Equatable {
        public var payloadType: UInt8
        /// The audio-level extension id, when the answer kept it.
        public var audioLevelID: UInt8?
        public var nack: Bool
    }

    /// Reads the answer's section for our mid: refused (nil) when it is rejected, does
    /// not receive, or has no Opus at our payload type.
    public func accepted(in answer: SessionDescription) -> Accepted? {
        guard let m = answer.media.first(where: { $0.mid == mid }), !m.isRejected, m.direction.receives else { return nil }
        guard m.rtpMaps.contains(where: { $0.payloadType == payloadType && $0.encoding.lowercased() == "opus" }) else { return nil }
        let level = m.headerExtensions.first { $0.uri == Self.audioLevelURI }.flatMap { UInt8(exactly: $0.id) }
        return Accepted(payloadType: payloadType, audioLevelID: level, nack: m.rtcpFeedback(for: payloadType).contains { $0 == "nack" })
    }
}

extension SDPNegotiation {
    /// The publisher offer: the data section, then one section per published audio track.
    static func publisherOffer(
        data: Bool, audio: [LocalAudioTrack], local: LocalTransportParameters, maxMessageSize: Int, sctpPort: UInt16,
        sessionID: UInt64, sessionVersion: UInt64
    ) -> SessionDescription {
        var sections: [OfferSection] = data ? [.data(mid: "0")] : []
        sections += audio.map(\.offerSection)
        var sdp = offer(sections: sections, local: local, maxMessageSize: maxMessageSize, sctpPort: sctpPort,
                        sessionID: sessionID, sessionVersion: sessionVersion)
        for t in audio {
            guard let i = sdp.media.firstIndex(where: { $0.mid == t.mid }) else { continue }
            t.complete(&sdp.media[i])
        }
        return sdp
    }
}

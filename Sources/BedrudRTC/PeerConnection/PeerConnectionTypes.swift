import BedrudProtocol

/// Settings of one ``PeerConnection``.
public struct PeerConnectionConfiguration: Sendable {
    public var ice = ICEConfiguration()
    public var answer = AnswerPolicy()
    /// How long after the answer (or offer) ICE and DTLS may take before the connection fails.
    public var connectTimeoutSeconds: Double = 30
    /// Receiver report interval; each report is sent after 0.5–1.5 × this (RFC 3550 §6.3.5).
    public var rtcpIntervalMs: UInt32 = 1000
    /// NACK behaviour for audio (used only where the offer allows NACK).
    public var nack = NACKTracker.Configuration()
    /// SRTP implementation: OpenSSL EVP for GCM (no allocation per packet; libsrtp2 allocates
    /// about 10 times per GCM packet here) with libsrtp2 for CM-SHA1-80, or libsrtp2 throughout.
    public var srtpBackend: SRTPBackend = .openSSLForGCM
    /// SRTP profiles offered in the DTLS handshake, preferred first.
    public var srtpProfiles: [SRTPProfile] = SRTPProfile.allCases
    /// Largest SRTP datagram accepted (bigger ones are counted and dropped).
    public var maxDatagramBytes = 1500
    /// When set, a ``PeerConnectionEvent/stats(_:)`` event every this many milliseconds while connected.
    public var statsIntervalMs: UInt32?
    /// Events kept for a slow consumer before the oldest are dropped (and counted).
    public var eventBufferSize = 4096
    /// Local SCTP port for data channels.
    public var sctpPort: UInt16 = 5000
    /// Label for logs, e.g. "subscriber".
    public var name = "pc"
    /// The room of this connection's log lines when one process records several (``Logger/room``).
    public var logRoom: String?

    public init() {}
}

/// What an applied remote offer did to the remote tracks: every track it now sends, and
/// the difference from the offer before (``PeerNegotiation`` decides it once; the same
/// difference is emitted as ``PeerConnectionEvent/tracksChanged(added:removed:)``).
public struct RemoteTrackUpdate: Sendable, Equatable {
    public var tracks: [RemoteTrack]
    public var added: [RemoteTrack]
    public var removed: [RemoteTrack]

    public init(tracks: [RemoteTrack], added: [RemoteTrack], removed: [RemoteTrack]) {
        self.tracks = tracks
        self.added = added
        self.removed = removed
    }
}

/// A remote media track announced in an offer: one SSRC with its msid.
///
/// LiveKit's subscriber offer carries `a=msid:PA_<participant>|TR_<track> TR_<track>`
/// (and the same in `a=ssrc … msid:`); ``participantSID`` and ``trackSID`` are read from it.
public struct RemoteTrack: Sendable, Equatable, Hashable {
    public var ssrc: UInt32
    public var mid: String?
    /// `audio` or `video`.
    public var kind: String
    /// msid stream id as written (e.g. `PA_abc|TR_def`).
    public var streamID: String?
    /// msid track id as written (e.g. `TR_def`).
    public var trackID: String?
    /// `PA_…` from the stream id, if present.
    public var participantSID: String?
    /// `TR_…` from the stream id's right half or the track id.
    public var trackSID: String?
    public var payloadType: UInt8
    public var clockRate: Int
    /// True when the answer accepted stereo (`sprop-stereo=1` offered).
    public var stereo: Bool
    /// True when NACKs are sent for this track.
    public var nack: Bool

    package init(ssrc: UInt32, mid: String?, kind: String, streamID: String?, trackID: String?, participantSID: String?, trackSID: String?,
                 payloadType: UInt8, clockRate: Int, stereo: Bool, nack: Bool) {
        self.ssrc = ssrc
        self.mid = mid
        self.kind = kind
        self.streamID = streamID
        self.trackID = trackID
        self.participantSID = participantSID
        self.trackSID = trackSID
        self.payloadType = payloadType
        self.clockRate = clockRate
        self.stereo = stereo
        self.nack = nack
    }

    public func hash(into h: inout Hasher) { h.combine(ssrc) }

    /// Splits LiveKit's msid `PA_x|TR_y` (or `PA_x|<stream>` with the track id `TR_y`).
    static func liveKitIDs(streamID: String?, trackID: String?) -> (participant: String?, track: String?) {
        var participant: String?
        var track: String?
        if let s = streamID, let bar = s.firstIndex(of: "|") {
            let left = String(s[..<bar]), right = String(s[s.index(after: bar)...])
            if left.hasPrefix("PA_") { participant = left }
            if right.hasPrefix("TR") { track = right }
        }
        if track == nil, let t = trackID, t.hasPrefix("TR_") { track = t }
        return (participant, track)
    }

    /// The tracks an offer sends us, for the sections the answer accepted.
    static func tracks(in offer: SessionDescription, decisions: [SectionDecision]) -> [RemoteTrack] {
        var out: [RemoteTrack] = []
        for d in decisions {
            guard case .audio(let pt, let clock, let stereo, let nack) = d.outcome else { continue }
            let m = offer.media[d.index]
            guard m.direction.sends else { continue }
            for s in m.ssrcs {
                let ids = liveKitIDs(streamID: s.streamID, trackID: s.trackID)
                out.append(RemoteTrack(
                    ssrc: s.ssrc, mid: m.mid, kind: m.kind, streamID: s.streamID, trackID: s.trackID,
                    participantSID: ids.participant, trackSID: ids.track, payloadType: pt, clockRate: clock, stereo: stereo, nack: nack))
            }
        }
        return out
    }
}

/// Overall state of a ``PeerConnection``.
public enum PeerConnectionState: String, Sendable, Equatable {
    case new, connecting, connected, failed, closed
}

/// A message received on a data channel. LiveKit's `_reliable`/`_lossy` carry serialized
/// `DataPacket`s; decoding them belongs to the protocol layer.
public struct DataChannelMessage: Sendable, Equatable {
    public var label: String
    public var channelID: UInt16
    public var data: [UInt8]
    public var isBinary: Bool
}

/// What a ``PeerConnection`` tells the control plane, in order.
public enum PeerConnectionEvent: Sendable, Equatable {
    /// A local candidate to trickle (LiveKit `TrickleRequest.candidateInit` = `candidate.json`).
    /// Candidates gathered before the answer/offer was created are inside that SDP instead.
    case localCandidate(ICECandidateInit)
    /// Local gathering finished.
    case localCandidatesComplete
    case iceStateChanged(ICEConnectionState)
    /// The selected candidate pair, described for logs ("ip:port type/transport <-> …").
    case selectedCandidatePair(String)
    case dtlsStateChanged(DTLSState)
    /// ICE and DTLS are up and SRTP keys are installed; media can flow.
    case connected(srtpProfile: SRTPProfile?)
    /// The connection failed for good; the error says why in one sentence.
    case failed(PeerConnectionError)
    /// Tracks added or removed by an applied remote offer.
    case tracksChanged(added: [RemoteTrack], removed: [RemoteTrack])
    /// Packets arrived for an SSRC no offer announced (reported once per SSRC).
    case unknownSSRC(UInt32, payloadType: UInt8)
    /// RTCP BYE for an SSRC.
    case remoteBye(UInt32)
    case dataChannelOpened(DataChannelInfo)
    case dataChannelClosed(DataChannelInfo)
    case dataChannelMessage(DataChannelMessage)
    /// Periodic statistics (``PeerConnectionConfiguration/statsIntervalMs``).
    case stats(PeerConnectionStats)
    case closed

    /// The event changes what ``PeerConnection/stats()`` says of the connection itself
    /// (its state, ICE state, selected pair or SRTP profile): a caller that decides on
    /// those looks again after it.
    public var changesConnectionState: Bool {
        switch self {
        case .iceStateChanged, .selectedCandidatePair, .dtlsStateChanged, .connected, .failed, .closed: true
        default: false
        }
    }
}

/// Why a ``PeerConnection`` call or the connection failed.
public struct PeerConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: Sendable, Equatable {
        case invalidSDP(SDPError)
        case invalidCandidate(ICECandidateError)
        case ice(ICEError)
        case dtls(DTLSError)
        case srtp(SRTPError)
        case sctp(SCTPError)
        case wrongState(String)
        case closed
    }
    let code: Code
    init(_ code: Code) { self.code = code }

    /// True when the DTLS peer's certificate did not match its SDP fingerprint.
    public var isFingerprintMismatch: Bool {
        if case .dtls(let e) = code { return e.isFingerprintMismatch }
        return false
    }

    public var isTimeout: Bool {
        switch code {
        case .ice(let e): return e.code == .timeout
        case .dtls(let e): return e.code == .timeout
        default: return false
        }
    }

    public var description: String {
        switch code {
        case .invalidSDP(let e): "Remote description refused: \(e)"
        case .invalidCandidate(let e): "Remote ICE candidate refused: \(e)"
        case .ice(let e): e.description
        case .dtls(let e): e.description
        case .srtp(let e): e.description
        case .sctp(let e): e.description
        case .wrongState(let what): "Peer connection call out of order: \(what)."
        case .closed: "Peer connection is closed."
        }
    }
}

/// Receive statistics of one track.
public struct TrackStats: Sendable, Equatable {
    public var ssrc: UInt32
    public var participantSID: String?
    public var trackSID: String?
    public var attached: Bool
    public var packetsReceived: UInt64
    /// Payload bytes.
    public var bytesReceived: UInt64
    /// Cumulative loss (RFC 3550; negative when duplicates outnumber losses).
    public var packetsLost: Int64
    public var jitterMs: Double
    /// Over the last RTCP interval.
    public var packetsPerSecond: Double
    /// Sequence numbers requested in NACKs (retries included).
    public var nackedPackets: UInt64
    /// Missing packets that later arrived (retransmitted or late).
    public var recoveredPackets: UInt64
    /// Packets dropped because the ring was full (or too long for its slots).
    public var ringDrops: UInt64
    public var senderReports: UInt64
}

extension TrackStats {
    /// The track's loss: packets received, still missing, and recovered by NACK or late.
    public var loss: PacketLoss {
        PacketLoss(received: Int(clamping: packetsReceived), lost: Int(clamping: packetsLost), recovered: Int(clamping: recoveredPackets))
    }
}

/// Transport-level counters of one ``PeerConnection``.
public struct TransportStats: Sendable, Equatable {
    public var datagramsReceived: UInt64 = 0
    public var bytesReceived: UInt64 = 0
    public var rtpPackets: UInt64 = 0
    public var rtcpPackets: UInt64 = 0
    public var dtlsDatagrams: UInt64 = 0
    /// Datagrams that were neither STUN, DTLS nor SRTP, or too large.
    public var unknownDatagrams: UInt64 = 0
    public var srtpAuthFailures: UInt64 = 0
    public var srtpReplays: UInt64 = 0
    public var srtpOtherErrors: UInt64 = 0
    /// SRTP before keys were installed.
    public var srtpBeforeKeys: UInt64 = 0
    public var malformedRTP: UInt64 = 0
    public var malformedRTCP: UInt64 = 0
    /// RTP for SSRCs no offer announced.
    public var unknownSSRCPackets: UInt64 = 0
    /// RTP for announced tracks with no ring attached.
    public var unattachedPackets: UInt64 = 0
    /// RTP packets with no payload (padding only): counted in the track statistics, not queued.
    public var paddingOnlyPackets: UInt64 = 0
    public var receiverReportsSent: UInt64 = 0
    public var senderReportsSent: UInt64 = 0
    /// Generic NACKs received for our published tracks.
    public var nacksReceived: UInt64 = 0
    /// RTP packets and bytes (after SRTP) sent on published tracks, retransmissions not included.
    public var rtpPacketsSent: UInt64 = 0
    public var rtpBytesSent: UInt64 = 0
    /// Packets sent again for NACKs, and NACKed packets no longer in the history.
    public var rtpRetransmitted: UInt64 = 0
    public var rtpRetransmissionMisses: UInt64 = 0
    /// Packets that could not be built, protected or handed to ICE.
    public var rtpSendFailures: UInt64 = 0
    public var nacksSent: UInt64 = 0
    /// Firings of the NACK timer, which runs only while some track has missing packets:
    /// zero on a loss-free connection.
    public var nackTimerTicks: UInt64 = 0
    public var rtcpSendFailures: UInt64 = 0
    public var dtlsDroppedDatagrams: UInt64 = 0
    public var sctpDroppedPackets: UInt64 = 0
    public var dataChannelDroppedMessages: UInt64 = 0
    public var eventsDropped: UInt64 = 0
}

/// A snapshot of a ``PeerConnection``'s statistics.
public struct PeerConnectionStats: Sendable, Equatable {
    public var state: PeerConnectionState
    public var iceState: ICEConnectionState
    public var selectedPair: String?
    public var srtpProfile: SRTPProfile?
    public var transport: TransportStats
    /// The streams received now.
    public var tracks: [TrackStats]
    /// The last figures of streams that ended on this connection (their senders left or
    /// unpublished), oldest first; `attached` is false.
    public var endedTracks: [TrackStats] = []
}

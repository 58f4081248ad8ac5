import BedrudProtocol

/// A track someone publishes, as the room state machine knows it. A value: the state
/// machine hands out copies in events; it never changes behind the receiver's back.
public struct MeetingTrack: Sendable, Equatable, Identifiable {
    /// `TR_…`; equals the msid track id in the subscriber SDP and `mid_to_track_id`.
    public var sid: String
    public var kind: LiveKit.TrackType
    public var source: LiveKit.TrackSource
    public var name: String
    /// Publisher-side mute; media may stop while muted.
    public var muted: Bool
    /// e.g. "audio/opus"; may be empty until the publisher's first packets.
    public var mimeType: String
    /// `stereo` or `TF_STEREO`: the subscriber offer carries `sprop-stereo=1`.
    public var isStereo: Bool
    /// True when the publisher sends no DTX (silence is still sent as packets).
    public var dtxDisabled: Bool
    public var encryption: LiveKit.EncryptionType
    /// The SFU paused forwarding (`stream_state_update`).
    public var isPaused: Bool
    /// False after the publisher denied our subscription.
    public var subscriptionAllowed: Bool

    public var id: String { sid }

    public init(
        sid: String, kind: LiveKit.TrackType = .audio, source: LiveKit.TrackSource = .unknown, name: String = "",
        muted: Bool = false, mimeType: String = "", isStereo: Bool = false, dtxDisabled: Bool = false,
        encryption: LiveKit.EncryptionType = .unencrypted, isPaused: Bool = false, subscriptionAllowed: Bool = true
    ) {
        self.sid = sid
        self.kind = kind
        self.source = source
        self.name = name
        self.muted = muted
        self.mimeType = mimeType
        self.isStereo = isStereo
        self.dtxDisabled = dtxDisabled
        self.encryption = encryption
        self.isPaused = isPaused
        self.subscriptionAllowed = subscriptionAllowed
    }

    /// The track as a `TrackInfo` describes it; SFU-side flags (paused, allowed) start
    /// at their defaults.
    public init(_ info: LiveKit.TrackInfo) {
        self.init(
            sid: info.sid, kind: info.type, source: info.source, name: info.name, muted: info.muted,
            mimeType: info.mimeType, isStereo: info.isStereo,
            dtxDisabled: info.disableDTX || info.audioFeatures.contains(.noDtx), encryption: info.encryption)
    }

    /// True for Opus audio (case-insensitive MIME, as the fact sheet advises).
    public var isOpus: Bool { mimeType.lowercased() == "audio/opus" }
}

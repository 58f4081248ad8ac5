// Whose a remote track is, readable from any thread: what the media side needs when it
// routes the tracks of an offer, without a hop to the RoomManager actor or a copy of
// the room.

/// The participant who publishes a remote track: identity and display name.
public struct TrackOwner: Sendable, Equatable {
    public var identity: String
    public var name: String

    public init(identity: String, name: String) {
        self.identity = identity
        self.name = name
    }
}

/// Who publishes which remote track, kept from the room's events. Pure.
///
/// ``RoomManager`` applies every event it emits, in the order ``RoomState`` emits them,
/// before the actions that follow (an offer among them) are carried out, so a track whose
/// participant update came before its offer has its owner here when the offer is applied.
/// LiveKit sends them in that order: a publisher's update goes out at once, not batched,
/// and only then are the others subscribed, which starts the offer (livekit
/// pkg/rtc/room.go:1079 then :1102; :2262 `shouldSend := isImmediate || pi.IsPublisher`,
/// at 788d4c3). An offer that comes first finds no owner, as the room's state had none
/// either: the track keeps its `PA_…` sid as its name. Each event costs O(1), a participant's arrival or departure
/// O(its tracks); the index holds only the remote participants present and their tracks,
/// so the room's own bounds (`maxParticipants`, `maxTracksPerParticipant`) bound it.
public struct TrackOwners: Sendable {
    /// Identity → session sid and display name of every remote participant present.
    private var present: [String: (sid: String, name: String)] = [:]
    /// Participant sid (`PA_…`) → identity, for the sessions present.
    private var identityBySid: [String: String] = [:]
    /// Track sid (`TR_…`) → identity of its publisher, for the tracks published now.
    private var identityByTrack: [String: String] = [:]

    public init() {}

    /// Participants, participant sessions (sids) and tracks held: what bounds the index.
    public var count: (participants: Int, sessions: Int, tracks: Int) { (present.count, identityBySid.count, identityByTrack.count) }

    /// The owner of a track of an offer: by the participant sid of its msid, else by its
    /// track sid; nil when neither names a participant present.
    public func owner(participantSid: String?, trackSid: String?) -> TrackOwner? {
        let identity = participantSid.flatMap { identityBySid[$0] } ?? trackSid.flatMap { identityByTrack[$0] }
        guard let identity, let p = present[identity] else { return nil }
        return TrackOwner(identity: identity, name: p.name)
    }

    /// Follows one room event (only remote participants and their tracks matter).
    public mutating func apply(_ event: RoomEvent) {
        switch event {
        case .participantJoined(let p) where !p.isLocal:
            arrive(p)
        case .participantRejoined(let p, let previousSid) where !p.isLocal:
            if identityBySid[previousSid] == p.identity { identityBySid[previousSid] = nil }
            arrive(p)
        case .participantUpdated(let p, _) where !p.isLocal:
            present[p.identity]?.name = p.name
        case .participantLeft(let p, _) where !p.isLocal:
            // Its tracks were unpublished just before; the list is dropped again in case.
            for t in p.tracks { unpublish(t.sid, of: p.identity) }
            if identityBySid[p.sid] == p.identity { identityBySid[p.sid] = nil }
            present[p.identity] = nil
        case .trackPublished(let t, let identity):
            identityByTrack[t.sid] = identity
        case .trackUnpublished(let t, let identity):
            unpublish(t.sid, of: identity)
        default:
            break
        }
    }

    private mutating func arrive(_ p: MeetingParticipant) {
        if let old = present[p.identity]?.sid, old != p.sid, identityBySid[old] == p.identity { identityBySid[old] = nil }
        present[p.identity] = (p.sid, p.name)
        identityBySid[p.sid] = p.identity
        // Its tracks follow as `trackPublished`; taking them now as well costs nothing.
        for t in p.tracks { identityByTrack[t.sid] = p.identity }
    }

    private mutating func unpublish(_ sid: String, of identity: String) {
        if identityByTrack[sid] == identity { identityByTrack[sid] = nil }
    }
}

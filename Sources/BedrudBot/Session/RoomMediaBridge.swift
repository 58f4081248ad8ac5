import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRTC

/// Decides what the media pipeline is told when something happens in the room: who left,
/// who is muted, and — around an outage of our own connection — whose file stops growing
/// and whose continues. Pure: `handle` takes a room event and returns the pipeline's
/// controls; the shell (``RoomRun``) sends them.
///
/// It is the one place in the bot layer that knows who is in the room now: ``RoomState``
/// decides, and its participant events say so, in order; the bridge follows them as they
/// are handled (a read of the room's actor would be ahead of the event in hand). The media
/// reads presence here, ``RoomRun`` passes the number of ``people`` on to the lifecycle
/// (``SessionLifecycle/Input/people(_:)``), and the summary and transcript take their names
/// from ``names`` and ``name(of:)``. Bots are in the room like anyone: a recorded bot gets
/// its outage gap like a person (only the lifecycle's alone timeout leaves them out, through
/// ``people``).
struct RoomMediaBridge: Sendable {
    /// Tells bots from people (``BotRecognition``).
    let bots: BotRecognition
    /// Identity → display name of everyone ever seen (the latest name).
    private(set) var names: [String: String] = [:]
    /// Identity → whether it is a bot, for everyone in the room now.
    private(set) var present: [String: Bool] = [:]

    init(bots: BotRecognition = BotRecognition()) { self.bots = bots }

    /// People (not bots) in the room now, sorted.
    var people: [String] { present.filter { !$0.value }.keys.sorted() }
    /// Everyone in the room now, bots included, sorted.
    var everyonePresent: [String] { present.keys.sorted() }
    /// The name last seen for `identity` ("" if never seen).
    func name(of identity: String) -> String { names[identity] ?? "" }

    /// What the pipeline must do after `event`, in order.
    mutating func handle(_ event: RoomEvent) -> [MediaControl] {
        switch event {
        case .participantJoined(let p), .participantRejoined(let p, _):
            names[p.identity] = p.name
            present[p.identity] = bots.isBot(p)
            return []
        case .participantUpdated(let p, _):
            names[p.identity] = p.name
            // Another bot marks itself just after joining: from now on it is not company.
            // An update never makes a bot a person again; a new session of it is judged afresh.
            if present[p.identity] == false, bots.isBot(p) { present[p.identity] = true }
            return []
        case .participantLeft(let p, _):
            present[p.identity] = nil
            return [.participantLeft(identity: p.identity)]
        case .trackMuted(let t, let who) where t.kind == .audio:
            return [.setMuted(identity: who, muted: true)]
        case .trackUnmuted(let t, let who) where t.kind == .audio:
            return [.setMuted(identity: who, muted: false)]
        case .reconnecting:
            return everyonePresent.map { .participantReconnecting(identity: $0) }
        case .reconnected:
            // Whoever is still listed after a resume or rejoin is here again (the absent left first).
            return everyonePresent.map { .participantPresent(identity: $0) }
        case .presenceReceived(.profileChanged(let identity, let name, _), let sender) where identity == sender:
            // The new name in later lines and the transcript; the recording keeps its file name.
            names[identity] = name
            return []
        default:
            return []
        }
    }

    /// Whose a subscribed track is — its `owner` as the room knows it (``TrackOwners``: by
    /// participant sid, else track sid); a track the room does not know yet keeps its
    /// `PA_…` or SSRC as the identity — and whether `--include` / `--exclude` records it. Pure.
    static func route(_ t: RemoteTrack, owner: TrackOwner?, filter: ParticipantFilter) -> (spec: MediaTrackSpec, recorded: Bool) {
        let sid = t.trackSID ?? "ssrc-\(t.ssrc)"
        let identity = owner?.identity ?? t.participantSID ?? "ssrc-\(t.ssrc)"
        let name = owner?.name ?? ""
        return (MediaTrackSpec(trackSid: sid, participantIdentity: identity, participantName: name), filter.records(identity: identity, name: name))
    }
}

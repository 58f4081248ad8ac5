import BedrudCore
import BedrudProtocol

/// Room events as lines of `events.jsonl` (the schema is docs/EVENTS.md).
enum TranscriptEvents {
    static func participant(_ p: MeetingParticipant) -> [String: Any] {
        ["identity": p.identity, "name": p.name, "sid": p.sid, "accesses": p.accesses]
    }

    static func track(_ t: MeetingTrack) -> [String: Any] {
        ["sid": t.sid, "kind": "\(t.kind)", "source": "\(t.source)", "muted": t.muted, "mime": t.mimeType]
    }

    static func write(_ event: RoomEvent, to w: TranscriptWriter, formatter: RoomEventFormatter) {
        switch event {
        case .roomJoined(let room, let local):
            w.write("joined", ["room": room.name, "room_sid": room.sid, "participant": participant(local)])
        case .connected: w.write("connected")
        case .reconnecting(let mode): w.write("reconnecting", ["mode": mode == .resume ? "resume" : "full"])
        case .reconnected(let outcome): w.write("reconnected", ["outcome": outcome == .resumed ? "resumed" : "rejoined"])
        case .disconnected(let reason): w.write("disconnected", ["reason": reason.description])
        case .roomUpdated: break
        case .roomMoved(let room): w.write("room_moved", ["room": room.name])
        case .participantJoined(let p): w.write("participant_joined", ["participant": participant(p), "tracks": p.tracks.map(track)])
        case .participantLeft(let p, let reason):
            let why: String
            switch reason {
            case .disconnected(let r): why = "\(r)"
            case .absentAfterRejoin: why = "left while the bot was disconnected"
            }
            w.write("participant_left", ["participant": participant(p), "reason": why])
        case .participantRejoined(let p, let previous): w.write("participant_rejoined", ["participant": participant(p), "previous_sid": previous])
        case .participantUpdated(let p, _): w.write("participant_updated", ["participant": participant(p)])
        case .trackPublished(let t, let who): w.write("track_published", ["participant": who, "track": track(t)])
        case .trackUnpublished(let t, let who): w.write("track_unpublished", ["participant": who, "track": track(t)])
        case .trackMuted(let t, let who): w.write("track_muted", ["participant": who, "track": track(t)])
        case .trackUnmuted(let t, let who): w.write("track_unmuted", ["participant": who, "track": track(t)])
        case .trackUpdated, .trackStreamStateChanged, .trackSubscriptionPermissionChanged: break
        case .trackSubscriptionFailed(let sid, let error): w.write("subscription_failed", ["track_sid": sid, "error": "\(error)"])
        case .speakersChanged(let active, let started, let stopped):
            w.write("speakers_changed", [
                "active": active.map { ["participant": $0.identity, "level": Double($0.level)] }, "started": started, "stopped": stopped,
            ])
        case .connectionQualityChanged(let who, let quality, let score):
            w.write("connection_quality", ["participant": who, "quality": "\(quality)", "score": Double(score)])
        case .dataReceived(let d):
            w.write("data", ["participant": d.senderIdentity, "topic": d.topic ?? NSNullString, "bytes": d.payload.count, "reliable": d.reliable])
        case .chatReceived(let c):
            let off = w.offsetNow()
            w.write("chat", offsetMs: off, [
                "participant": c.senderIdentity, "name": c.senderName, "message": c.text, "id": c.id, "sent_ms": c.timestampMs,
                "attachments": c.attachments.map { ["kind": $0.kind, "url": $0.url, "mime": $0.mime] },
            ])
            w.noteChat(offsetMs: off, name: c.senderName.isEmpty ? c.senderIdentity : c.senderName, text: c.text)
        case .systemMessage(let m, let sender):
            w.write("moderation", ["event": m.event.name, "actor": m.actor, "target": m.target, "sender": sender])
        case .transcriptionReceived(let t, let sender):
            w.write("transcription", ["participant": t.transcribedParticipantIdentity, "sender": sender,
                                      "segments": t.segments.map { ["text": $0.text, "final": $0.isFinal, "language": $0.language] }])
        case .dtmfReceived(let code, let digit, let sender): w.write("dtmf", ["participant": sender, "code": Int(code), "digit": digit])
        case .rpcRequestReceived(let r, let sender): w.write("rpc_request", ["participant": sender, "method": r.method])
        case .localTrackPublished, .localTrackUnpublished, .localTrackMutedByServer, .requestRefused: break
        }
    }

    static let NSNullString = ""
}

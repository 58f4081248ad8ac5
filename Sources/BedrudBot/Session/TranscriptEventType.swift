/// Every type of line in `events.jsonl` and `join --json` (docs/EVENTS.md): the one list
/// of them. The writer names its lines with it, `repair` reads them back with it, and
/// `EventSchemaTests` holds docs/events.schema.json to it in both directions.
public enum TranscriptEventType: String, CaseIterable, Sendable {
    case sessionStarted = "session_started"
    case joined
    case connected
    case reconnecting
    case reconnected
    case disconnected
    case roomMoved = "room_moved"
    case participantJoined = "participant_joined"
    case participantLeft = "participant_left"
    case participantRejoined = "participant_rejoined"
    case participantUpdated = "participant_updated"
    case trackPublished = "track_published"
    case trackUnpublished = "track_unpublished"
    case trackMuted = "track_muted"
    case trackUnmuted = "track_unmuted"
    case subscriptionFailed = "subscription_failed"
    case requestRefused = "request_refused"
    case speakersChanged = "speakers_changed"
    case connectionQuality = "connection_quality"
    case data
    case chat
    case chatDropped = "chat_dropped"
    case reaction
    case poll
    case pollVote = "poll_vote"
    case profileChanged = "profile_changed"
    case deafenState = "deafen_state"
    case moderation
    case transcription
    case dtmf
    case rpcRequest = "rpc_request"
    case fileStarted = "file_started"
    case fileFinished = "file_finished"
    case fileRotated = "file_rotated"
    case gap
    case speakingTurn = "speaking_turn"
    case warning
    case sessionEnded = "session_ended"
    case runEnded = "run_ended"
}

import BedrudCore
import BedrudMedia
import BedrudProtocol
import Dispatch
import FoundationEssentials
import Glibc

/// Room and media events as lines of `events.jsonl` and of `join --json` (the schema is
/// docs/EVENTS.md and docs/events.schema.json).
///
/// `participant` has one shape in every event: an object with at least `identity` and
/// `name` (the display name known when the line was written, "" if none); the
/// `participant_*` and `joined` events add `sid` and `accesses`. The room file's
/// `file_started` / `file_finished` have `participant: null`.
enum TranscriptEvents {
    static func participant(_ p: MeetingParticipant) -> [String: Any] {
        ["identity": p.identity, "name": p.name, "sid": p.sid, "accesses": p.accesses]
    }

    /// A participant named only by identity in the event, with the name known for it.
    static func participant(_ identity: String, name: String) -> [String: Any] {
        ["identity": identity, "name": name]
    }

    static func pollFields(_ p: BedrudChatPoll) -> [String: Any] {
        ["poll_id": p.id, "question": p.question, "options": p.options.map { ["id": $0.id, "text": $0.text] }]
    }

    static func track(_ t: MeetingTrack) -> [String: Any] {
        ["sid": t.sid, "kind": "\(t.kind)", "source": "\(t.source)", "muted": t.muted, "mime": t.mimeType]
    }

    /// Writes one room event. `formatter` has seen the event already (``RoomEventFormatter/text(_:)``),
    /// so it knows the names of everyone announced so far.
    static func write(_ event: RoomEvent, to w: TranscriptWriter, formatter: RoomEventFormatter) {
        let who = { (identity: String) in participant(identity, name: formatter.displayName(identity)) }
        switch event {
        case .roomJoined(let room, let local):
            w.write(.joined, ["room": room.name, "room_sid": room.sid, "participant": participant(local)])
        case .connected: w.write(.connected)
        case .reconnecting(let mode): w.write(.reconnecting, ["mode": mode == .resume ? "resume" : "full"])
        case .reconnected(let outcome): w.write(.reconnected, ["outcome": outcome == .resumed ? "resumed" : "rejoined"])
        case .disconnected(let reason): w.write(.disconnected, ["reason": reason.description])
        case .roomUpdated: break
        case .roomMoved(let room): w.write(.roomMoved, ["room": room.name])
        case .participantJoined(let p): w.write(.participantJoined, ["participant": participant(p), "tracks": p.tracks.map(track)])
        case .participantLeft(let p, let reason):
            let why: String
            switch reason {
            case .disconnected(let r): why = "\(r)"
            case .absentAfterRejoin: why = "left while the bot was disconnected"
            }
            w.write(.participantLeft, ["participant": participant(p), "reason": why])
        case .participantRejoined(let p, let previous): w.write(.participantRejoined, ["participant": participant(p), "previous_sid": previous])
        case .participantUpdated(let p, _): w.write(.participantUpdated, ["participant": participant(p)])
        case .trackPublished(let t, let id): w.write(.trackPublished, ["participant": who(id), "track": track(t)])
        case .trackUnpublished(let t, let id): w.write(.trackUnpublished, ["participant": who(id), "track": track(t)])
        case .trackMuted(let t, let id): w.write(.trackMuted, ["participant": who(id), "track": track(t)])
        case .trackUnmuted(let t, let id): w.write(.trackUnmuted, ["participant": who(id), "track": track(t)])
        case .trackUpdated, .trackStreamStateChanged, .trackSubscriptionPermissionChanged: break
        case .trackSubscriptionFailed(let sid, let error): w.write(.subscriptionFailed, ["track_sid": sid, "error": "\(error)"])
        case .requestRefused(let r):
            w.write(.requestRefused, ["request": r.kind.rawValue, "request_id": Int(r.requestID), "reason": "\(r.reason)", "message": r.message, "track_cid": r.trackCid ?? ""])
        case .speakersChanged(let active, let started, let stopped):
            w.write(.speakersChanged, [
                "active": active.map { ["participant": who($0.identity), "level": Double($0.level)] as [String: Any] }, "started": started, "stopped": stopped,
            ])
        case .connectionQualityChanged(let id, let quality, let score):
            w.write(.connectionQuality, ["participant": who(id), "quality": "\(quality)", "score": Double(score)])
        case .dataReceived(let d):
            w.write(.data, ["participant": who(d.senderIdentity), "topic": d.topic ?? "", "bytes": d.payload.count, "reliable": d.reliable])
        case .chatReceived(let c):
            // The name the sender put in the message, else the one the room announced.
            let name = c.senderName.isEmpty ? formatter.displayName(c.senderIdentity) : c.senderName
            var fields: [String: Any] = [
                "participant": participant(c.senderIdentity, name: name), "message": c.text, "id": c.id, "sent_ms": c.timestampMs,
                "attachments": c.attachments.enumerated().map { AttachmentStore.eventFields($1, chatID: c.id, index: $0, store: w.attachments) },
            ]
            if let poll = c.poll { fields["poll"] = pollFields(poll) }
            let off = w.write(.chat, fields)
            w.noteChat(offsetMs: off, name: name.isEmpty ? c.senderIdentity : name, text: c.text)
            if let poll = c.poll {
                var pollEvent = pollFields(poll)
                pollEvent["participant"] = participant(c.senderIdentity, name: name)
                pollEvent["message_id"] = c.id
                w.write(.poll, pollEvent)
                w.noteLine(offsetMs: off, text: pollNote(by: name.isEmpty ? c.senderIdentity : name, question: poll.question, options: poll.options.map(\.text)))
            }
        case .chatDropped(let d):
            w.write(.chatDropped, ["participant": who(d.sender), "id": d.id, "reason": d.reason.rawValue,
                                     "received_chunks": d.receivedChunks, "expected_chunks": d.expectedChunks])
        case .reactionReceived(let r, let sender):
            let off = w.write(.reaction, ["participant": who(sender), "message_id": r.messageId, "emoji": r.emoji, "voter_identity": r.voterIdentity])
            w.noteLine(offsetMs: off, text: reactionNote(by: formatter.name(sender), emoji: r.emoji))
        case .pollVoteReceived(let v, let sender):
            w.write(.pollVote, ["participant": who(sender), "message_id": v.messageId, "option_id": v.optionId,
                                  "option": formatter.pollOption(messageId: v.messageId, optionId: v.optionId) ?? "", "voter_identity": v.voterIdentity])
        case .presenceReceived(.profileChanged(let identity, let name, let avatar), let sender):
            w.write(.profileChanged, ["participant": participant(identity, name: name), "sender": sender, "avatar_url": avatar,
                                        "applied": identity == sender])
        case .presenceReceived(.deafenState(let identity, let deafened), let sender):
            w.write(.deafenState, ["participant": who(identity), "sender": sender, "deafened": deafened])
        case .systemMessage(let m, let sender):
            w.write(.moderation, ["event": m.event.name, "actor": m.actor, "target": m.target, "sender": sender,
                                   "message": m.message, "deleted_identity": m.deletedIdentity])
        case .transcriptionReceived(let t, let sender):
            w.write(.transcription, ["participant": who(t.transcribedParticipantIdentity), "sender": sender,
                                      "segments": t.segments.map { ["text": $0.text, "final": $0.isFinal, "language": $0.language] }])
        case .dtmfReceived(let code, let digit, let sender): w.write(.dtmf, ["participant": who(sender), "code": Int(code), "digit": digit])
        case .rpcRequestReceived(let r, let sender): w.write(.rpcRequest, ["participant": who(sender), "method": r.method])
        case .localTrackPublished, .localTrackUnpublished, .localTrackMutedByServer: break
        }
    }

    /// Writes one media event; `name` gives the display name for an identity. Media events
    /// are reported after they happened, so their lines carry `written_ms`.
    static func write(_ event: MediaEvent, to w: TranscriptWriter, name: @escaping (String) -> String) {
        let who = { (identity: String) -> Any in identity.isEmpty ? JSONNull() : participant(identity, name: name(identity)) }
        switch event {
        case .fileStarted(let identity, let output, let start):
            w.write(.fileStarted, offsetMs: start, ["participant": who(identity), "output": outputName(output)])
        case .fileFinished(let identity, let output, let start, let duration):
            w.write(.fileFinished, offsetMs: start + duration,
                    ["participant": who(identity), "output": outputName(output), "start_offset_ms": start, "duration_ms": duration])
        case .fileRotated(let identity, let output, let segment, let at, let cause):
            w.write(.fileRotated, offsetMs: at, ["participant": who(identity), "output": outputName(output), "segment": segment, "reason": cause.rawValue])
        case .gap(let identity, let trackSid, let start, let duration, let cause):
            w.write(.gap, offsetMs: start, ["participant": who(identity), "track_sid": trackSid, "duration_ms": duration, "cause": cause.rawValue])
        case .speakingTurn(let identity, let start, let end):
            let n = name(identity)
            w.write(.speakingTurn, offsetMs: start, ["participant": participant(identity, name: n), "start_ms": start, "end_ms": end])
            w.noteTurn(identity: identity, name: n.isEmpty ? identity : n, startMs: start, endMs: end)
        case .warning(let text):
            w.write(.warning, ["message": text])
        }
    }

    /// transcript.vtt's NOTE for a reaction (live, and rebuilt by `repair` from the `reaction` line).
    static func reactionNote(by name: String, emoji: String) -> String { "\(name) reacted \(emoji)" }

    /// transcript.vtt's NOTE for a poll, at its chat message's offset (live, and rebuilt by
    /// `repair` from the `chat` line's `poll`).
    static func pollNote(by name: String, question: String, options: [String]) -> String {
        "\(name) asks: \(question) (" + options.joined(separator: " / ") + ")"
    }

    static func outputName(_ o: RecordingOutput) -> String {
        switch o {
        case .room: "room"
        case .participant(let identity, let name): name.isEmpty ? identity : name
        }
    }
}

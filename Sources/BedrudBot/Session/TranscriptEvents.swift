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
    typealias Event = TranscriptEvent

    static func participant(_ p: MeetingParticipant) -> Event.Participant {
        Event.Participant(identity: BoundedText(p.identity), name: BoundedText(p.name), sid: BoundedText(p.sid),
                          accesses: p.accesses.map { BoundedText($0) })
    }

    /// A participant named only by identity in the event, with the name known for it.
    static func participant(_ identity: String, name: String) -> Event.Participant {
        Event.Participant(identity: BoundedText(identity), name: BoundedText(name))
    }

    static func poll(_ p: BedrudChatPoll) -> Event.Poll {
        Event.Poll(pollId: BoundedText(p.id), question: BoundedText(p.question), options: p.options.map { Event.PollOption(id: BoundedText($0.id), text: BoundedText($0.text)) })
    }

    static func track(_ t: MeetingTrack) -> Event.Track {
        Event.Track(sid: BoundedText(t.sid), kind: "\(t.kind)", source: "\(t.source)", muted: t.muted, mime: BoundedText(t.mimeType))
    }

    /// Writes one room event. `formatter` has seen the event already (``RoomEventFormatter/text(_:)``),
    /// so it knows the names of everyone announced so far.
    static func write(_ event: RoomEvent, to w: TranscriptWriter, formatter: RoomEventFormatter) {
        let who = { (identity: String) in participant(identity, name: formatter.displayName(identity)) }
        switch event {
        case .roomJoined(let room, let local):
            w.write(.joined(.init(room: BoundedText(room.name), roomSid: BoundedText(room.sid), participant: participant(local))))
        case .connected: w.write(.connected)
        case .reconnecting(let mode): w.write(.reconnecting(.init(mode: mode == .resume ? "resume" : "full")))
        case .reconnected(let outcome): w.write(.reconnected(.init(outcome: outcome == .resumed ? "resumed" : "rejoined")))
        case .disconnected(let reason): w.write(.disconnected(.init(reason: reason.description)))
        case .roomUpdated: break
        case .roomMoved(let room): w.write(.roomMoved(.init(room: BoundedText(room.name))))
        case .participantJoined(let p): w.write(.participantJoined(.init(participant: participant(p), tracks: p.tracks.map(track))))
        case .participantLeft(let p, let reason):
            let why: String
            switch reason {
            case .disconnected(let r): why = "\(r)"
            case .absentAfterRejoin: why = "left while the bot was disconnected"
            }
            w.write(.participantLeft(.init(participant: participant(p), reason: why)))
        case .participantRejoined(let p, let previous): w.write(.participantRejoined(.init(participant: participant(p), previousSid: BoundedText(previous))))
        case .participantUpdated(let p, _): w.write(.participantUpdated(.init(participant: participant(p))))
        case .trackPublished(let t, let id): w.write(.trackPublished(.init(participant: who(id), track: track(t))))
        case .trackUnpublished(let t, let id): w.write(.trackUnpublished(.init(participant: who(id), track: track(t))))
        case .trackMuted(let t, let id): w.write(.trackMuted(.init(participant: who(id), track: track(t))))
        case .trackUnmuted(let t, let id): w.write(.trackUnmuted(.init(participant: who(id), track: track(t))))
        case .trackUpdated, .trackStreamStateChanged, .trackSubscriptionPermissionChanged: break
        case .trackSubscriptionFailed(let sid, let error): w.write(.subscriptionFailed(.init(trackSid: BoundedText(sid), error: "\(error)")))
        case .requestRefused(let r):
            w.write(.requestRefused(.init(request: r.kind.rawValue, requestId: Int(r.requestID), reason: "\(r.reason)", message: BoundedMessage(r.message),
                                         trackCid: BoundedText(r.trackCid ?? ""))))
        case .speakersChanged(let active, let started, let stopped):
            w.write(.speakersChanged(.init(active: active.map { .init(participant: who($0.identity), level: Double($0.level)) },
                                       started: started.map { BoundedText($0) }, stopped: stopped.map { BoundedText($0) })))
        case .connectionQualityChanged(let id, let quality, let score):
            w.write(.connectionQuality(.init(participant: who(id), quality: "\(quality)", score: Double(score))))
        case .dataReceived(let d):
            w.write(.data(.init(participant: who(d.senderIdentity), topic: BoundedText(d.topic ?? ""), bytes: d.payload.count, reliable: d.reliable)))
        case .chatReceived(let c):
            // The name the sender put in the message, else the one the room announced.
            let name = c.senderName.isEmpty ? formatter.displayName(c.senderIdentity) : c.senderName
            let attachments = c.attachments.enumerated().map { AttachmentStore.eventFields($1, chatID: c.id, index: $0, store: w.attachments) }
            let off = w.write(.chat(.init(participant: participant(c.senderIdentity, name: name), message: BoundedMessage(c.text), id: BoundedText(c.id), sentMs: c.timestampMs,
                                          attachments: attachments, poll: c.poll.map(poll))))
            w.noteChat(offsetMs: off, name: name.isEmpty ? c.senderIdentity : name, text: c.text)
            if let p = c.poll {
                w.write(.poll(.init(participant: participant(c.senderIdentity, name: name), messageId: BoundedText(c.id), pollId: BoundedText(p.id),
                                    question: BoundedText(p.question),
                                    options: poll(p).options)))
                w.noteLine(offsetMs: off, text: pollNote(by: name.isEmpty ? c.senderIdentity : name, question: p.question, options: p.options.map(\.text)))
            }
        case .chatDropped(let d):
            w.write(.chatDropped(.init(participant: who(d.sender), id: BoundedText(d.id), reason: d.reason.rawValue,
                                       receivedChunks: d.receivedChunks, expectedChunks: d.expectedChunks)))
        case .reactionReceived(let r, let sender):
            let off = w.write(.reaction(.init(participant: who(sender), messageId: BoundedText(r.messageId), emoji: BoundedText(r.emoji),
                                                voterIdentity: BoundedText(r.voterIdentity))))
            w.noteLine(offsetMs: off, text: reactionNote(by: formatter.name(sender), emoji: r.emoji))
        case .pollVoteReceived(let v, let sender):
            w.write(.pollVote(.init(participant: who(sender), messageId: BoundedText(v.messageId), optionId: BoundedText(v.optionId),
                                    option: BoundedText(formatter.pollOption(messageId: v.messageId, optionId: v.optionId) ?? ""),
                                    voterIdentity: BoundedText(v.voterIdentity))))
        case .presenceReceived(.profileChanged(let identity, let name, let avatar), let sender):
            w.write(.profileChanged(.init(participant: participant(identity, name: name), sender: BoundedText(sender), avatarUrl: BoundedText(avatar), applied: identity == sender)))
        case .presenceReceived(.deafenState(let identity, let deafened), let sender):
            w.write(.deafenState(.init(participant: who(identity), sender: BoundedText(sender), deafened: deafened)))
        case .systemMessage(let m, let sender):
            w.write(.moderation(.init(event: BoundedText(m.event.name), actor: BoundedText(m.actor), target: BoundedText(m.target),
                                      sender: BoundedText(sender), message: BoundedMessage(m.message), deletedIdentity: BoundedText(m.deletedIdentity))))
        case .transcriptionReceived(let t, let sender):
            w.write(.transcription(.init(participant: who(t.transcribedParticipantIdentity), sender: BoundedText(sender),
                                         segments: t.segments.map { .init(text: BoundedText($0.text), final: $0.isFinal, language: BoundedText($0.language)) })))
        case .dtmfReceived(let code, let digit, let sender): w.write(.dtmf(.init(participant: who(sender), code: Int(code), digit: BoundedText(digit))))
        case .rpcRequestReceived(let r, let sender): w.write(.rpcRequest(.init(participant: who(sender), method: BoundedText(r.method))))
        case .localTrackPublished, .localTrackUnpublished, .localTrackMutedByServer: break
        }
    }

    /// Writes one media event; `name` gives the display name for an identity. Media events
    /// are reported after they happened, so their lines carry `written_ms`.
    static func write(_ event: MediaEvent, to w: TranscriptWriter, name: @escaping (String) -> String) {
        let who = { (identity: String) in Nullable(identity.isEmpty ? nil : participant(identity, name: name(identity))) }
        switch event {
        case .fileStarted(let identity, let output, let start):
            w.write(.fileStarted(.init(participant: who(identity), output: BoundedText(outputName(output)))), offsetMs: start)
        case .fileFinished(let identity, let output, let start, let duration):
            w.write(.fileFinished(.init(participant: who(identity), output: BoundedText(outputName(output)), startOffsetMs: start, durationMs: duration)), offsetMs: start + duration)
        case .fileRotated(let identity, let output, let segment, let at, let cause):
            w.write(.fileRotated(.init(participant: who(identity), output: BoundedText(outputName(output)), segment: segment, reason: cause.rawValue)), offsetMs: at)
        case .gap(let identity, let trackSid, let start, let duration, let cause):
            w.write(.gap(.init(participant: who(identity), trackSid: BoundedText(trackSid), durationMs: duration, cause: cause.rawValue)), offsetMs: start)
        case .speakingTurn(let identity, let start, let end):
            let n = name(identity)
            w.write(.speakingTurn(.init(participant: participant(identity, name: n), startMs: start, endMs: end)), offsetMs: start)
            w.noteTurn(identity: identity, name: n.isEmpty ? identity : n, startMs: start, endMs: end)
        case .warning(let text):
            w.write(.warning(.init(message: BoundedMessage(text))))
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

import BedrudProtocol
import FoundationEssentials

/// Reading `events.jsonl` back: the lines of a text, and who a line is about. Used by
/// ``SessionFolder/Contents`` (the report, `recordings`, `status`) and `repair`.
extension TranscriptLine {
    /// Every line of an `events.jsonl` text that decodes, in file order, and how many did
    /// not (the half line a crash leaves, a line that is not an object with a `type`). A
    /// line of a type this version does not know, or not of its type's shape, is kept with
    /// ``event`` nil and its keys in ``unreadFields``.
    static func read(_ text: String) -> (lines: [TranscriptLine], unreadable: Int) {
        let decoder = JSONDecoder()
        var lines: [TranscriptLine] = []
        var unreadable = 0
        for text in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let line = try? decoder.decode(TranscriptLine.self, from: Data(text.utf8)) { lines.append(line) } else { unreadable += 1 }
        }
        return (lines, unreadable)
    }

    /// The participant the line is about, if its type has one (nil for the room file's lines).
    var participant: TranscriptEvent.Participant? { event?.participant }

    /// The participant's identity.
    var identity: String? { participant?.identity.text }

    /// The participant's display name as the line gives it, else (transcripts before
    /// issue 11) the line's top-level `name`; nil when neither is a non-empty text.
    var displayName: String? {
        if let n = participant?.name, !n.isEmpty { return n.text }
        if let n = legacyName, !n.isEmpty { return n }
        return nil
    }
}

extension TranscriptEvent {
    /// The `participant` of the event: the one it is about (a track's owner, a chat's
    /// sender, the voter). Nil for events of the room or the bot's connection, and for the
    /// room file's lines.
    var participant: Participant? {
        switch self {
        case .sessionStarted, .connected, .reconnecting, .reconnected, .disconnected, .roomMoved, .subscriptionFailed,
             .requestRefused, .speakersChanged, .moderation, .warning, .sessionEnded, .runEnded:
            nil
        case .joined(let e): e.participant
        case .participantJoined(let e): e.participant
        case .participantLeft(let e): e.participant
        case .participantRejoined(let e): e.participant
        case .participantUpdated(let e): e.participant
        case .trackPublished(let e), .trackUnpublished(let e), .trackMuted(let e), .trackUnmuted(let e): e.participant
        case .connectionQuality(let e): e.participant
        case .data(let e): e.participant
        case .chat(let e): e.participant
        case .chatDropped(let e): e.participant
        case .reaction(let e): e.participant
        case .poll(let e): e.participant
        case .pollVote(let e): e.participant
        case .profileChanged(let e): e.participant
        case .deafenState(let e): e.participant
        case .transcription(let e): e.participant
        case .dtmf(let e): e.participant
        case .rpcRequest(let e): e.participant
        case .fileStarted(let e): e.participant.value
        case .fileFinished(let e): e.participant.value
        case .fileRotated(let e): e.participant.value
        case .gap(let e): e.participant.value
        case .speakingTurn(let e): e.participant
        }
    }
}

/// The chat as the report shows it, decided from the event log alone (pure): the messages
/// in order, each with its poll (the question, the options and who voted for each) and the
/// reactions on it; a reaction or vote whose message the recording does not have (sent
/// before the bot joined) is an entry of its own.
///
/// Votes and reactions as the web client keeps them: a poll's `votes` holds one option per
/// voter, so a voter's last vote is the one that counts, and a participant who sends the
/// same emoji on a message again takes it back (`reactToMessage` toggles). Who voted or
/// reacted is the packet's sender (`participant`), not the identity the packet claims.
struct ReportChat: Equatable, Sendable {
    /// A participant as the page names them: the display name, else the identity.
    struct Person: Equatable, Sendable {
        var identity: String
        var name: String
    }

    struct Option: Equatable, Sendable {
        var id: String
        var text: String
        var voters: [Person] = []
    }

    struct Poll: Equatable, Sendable {
        var question: String
        var options: [Option]
    }

    struct Reaction: Equatable, Sendable {
        var emoji: String
        var by: Person
    }

    struct Message: Equatable, Sendable {
        var id: String
        var offsetMs: Int64
        var from: Person
        var text: String
        var attachments: [TranscriptEvent.Attachment] = []
        var poll: Poll? = nil
        var reactions: [Reaction] = []
    }

    enum Entry: Equatable, Sendable {
        case message(Message)
        /// A reaction to a message not in the recording.
        case reaction(offsetMs: Int64, Reaction)
        /// A vote in a poll not in the recording, with the option's text (or its id when the
        /// poll was never seen).
        case vote(offsetMs: Int64, by: Person, option: String)

        var offsetMs: Int64 {
            switch self {
            case .message(let m): m.offsetMs
            case .reaction(let at, _), .vote(let at, _, _): at
            }
        }
    }

    /// In the order of their offsets (file order among equals).
    var entries: [Entry]

    /// - Parameter events: `events.jsonl` in file order.
    init(events: [TranscriptLine]) {
        let lines = events.enumerated().sorted { ($0.element.offsetMs, $0.offset) < ($1.element.offsetMs, $1.offset) }.map(\.element)
        var entries: [Entry] = []
        var byID: [String: Int] = [:]
        func person(_ line: TranscriptLine, _ p: TranscriptEvent.Participant) -> Person {
            Person(identity: p.identity.text, name: line.displayName ?? p.identity.text)
        }
        func add(_ m: Message) {
            if !m.id.isEmpty, byID[m.id] == nil { byID[m.id] = entries.count }
            entries.append(.message(m))
        }
        func options(_ o: [TranscriptEvent.PollOption]) -> [Option] { o.map { Option(id: $0.id.text, text: $0.text.text) } }
        for line in lines {
            guard let event = line.event else { continue }
            switch event {
            case .chat(let c):
                add(Message(id: c.id.text, offsetMs: line.offsetMs, from: person(line, c.participant), text: c.message.text, attachments: c.attachments,
                            poll: c.poll.map { Poll(question: $0.question.text, options: options($0.options)) }))
            case .poll(let p):
                // Also in its chat message's `poll`; a line of its own only counts when that message is missing.
                if let i = byID[p.messageId.text], case .message(let m) = entries[i], m.poll != nil { break }
                if let i = byID[p.messageId.text], case .message(var m) = entries[i] {
                    m.poll = Poll(question: p.question.text, options: options(p.options))
                    entries[i] = .message(m)
                } else {
                    add(Message(id: p.messageId.text, offsetMs: line.offsetMs, from: person(line, p.participant), text: "",
                                poll: Poll(question: p.question.text, options: options(p.options))))
                }
            case .pollVote(let v):
                let voter = person(line, v.participant)
                guard let i = byID[v.messageId.text], case .message(var m) = entries[i], var poll = m.poll,
                      let chosen = poll.options.firstIndex(where: { $0.id == v.optionId.text }) else {
                    entries.append(.vote(offsetMs: line.offsetMs, by: voter, option: v.option.isEmpty ? v.optionId.text : v.option.text))
                    break
                }
                for o in poll.options.indices { poll.options[o].voters.removeAll { $0.identity == voter.identity } }
                poll.options[chosen].voters.append(voter)
                m.poll = poll
                entries[i] = .message(m)
            case .reaction(let r):
                let reaction = Reaction(emoji: r.emoji.text, by: person(line, r.participant))
                guard let i = byID[r.messageId.text], case .message(var m) = entries[i] else {
                    entries.append(.reaction(offsetMs: line.offsetMs, reaction))
                    break
                }
                if let same = m.reactions.firstIndex(where: { $0.emoji == r.emoji.text && $0.by.identity == reaction.by.identity }) {
                    m.reactions.remove(at: same)
                } else {
                    m.reactions.append(reaction)
                }
                entries[i] = .message(m)
            case .sessionStarted, .joined, .connected, .reconnecting, .reconnected, .disconnected, .roomMoved, .participantJoined,
                 .participantLeft, .participantRejoined, .participantUpdated, .trackPublished, .trackUnpublished, .trackMuted,
                 .trackUnmuted, .subscriptionFailed, .requestRefused, .speakersChanged, .connectionQuality, .data, .chatDropped,
                 .profileChanged, .deafenState, .moderation, .transcription, .dtmf, .rpcRequest, .fileStarted, .fileFinished,
                 .fileRotated, .gap, .speakingTurn, .warning, .sessionEnded, .runEnded:
                break
            }
        }
        self.entries = entries
    }

    /// The message with this id, if the recording has it.
    func message(id: String) -> Message? {
        guard !id.isEmpty else { return nil }
        for case .message(let m) in entries where m.id == id { return m }
        return nil
    }
}

import BedrudMedia
import BedrudProtocol

/// What the report's timeline draws, decided from the event log alone (pure): one lane
/// per participant plus the room mix, each with its spans (presence, speaking turns, mute,
/// gaps by cause) and markers (chat, reactions, polls, moderation, …).
///
/// Every kind of event is decided in a `switch` without `default`: a span here, a marker
/// in ``marker(for:chat:)``, or nothing, so a new kind of event does not compile until the
/// report says what it shows of it. A line this version cannot read still appears in the
/// page's event list.
struct ReportTimeline: Equatable, Sendable {
    enum SpanKind: String, CaseIterable, Sendable {
        case presence, turn, mute
        case outage                          // the bot's own connection was down (room lane)
        case gapLoss = "gap-loss"
        case gapReconnect = "gap-reconnect"
        case gapNoPackets = "gap-nopackets"
        case gapWriteError = "gap-write-error"
        case gapOther = "gap-other"

        /// The legend's words.
        var label: String {
            switch self {
            case .presence: "in the room"
            case .turn: "speaking"
            case .mute: "muted"
            case .outage: "bot reconnecting"
            case .gapLoss: "gap: packet loss"
            case .gapReconnect: "gap: reconnect"
            case .gapNoPackets: "gap: no packets"
            case .gapWriteError: "gap: write error"
            case .gapOther: "gap: other cause"
            }
        }

        /// The span a `gap` event's cause is drawn as; nil for DTX (silence the sender chose
        /// not to send: not a gap) and mute (drawn from the mute events).
        static func gap(cause: String) -> SpanKind? {
            switch cause {
            case "dtx", "mute": nil
            case "loss": .gapLoss
            case "reconnect": .gapReconnect
            case "noPackets": .gapNoPackets
            case "write_error": .gapWriteError
            default: .gapOther
            }
        }
    }

    struct Span: Equatable, Sendable {
        var kind: SpanKind
        var startMs: Int64
        var endMs: Int64
    }

    /// A marker's shape and colour class (`mk-chat`, …).
    enum MarkerKind: String, CaseIterable, Sendable {
        case chat, reaction, moderation, poll, event

        /// The legend's words.
        var label: String { self == .event ? "other event" : rawValue }
    }

    struct Marker: Equatable, Sendable {
        var kind: MarkerKind
        var offsetMs: Int64
        /// What it says on hover and focus (remote text, escaped when rendered).
        var text: String
    }

    struct Lane: Equatable, Sendable {
        /// The participant's identity; "" for the room mix.
        var identity: String
        var name: String
        var file: String?
        var spans: [Span] = []
        var markers: [Marker] = []
        var isRoom: Bool { identity.isEmpty }
    }

    var durationMs: Int64
    /// Room mix first, then participants in order of first appearance.
    var lanes: [Lane]
    /// The chat as the page's chat section shows it (what the markers refer to).
    var chat: ReportChat

    // MARK: - Markers

    /// The marker an event puts on the timeline, with its text, or nil for an event drawn
    /// as a span or not drawn. `chat` gives what a reaction or vote refers to.
    static func marker(for event: TranscriptEvent, chat: ReportChat) -> (kind: MarkerKind, text: String)? {
        switch event {
        case .chat(let e):
            let n = e.attachments.count
            return (.chat, e.message.text + (n > 0 ? " [\(n) attachment\(n == 1 ? "" : "s")]" : ""))
        case .reaction(let e):
            guard let m = chat.message(id: e.messageId.text) else { return (.reaction, e.emoji.text) }
            return (.reaction, "\(e.emoji) to \(m.from.name): " + (m.poll.map { "poll \($0.question)" } ?? excerpt(m.text)))
        case .poll(let e):
            return (.poll, "poll: \(e.question) (" + e.options.map(\.text.text).joined(separator: " / ") + ")")
        case .pollVote(let e):
            let poll = chat.message(id: e.messageId.text)?.poll
            let option = !e.option.isEmpty ? e.option.text : poll?.options.first { $0.id == e.optionId.text }?.text ?? e.optionId.text
            return (.poll, "vote: \(option)" + (poll.map { " (poll \($0.question))" } ?? ""))
        case .moderation(let e):
            return (.moderation, "\(e.event) by \(e.actor) → \(e.target)")
        case .transcription(let e):
            return (.event, e.segments.map(\.text.text).filter { !$0.isEmpty }.joined(separator: " "))
        case .participantUpdated:
            return (.event, "details changed")
        case .profileChanged:
            return (.event, "profile changed")
        case .deafenState(let e):
            return (.moderation, e.deafened ? "deafened" : "undeafened")
        case .dtmf(let e):
            return (.event, "DTMF " + e.digit.text)
        case .sessionStarted, .joined, .connected, .reconnecting, .reconnected, .disconnected, .roomMoved, .participantJoined,
             .participantLeft, .participantRejoined, .trackPublished, .trackUnpublished, .trackMuted, .trackUnmuted,
             .subscriptionFailed, .requestRefused, .speakersChanged, .connectionQuality, .data, .chatDropped, .rpcRequest,
             .fileStarted, .fileFinished, .fileRotated, .gap, .speakingTurn, .warning, .sessionEnded, .runEnded:
            return nil
        }
    }

    /// A message's text as a marker quotes it: its first 60 characters.
    static func excerpt(_ text: String) -> String {
        text.count > 60 ? "“" + text.prefix(59) + "…”" : "“" + text + "”"
    }

    // MARK: - Building

    init(durationMs: Int64, lanes: [Lane]) {
        self.durationMs = durationMs
        self.lanes = lanes
        chat = ReportChat(events: [])
    }

    /// - Parameters:
    ///   - events: `events.jsonl` in file order (sorted here by offset, stably).
    ///   - files: the session's audio files (a lane's `file`).
    ///   - durationMs: the session's length (summary), or nil to take the last event's offset.
    init(events unsorted: [TranscriptLine], files: [ReportFile], durationMs known: Int64?) {
        let events = unsorted.enumerated().sorted { ($0.element.offsetMs, $0.offset) < ($1.element.offsetMs, $1.offset) }.map(\.element)
        var end = known ?? 0
        for e in events {
            end = max(end, e.offsetMs)
            if case .speakingTurn(let t) = e.event { end = max(end, t.endMs) }
            if case .gap(let g) = e.event { end = max(end, e.offsetMs + g.durationMs) }
        }
        if let known { end = max(known, 0) }
        durationMs = end
        let chat = ReportChat(events: events)
        self.chat = chat

        var room = Lane(identity: "", name: "room mix", file: files.first { $0.identity == nil && $0.name.hasPrefix("room") }?.name)
        var order: [String] = []
        var lanes: [String: Lane] = [:]
        var joinedAt: [String: Int64] = [:]
        var mutedAt: [String: Int64] = [:]
        var outageAt: Int64?
        func lane(_ id: String, _ name: String?) {
            if lanes[id] == nil {
                order.append(id)
                lanes[id] = Lane(identity: id, name: name ?? id, file: files.first { $0.identity == id }?.name)
            } else if let name { lanes[id]?.name = name }
        }
        func span(_ id: String, _ kind: SpanKind, _ s: Int64, _ e: Int64) {
            guard e > s else { return }
            lanes[id]?.spans.append(Span(kind: kind, startMs: max(0, s), endMs: min(end, e)))
        }
        /// An audio track's mute starts (`track_published` muted, `track_muted`); video is not drawn.
        func muted(_ id: String, _ name: String?, _ track: TranscriptEvent.Track, at offset: Int64) {
            guard track.kind != "video" else { return }
            lane(id, name)
            if mutedAt[id] == nil { mutedAt[id] = offset }
        }
        // The bot records; it is not a participant of its own recording.
        let botIdentity = events.lazy.compactMap { if case .sessionStarted(let s) = $0.event { s.botIdentity.text } else { nil } }.first
        let bot = botIdentity.flatMap { $0.isEmpty ? nil : $0 }
            ?? events.lazy.compactMap { if case .joined(let j) = $0.event { j.participant.identity.text } else { nil } }.first
        for e in events {
            // A line this version cannot read is only listed (ReportPage.eventLog).
            guard let event = e.event else { continue }
            let id = e.identity
            if let bot, id == bot { continue }
            let name = e.displayName
            switch event {
            case .participantJoined(let p):
                lane(p.participant.identity.text, name)
                if joinedAt[p.participant.identity.text] == nil { joinedAt[p.participant.identity.text] = e.offsetMs }
            case .participantRejoined(let p):
                lane(p.participant.identity.text, name)
                if joinedAt[p.participant.identity.text] == nil { joinedAt[p.participant.identity.text] = e.offsetMs }
            case .participantLeft(let p):
                let id = p.participant.identity.text
                lane(id, name)
                if let s = joinedAt.removeValue(forKey: id) { span(id, .presence, s, e.offsetMs) }
                if let s = mutedAt.removeValue(forKey: id) { span(id, .mute, s, e.offsetMs) }
            case .trackMuted(let t):
                muted(t.participant.identity.text, name, t.track, at: e.offsetMs)
            case .trackPublished(let t):
                // A track published muted starts a mute span.
                if t.track.muted { muted(t.participant.identity.text, name, t.track, at: e.offsetMs) }
            case .trackUnmuted(let t):
                guard t.track.kind != "video" else { break }
                if let s = mutedAt.removeValue(forKey: t.participant.identity.text) { span(t.participant.identity.text, .mute, s, e.offsetMs) }
            case .speakingTurn(let t):
                lane(t.participant.identity.text, name)
                span(t.participant.identity.text, .turn, t.startMs, t.endMs)
            case .gap(let g):
                guard let kind = SpanKind.gap(cause: g.cause) else { break }
                let s = Span(kind: kind, startMs: max(0, e.offsetMs), endMs: min(end, e.offsetMs + g.durationMs))
                guard s.endMs > s.startMs else { break }
                if let id = g.participant.value?.identity.text, !id.isEmpty { lane(id, name); lanes[id]?.spans.append(s) } else { room.spans.append(s) }
            case .reconnecting:
                if outageAt == nil { outageAt = e.offsetMs }
            case .reconnected, .disconnected, .sessionEnded:
                if let s = outageAt { room.spans.append(Span(kind: .outage, startMs: s, endMs: e.offsetMs)); outageAt = nil }
            case .chat, .reaction, .poll, .pollVote, .moderation, .transcription, .participantUpdated, .profileChanged, .deafenState,
                 .dtmf, .sessionStarted, .joined, .connected, .roomMoved, .trackUnpublished, .subscriptionFailed, .requestRefused,
                 .speakersChanged, .connectionQuality, .data, .chatDropped, .rpcRequest, .fileStarted, .fileFinished, .fileRotated,
                 .warning, .runEnded:
                guard let m = Self.marker(for: event, chat: chat) else { break }
                let marker = Marker(kind: m.kind, offsetMs: e.offsetMs, text: m.text)
                // A chat, reaction or vote sits on its sender's lane; moderation on its target's, else the room's.
                var who = id
                if case .moderation(let mod) = event { who = mod.target.text }
                if let who, !who.isEmpty { lane(who, name); lanes[who]?.markers.append(marker) } else { room.markers.append(marker) }
            }
        }
        for (id, s) in joinedAt { span(id, .presence, s, end) }
        for (id, s) in mutedAt { span(id, .mute, s, end) }
        if let s = outageAt, end > s { room.spans.append(Span(kind: .outage, startMs: s, endMs: end)) }
        // Participants with a file but no events (a transcript cut short) still get a lane.
        for f in files { if let id = f.identity { lane(id, nil) } }
        let kindOrder = Dictionary(uniqueKeysWithValues: SpanKind.allCases.enumerated().map { ($1, $0) })
        self.lanes = [room] + order.compactMap { lanes[$0] }.map { l in
            var l = l
            l.spans.sort { (kindOrder[$0.kind] ?? 0, $0.startMs) < (kindOrder[$1.kind] ?? 0, $1.startMs) }
            return l
        }
    }

    /// Spans of one kind in a lane, for tests and the page's figures.
    func spans(_ kind: SpanKind, of identity: String) -> [Span] {
        lanes.first { $0.identity == identity }?.spans.filter { $0.kind == kind } ?? []
    }
}

import BedrudMedia
import BedrudProtocol

/// What the report's timeline draws, decided from the event log alone (pure): one lane
/// per participant plus the room mix, each with its spans (presence, speaking turns, mute,
/// gaps by cause) and markers (chat, reactions, moderation, …).
///
/// A new event kind is one entry in ``markerKinds`` (a marker with its text) or one case
/// in ``ReportTimeline/init(events:files:durationMs:)`` (a span); a kind the page does not
/// know still appears in the page's event list.
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

    struct Marker: Equatable, Sendable {
        /// The marker's shape and colour class: `chat`, `reaction`, `moderation`, `poll`, `event`.
        var kind: String
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

    // MARK: - Markers

    /// The marker of an event type: its kind and its text. One line per kind of event.
    static let markerKinds: [String: (kind: String, text: @Sendable (ReportEvent) -> String)] = [
        "chat": ("chat", { e in
            let n = e.fields["attachments"]?.array?.count ?? 0
            return (e.string("message") ?? "") + (n > 0 ? " [\(n) attachment\(n == 1 ? "" : "s")]" : "")
        }),
        "reaction": ("reaction", { e in e.string("emoji") ?? e.string("reaction") ?? e.string("value") ?? "reaction" }),
        "moderation": ("moderation", { e in
            [e.string("event"), e.string("actor").map { "by \($0)" }, e.string("target").map { "→ \($0)" }].compactMap { $0 }.joined(separator: " ")
        }),
        "poll": ("poll", { e in "poll: " + (e.string("question") ?? e.string("title") ?? "") }),
        "poll_vote": ("poll", { e in "vote" + (e.string("option").map { ": \($0)" } ?? "") }),
        "transcription": ("event", { e in
            (e.fields["segments"]?.array ?? []).compactMap { $0.object?["text"]?.string }.joined(separator: " ")
        }),
        "participant_updated": ("event", { _ in "details changed" }),
        "profile_changed": ("event", { _ in "profile changed" }),
        "deafen_state": ("moderation", { e in (e.fields["deafened"]?.bool ?? false) ? "deafened" : "undeafened" }),
        "dtmf": ("event", { e in "DTMF " + (e.string("digit") ?? "") }),
    ]

    // MARK: - Building

    init(durationMs: Int64, lanes: [Lane]) {
        self.durationMs = durationMs
        self.lanes = lanes
    }

    /// - Parameters:
    ///   - events: `events.jsonl` in file order (sorted here by offset, stably).
    ///   - files: the session's audio files (a lane's `file`).
    ///   - durationMs: the session's length (summary), or nil to take the last event's offset.
    init(events unsorted: [ReportEvent], files: [ReportFile], durationMs known: Int64?) {
        let events = unsorted.enumerated().sorted { ($0.element.offsetMs, $0.offset) < ($1.element.offsetMs, $1.offset) }.map(\.element)
        var end = known ?? 0
        for e in events {
            end = max(end, e.offsetMs, e.int64("end_ms") ?? 0, e.offsetMs + (e.type == "gap" ? e.int64("duration_ms") ?? 0 : 0))
            if known == nil, e.type == "file_finished" { end = max(end, e.offsetMs) }
        }
        if let known { end = max(known, 0) }
        durationMs = end

        var room = Lane(identity: "", name: "room mix", file: files.first { $0.identity == nil && $0.name.hasPrefix("room") }?.name)
        var order: [String] = []
        var lanes: [String: Lane] = [:]
        var joinedAt: [String: Int64] = [:]
        var mutedAt: [String: Int64] = [:]
        var outageAt: Int64?
        func lane(_ id: String, _ name: String?) -> String {
            if lanes[id] == nil {
                order.append(id)
                lanes[id] = Lane(identity: id, name: name ?? id, file: files.first { $0.identity == id }?.name)
            } else if let name { lanes[id]?.name = name }
            return id
        }
        func span(_ id: String, _ kind: SpanKind, _ s: Int64, _ e: Int64) {
            guard e > s else { return }
            lanes[id]?.spans.append(Span(kind: kind, startMs: max(0, s), endMs: min(end, e)))
        }
        // The bot records; it is not a participant of its own recording.
        let bot = events.first { $0.type == "session_started" }?.string("bot_identity")
            ?? events.first { $0.type == "joined" }?.identity
        for e in events {
            let id = e.identity
            if let bot, id == bot { continue }
            switch e.type {
            case "participant_joined", "participant_rejoined":
                guard let id else { break }
                _ = lane(id, e.name)
                if joinedAt[id] == nil { joinedAt[id] = e.offsetMs }
            case "participant_left":
                guard let id else { break }
                _ = lane(id, e.name)
                if let s = joinedAt.removeValue(forKey: id) { span(id, .presence, s, e.offsetMs) }
                if let s = mutedAt.removeValue(forKey: id) { span(id, .mute, s, e.offsetMs) }
            case "track_muted":
                guard let id, e.fields["track"]?.object?["kind"]?.string != "video" else { break }
                _ = lane(id, e.name)
                if mutedAt[id] == nil { mutedAt[id] = e.offsetMs }
            case "track_unmuted":
                guard let id, e.fields["track"]?.object?["kind"]?.string != "video" else { break }
                if let s = mutedAt.removeValue(forKey: id) { span(id, .mute, s, e.offsetMs) }
            case "track_published":
                // A track published muted starts a mute span.
                guard let id, let t = e.fields["track"]?.object, t["kind"]?.string != "video", t["muted"]?.bool == true else { break }
                _ = lane(id, e.name)
                if mutedAt[id] == nil { mutedAt[id] = e.offsetMs }
            case "speaking_turn":
                guard let id, let s = e.int64("start_ms"), let t = e.int64("end_ms") else { break }
                _ = lane(id, e.name)
                span(id, .turn, s, t)
            case "gap":
                guard let kind = SpanKind.gap(cause: e.string("cause") ?? ""), let d = e.int64("duration_ms") else { break }
                let g = Span(kind: kind, startMs: max(0, e.offsetMs), endMs: min(end, e.offsetMs + d))
                guard g.endMs > g.startMs else { break }
                if let id, !id.isEmpty { _ = lane(id, e.name); lanes[id]?.spans.append(g) } else { room.spans.append(g) }
            case "reconnecting":
                if outageAt == nil { outageAt = e.offsetMs }
            case "reconnected", "disconnected", "session_ended":
                if let s = outageAt { room.spans.append(Span(kind: .outage, startMs: s, endMs: e.offsetMs)); outageAt = nil }
            default:
                guard let m = Self.markerKinds[e.type] else { break }
                let marker = Marker(kind: m.kind, offsetMs: e.offsetMs, text: m.text(e))
                // A chat or reaction sits on its sender's lane; moderation on its target's, else the room's.
                let who = e.type == "moderation" ? e.string("target") : id
                if let who, !who.isEmpty { _ = lane(who, e.name); lanes[who]?.markers.append(marker) } else { room.markers.append(marker) }
            }
        }
        for (id, s) in joinedAt { span(id, .presence, s, end) }
        for (id, s) in mutedAt { span(id, .mute, s, end) }
        if let s = outageAt, end > s { room.spans.append(Span(kind: .outage, startMs: s, endMs: end)) }
        // Participants with a file but no events (a transcript cut short) still get a lane.
        for f in files { if let id = f.identity { _ = lane(id, nil) } }
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

import BedrudProtocol
import FoundationEssentials

/// The page's sections below the timeline: chat, participants, network, every event.
extension ReportPage {
    // MARK: - Chat

    static func chatSection(_ h: inout String, _ input: ReportInput, _ chat: ReportChat) {
        h += "<section aria-labelledby=\"chat-title\">\n<h2 id=\"chat-title\">Chat</h2>\n"
        guard !chat.entries.isEmpty else {
            h += "<p>No chat messages were received while the bot was in the room.</p>\n</section>\n"
            return
        }
        h += "<ol class=\"chat\">\n"
        for entry in chat.entries {
            h += "<li data-offset=\"\(entry.offsetMs)\"><span class=\"when\">+\(ReportFormat.clock(ms: entry.offsetMs))</span> "
            switch entry {
            case .message(let c):
                h += "<strong>\(HTMLText.remote(c.from.name))</strong> "
                // A poll's message has no text of its own: the poll is what it says.
                if c.poll == nil || !c.text.isEmpty { h += "<span class=\"msg\">\(HTMLText.remote(c.text))</span>" }
                if let poll = c.poll { pollHTML(&h, poll) }
                if !c.attachments.isEmpty {
                    h += "<ul class=\"attachments\">"
                    for a in c.attachments { h += "<li>\(attachment(a, existing: input.existingPaths))</li>" }
                    h += "</ul>"
                }
                if !c.reactions.isEmpty { reactionsHTML(&h, c.reactions) }
            case .reaction(_, let r):
                h += "<strong>\(HTMLText.remote(r.by.name))</strong> <span class=\"msg\">reacted \(HTMLText.remote(r.emoji)) to a message not in this recording</span>"
            case .vote(_, let by, let option):
                h += "<strong>\(HTMLText.remote(by.name))</strong> <span class=\"msg\">voted \(HTMLText.remote(option)) in a poll not in this recording</span>"
            }
            h += "</li>\n"
        }
        h += "</ol>\n</section>\n"
    }

    /// A poll: its question, then each option with its votes and who cast them.
    static func pollHTML(_ h: inout String, _ poll: ReportChat.Poll) {
        h += "<div class=\"poll\">Poll: \(HTMLText.remote(poll.question))<ul class=\"poll-options\">"
        for o in poll.options {
            let votes = o.voters.isEmpty ? "no votes"
                : "\(o.voters.count) vote\(o.voters.count == 1 ? "" : "s") (" + o.voters.map { HTMLText.remote($0.name) }.joined(separator: ", ") + ")"
            h += "<li>\(HTMLText.remote(o.text)): \(votes)</li>"
        }
        h += "</ul></div>"
    }

    /// The reactions on a message, one item per emoji with who reacted with it.
    static func reactionsHTML(_ h: inout String, _ reactions: [ReportChat.Reaction]) {
        var emojis: [String] = []
        var by: [String: [String]] = [:]
        for r in reactions {
            if by[r.emoji] == nil { emojis.append(r.emoji) }
            by[r.emoji, default: []].append(r.by.name)
        }
        h += "<ul class=\"reactions\" aria-label=\"Reactions\">"
        for e in emojis { h += "<li>\(HTMLText.remote(e)) " + (by[e] ?? []).map(HTMLText.remote).joined(separator: ", ") + "</li>" }
        h += "</ul>"
    }

    /// An attachment: shown from the session folder when it was saved there (an image as an
    /// image), otherwise its URL as text. A remote URL is never loaded by the page.
    static func attachment(_ a: TranscriptEvent.Attachment, existing: Set<String>) -> String {
        let mime = a.mime.text
        let kind = a.kind.text
        let candidates = [a.path, a.url].compactMap { $0?.text }
        let local = candidates.first { existing.contains($0) }
        let label = HTMLText.remote(a.name?.text ?? local ?? a.url?.text ?? "attachment")
        guard let local, let url = HTMLText.relativeURL(local) else {
            return "attachment (not saved): \(label)" + (mime.isEmpty ? "" : " <span class=\"mime\">\(HTMLText.escape(mime))</span>")
        }
        if mime.hasPrefix("image/") || kind == "image" {
            return "<a href=\"\(url)\"><img src=\"\(url)\" alt=\"image attachment \(HTMLText.escape(local))\"></a>"
        }
        return "<a href=\"\(url)\">\(label)</a>"
    }

    // MARK: - Participants

    static func participantsSection(_ h: inout String, _ input: ReportInput, _ t: ReportTimeline) {
        h += "<section aria-labelledby=\"people-title\">\n<h2 id=\"people-title\">Participants</h2>\n"
        h += "<table>\n<thead><tr><th scope=\"col\">Name</th><th scope=\"col\">Identity</th><th scope=\"col\">In the room</th><th scope=\"col\">Speaking</th>"
        h += "<th scope=\"col\">Turns</th><th scope=\"col\">Packets</th><th scope=\"col\">Lost</th><th scope=\"col\">Late</th><th scope=\"col\">FEC</th><th scope=\"col\">Gaps</th></tr></thead>\n<tbody>\n"
        for lane in t.lanes where !lane.isRoom {
            let p = input.summary?.participants.first { $0.identity == lane.identity }
            let present = lane.spans.filter { $0.kind == .presence }.map { "+\(ReportFormat.clock(ms: $0.startMs))–+\(ReportFormat.clock(ms: $0.endMs))" }
            let turns = lane.spans.filter { $0.kind == .turn }
            let speaking = p?.speakingMs ?? turns.reduce(0) { $0 + $1.endMs - $1.startMs }
            let c = { (n: Nullable<Int>?) in n?.value.map { String($0) } ?? "–" }
            let gaps = (p?.gapsMs ?? [:]).filter { $0.value > 0 && $0.key != "dtx" }.sorted { $0.key < $1.key }.map { "\(HTMLText.escape($0.key)) \(ReportFormat.duration(ms: $0.value))" }
            h += "<tr><th scope=\"row\">\(HTMLText.remote(lane.name))</th><td>\(HTMLText.remote(lane.identity))</td><td>\(present.joined(separator: ", "))</td>"
            h += "<td>\(ReportFormat.duration(ms: speaking))</td><td>\(turns.count)</td><td>\(c(p?.packets))</td><td>\(c(p?.lost))</td><td>\(c(p?.late))</td>"
            h += "<td>\(c(p?.fecRecovered))</td><td>\(gaps.isEmpty ? "none" : gaps.joined(separator: ", "))</td></tr>\n"
        }
        h += "</tbody>\n</table>\n</section>\n"
    }

    // MARK: - Network

    static func networkSection(_ h: inout String, _ input: ReportInput) {
        let s = input.summary
        let network = s?.network.value
        let outages = input.events.filter { $0.event?.type == .reconnecting }.count
        h += "<section aria-labelledby=\"net-title\">\n<h2 id=\"net-title\">Network</h2>\n<dl class=\"facts\">\n"
        h += "<div><dt>Reconnects</dt><dd>\(s?.reconnects ?? outages)</dd></div>\n"
        if let p = network?.selectedPair.value { h += "<div><dt>Candidate pair</dt><dd>\(HTMLText.remote(p))</dd></div>\n" }
        if let p = network?.srtpProfile.value { h += "<div><dt>SRTP profile</dt><dd>\(HTMLText.remote(p))</dd></div>\n" }
        h += "</dl>\n"
        guard let tracks = network?.tracks, !tracks.isEmpty else {
            h += "<p>No transport figures (no media connection, or a repaired session).</p>\n</section>\n"
            return
        }
        h += "<table>\n<thead><tr><th scope=\"col\">Participant</th><th scope=\"col\">SSRC</th><th scope=\"col\">Packets</th><th scope=\"col\">Lost</th>"
        h += "<th scope=\"col\">Jitter</th><th scope=\"col\">NACKed</th><th scope=\"col\">Recovered</th></tr></thead>\n<tbody>\n"
        for t in tracks {
            let name = s?.participants.first { $0.identity == t.participant.value }.map { $0.name.isEmpty ? $0.identity : $0.name } ?? t.participant.value ?? "–"
            h += "<tr><th scope=\"row\">\(HTMLText.remote(name))</th><td>\(t.ssrc)</td><td>\(t.packets)</td><td>\(t.lost)</td>"
            h += "<td>\(num(t.jitterMs)) ms</td><td>\(t.nacked)</td><td>\(t.recovered)</td></tr>\n"
        }
        h += "</tbody>\n</table>\n</section>\n"
    }

    // MARK: - Every event

    /// Frequent, low-value lines counted rather than listed.
    static let countedOnly: Set<TranscriptEventType> = [.speakersChanged, .connectionQuality, .data]

    static func isCountedOnly(_ line: TranscriptLine) -> Bool { line.event.map { countedOnly.contains($0.type) } ?? false }

    static func eventLog(_ h: inout String, _ input: ReportInput) {
        let sorted = input.events.enumerated().sorted { ($0.element.offsetMs, $0.offset) < ($1.element.offsetMs, $1.offset) }.map(\.element)
        let listed = sorted.filter { !isCountedOnly($0) }
        var counted: [String: Int] = [:]
        for e in sorted where isCountedOnly(e) { counted[e.type, default: 0] += 1 }
        h += "<section aria-labelledby=\"events-title\">\n<h2 id=\"events-title\">Events</h2>\n<details>\n"
        h += "<summary>All \(listed.count) events"
        if !counted.isEmpty { h += " (not listed: " + counted.sorted { $0.key < $1.key }.map { "\($0.value) \(HTMLText.escape($0.key))" }.joined(separator: ", ") + ")" }
        h += "</summary>\n<table class=\"events\">\n<thead><tr><th scope=\"col\">Offset</th><th scope=\"col\">Event</th><th scope=\"col\">Details</th></tr></thead>\n<tbody>\n"
        for e in listed {
            h += "<tr><td>+\(ReportFormat.clock(ms: e.offsetMs))</td><td>\(HTMLText.escape(e.type))</td><td>\(HTMLText.remote(describe(e)))</td></tr>\n"
        }
        h += "</tbody>\n</table>\n</details>\n</section>\n"
    }

    /// One line about an event: its participant's name and its other keys, generically
    /// (the event's fields as it is written), so the list needs nothing per kind of event,
    /// and a line this version cannot read is shown with the keys it has.
    static func describe(_ e: TranscriptLine) -> String {
        let fields = e.event.flatMap(jsonFields) ?? e.unreadFields ?? [:]
        var parts: [String] = []
        if let who = e.event == nil ? unreadName(fields) : e.displayName ?? e.identity, !who.isEmpty { parts.append(who) }
        let skip: Set<String> = ["type", "time", "offset_ms", "written_ms", "participant", "name"]
        for key in fields.keys.sorted() where !skip.contains(key) {
            guard let v = fields[key], let text = flat(v, depth: 0), !text.isEmpty else { continue }
            parts.append("\(key): \(text)")
        }
        let line = parts.joined(separator: "; ")
        return line.count > 300 ? String(line.prefix(299)) + "…" : line
    }

    /// An event's keys and values as it is written to events.jsonl.
    static func jsonFields(_ event: TranscriptEvent) -> [String: JSONValue]? {
        guard let text = try? JSONWriter.string(event, style: .eventLine) else { return nil }
        return (try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)))?.object
    }

    /// Who an unread line is about: its participant's name, else its identity (a bare
    /// identity before issue 11, with the name beside it).
    static func unreadName(_ f: [String: JSONValue]) -> String? {
        let p = f["participant"]
        let name = p?.object?["name"]?.string ?? f["name"]?.string
        if let name, !name.isEmpty { return name }
        return p?.string ?? p?.object?["identity"]?.string
    }

    static func flat(_ v: JSONValue, depth: Int) -> String? {
        switch v {
        case .string(let s): return s
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .bool(let b): return b ? "yes" : "no"
        case .null: return nil
        case .array(let a):
            guard depth < 2 else { return "…" }
            return "[" + a.compactMap { flat($0, depth: depth + 1) }.joined(separator: ", ") + "]"
        case .object(let o):
            guard depth < 2 else { return "…" }
            if let id = o["identity"]?.string { return (o["name"]?.string).flatMap { $0.isEmpty ? nil : $0 } ?? id }
            return "{" + o.keys.sorted().compactMap { k in flat(o[k] ?? .null, depth: depth + 1).map { "\(k): \($0)" } }.joined(separator: ", ") + "}"
        }
    }
}

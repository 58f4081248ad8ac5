import BedrudProtocol

/// The page's sections below the timeline: chat, participants, network, every event.
extension ReportPage {
    // MARK: - Chat

    static func chatSection(_ h: inout String, _ input: ReportInput) {
        let chats = input.events.filter { $0.type == "chat" }.sorted { $0.offsetMs < $1.offsetMs }
        h += "<section aria-labelledby=\"chat-title\">\n<h2 id=\"chat-title\">Chat</h2>\n"
        guard !chats.isEmpty else {
            h += "<p>No chat messages were received while the bot was in the room.</p>\n</section>\n"
            return
        }
        h += "<ol class=\"chat\">\n"
        for c in chats {
            let who = c.name ?? c.identity ?? "unknown"
            h += "<li data-offset=\"\(c.offsetMs)\"><span class=\"when\">+\(ReportFormat.clock(ms: c.offsetMs))</span> <strong>\(HTMLText.remote(who))</strong> "
            h += "<span class=\"msg\">\(HTMLText.remote(c.string("message") ?? ""))</span>"
            let attachments = (c.fields["attachments"]?.array ?? []).compactMap(\.object)
            if !attachments.isEmpty {
                h += "<ul class=\"attachments\">"
                for a in attachments { h += "<li>\(attachment(a, existing: input.existingPaths))</li>" }
                h += "</ul>"
            }
            h += "</li>\n"
        }
        h += "</ol>\n</section>\n"
    }

    /// An attachment: shown from the session folder when it was saved there (an image as an
    /// image), otherwise its URL as text. A remote URL is never loaded by the page.
    static func attachment(_ a: [String: JSONValue], existing: Set<String>) -> String {
        let mime = a["mime"]?.string ?? ""
        let kind = a["kind"]?.string ?? ""
        let candidates = [a["file"]?.string, a["path"]?.string, a["url"]?.string].compactMap { $0 }
        let local = candidates.first { existing.contains($0) }
        let label = HTMLText.remote(a["name"]?.string ?? local ?? a["url"]?.string ?? "attachment")
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
            let p = input.summary.participants.first { $0.identity == lane.identity }
            let present = lane.spans.filter { $0.kind == .presence }.map { "+\(ReportFormat.clock(ms: $0.startMs))–+\(ReportFormat.clock(ms: $0.endMs))" }
            let turns = lane.spans.filter { $0.kind == .turn }
            let speaking = p?.speakingMs ?? turns.reduce(0) { $0 + $1.endMs - $1.startMs }
            let c = { (k: String) in p?.counts[k].map { String($0) } ?? "–" }
            let gaps = (p?.gapsMs ?? [:]).filter { $0.value > 0 && $0.key != "dtx" }.sorted { $0.key < $1.key }.map { "\(HTMLText.escape($0.key)) \(ReportFormat.duration(ms: $0.value))" }
            h += "<tr><th scope=\"row\">\(HTMLText.remote(lane.name))</th><td>\(HTMLText.remote(lane.identity))</td><td>\(present.joined(separator: ", "))</td>"
            h += "<td>\(ReportFormat.duration(ms: speaking))</td><td>\(turns.count)</td><td>\(c("packets"))</td><td>\(c("lost"))</td><td>\(c("late"))</td>"
            h += "<td>\(c("fec_recovered"))</td><td>\(gaps.isEmpty ? "none" : gaps.joined(separator: ", "))</td></tr>\n"
        }
        h += "</tbody>\n</table>\n</section>\n"
    }

    // MARK: - Network

    static func networkSection(_ h: inout String, _ input: ReportInput) {
        let s = input.summary
        let outages = input.events.filter { $0.type == "reconnecting" }.count
        h += "<section aria-labelledby=\"net-title\">\n<h2 id=\"net-title\">Network</h2>\n<dl class=\"facts\">\n"
        h += "<div><dt>Reconnects</dt><dd>\(s.reconnects ?? Int64(outages))</dd></div>\n"
        if let p = s.selectedPair { h += "<div><dt>Candidate pair</dt><dd>\(HTMLText.remote(p))</dd></div>\n" }
        if let p = s.srtpProfile { h += "<div><dt>SRTP profile</dt><dd>\(HTMLText.remote(p))</dd></div>\n" }
        h += "</dl>\n"
        if s.networkTracks.isEmpty {
            h += "<p>No transport figures (no media connection, or a repaired session).</p>\n</section>\n"
            return
        }
        h += "<table>\n<thead><tr><th scope=\"col\">Participant</th><th scope=\"col\">SSRC</th><th scope=\"col\">Packets</th><th scope=\"col\">Lost</th>"
        h += "<th scope=\"col\">Jitter</th><th scope=\"col\">NACKed</th><th scope=\"col\">Recovered</th></tr></thead>\n<tbody>\n"
        let v = { (n: Int64?) in n.map { String($0) } ?? "–" }
        for t in s.networkTracks {
            let name = s.participants.first { $0.identity == t.participant }.map { $0.name.isEmpty ? $0.identity : $0.name } ?? t.participant ?? "–"
            h += "<tr><th scope=\"row\">\(HTMLText.remote(name))</th><td>\(v(t.ssrc))</td><td>\(v(t.packets))</td><td>\(v(t.lost))</td>"
            h += "<td>\(t.jitterMs.map { num($0) + " ms" } ?? "–")</td><td>\(v(t.nacked))</td><td>\(v(t.recovered))</td></tr>\n"
        }
        h += "</tbody>\n</table>\n</section>\n"
    }

    // MARK: - Every event

    /// Frequent, low-value lines counted rather than listed.
    static let countedOnly: Set<String> = ["speakers_changed", "connection_quality", "data"]

    static func eventLog(_ h: inout String, _ input: ReportInput) {
        let sorted = input.events.enumerated().sorted { ($0.element.offsetMs, $0.offset) < ($1.element.offsetMs, $1.offset) }.map(\.element)
        let listed = sorted.filter { !countedOnly.contains($0.type) }
        var counted: [String: Int] = [:]
        for e in sorted where countedOnly.contains(e.type) { counted[e.type, default: 0] += 1 }
        h += "<section aria-labelledby=\"events-title\">\n<h2 id=\"events-title\">Events</h2>\n<details>\n"
        h += "<summary>All \(listed.count) events"
        if !counted.isEmpty { h += " (not listed: " + counted.sorted { $0.key < $1.key }.map { "\($0.value) \(HTMLText.escape($0.key))" }.joined(separator: ", ") + ")" }
        h += "</summary>\n<table class=\"events\">\n<thead><tr><th scope=\"col\">Offset</th><th scope=\"col\">Event</th><th scope=\"col\">Details</th></tr></thead>\n<tbody>\n"
        for e in listed {
            h += "<tr><td>+\(ReportFormat.clock(ms: e.offsetMs))</td><td>\(HTMLText.escape(e.type))</td><td>\(HTMLText.remote(describe(e)))</td></tr>\n"
        }
        h += "</tbody>\n</table>\n</details>\n</section>\n"
    }

    /// One line about an event: its participant's name and its other keys, generically, so
    /// a type this version does not know is still readable.
    static func describe(_ e: ReportEvent) -> String {
        var parts: [String] = []
        if let who = e.name ?? e.identity, !who.isEmpty { parts.append(who) }
        let skip: Set<String> = ["type", "time", "offset_ms", "written_ms", "participant", "name"]
        for key in e.fields.keys.sorted() where !skip.contains(key) {
            guard let v = e.fields[key], let text = flat(v, depth: 0), !text.isEmpty else { continue }
            parts.append("\(key): \(text)")
        }
        let line = parts.joined(separator: "; ")
        return line.count > 300 ? String(line.prefix(299)) + "…" : line
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

import BedrudMedia
import BedrudProtocol
import FoundationEssentials

/// `report.html`: one self-contained page per session, built by a pure function from the
/// session's summary, events and level strips (``render(_:nonce:)``). Inline CSS and
/// script, audio by relative path, no network access (its Content-Security-Policy allows
/// only its own script, by nonce, and the folder's files). Every remote string goes
/// through ``HTMLText``. Everything but the click-to-seek and the play line reads without
/// JavaScript.
enum ReportPage {
    // MARK: - Geometry of the timeline (SVG user units)

    static let width = 1200
    static let plotLeft = 180
    static let plotWidth = 1000
    static let axisHeight = 44
    static let laneHeight = 50
    static let laneGap = 6

    static func x(_ ms: Int64, _ duration: Int64) -> String {
        let d = max(1, duration)
        let v = Double(plotLeft) + Double(min(max(0, ms), d)) / Double(d) * Double(plotWidth)
        return num(v)
    }

    static func num(_ v: Double) -> String {
        let r = (v * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    // MARK: - The page

    /// The whole page. `nonce` is the Content-Security-Policy nonce of the page's own script
    /// (random per page, from ``SessionReport``; fixed in tests).
    static func render(_ input: ReportInput, nonce: String) -> String {
        let s = input.summary
        let timeline = ReportTimeline(events: input.events, files: input.files, durationMs: s?.durationMs)
        let started = input.events.first { $0.event?.type == .sessionStarted }
        let startMs = s?.started.value.flatMap(ReportFormat.unixMs(iso:)) ?? started.flatMap { ReportFormat.unixMs(iso: $0.time) }
        let room = s?.room.value ?? started.flatMap { if case .sessionStarted(let e) = $0.event { e.room.text } else { nil } } ?? "session"
        var h = ""
        h.reserveCapacity(64 * 1024)
        h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        h += "<meta name=\"color-scheme\" content=\"light dark\">\n"
        h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'nonce-\(HTMLText.escape(nonce))'; "
        h += "style-src 'unsafe-inline'; img-src 'self' file: data:; media-src 'self' file:; base-uri 'none'; form-action 'none'\">\n"
        h += "<meta name=\"generator\" content=\"bedrud-bot \(HTMLText.escape(BedrudBotVersion.string))\">\n"
        h += "<title>\(HTMLText.escape(room)) — recording report</title>\n<style>\n\(ReportAssets.css)</style>\n</head>\n<body>\n"
        h += "<a class=\"skip\" href=\"#timeline-section\">Skip to the timeline</a>\n<main>\n"
        header(&h, input, room: room, startMs: startMs, timeline: timeline)
        timelineSection(&h, input, timeline, startMs: startMs)
        chatSection(&h, input, timeline.chat)
        participantsSection(&h, input, timeline)
        networkSection(&h, input)
        eventLog(&h, input)
        h += "</main>\n"
        // Only numbers and file names the script needs; remote text stays in the HTML.
        let data = PageData(durationMs: timeline.durationMs, plotLeft: plotLeft, plotWidth: plotWidth, startUnixMs: startMs,
                            utcOffsetSeconds: input.utcOffsetSeconds)
        let json = (try? JSONOutput.string(data, pretty: false)) ?? "{}"
        h += "<script type=\"application/json\" id=\"report-data\">\(HTMLText.scriptJSON(json))</script>\n"
        h += "<script nonce=\"\(HTMLText.escape(nonce))\">\n\(ReportAssets.script)</script>\n</body>\n</html>\n"
        return h
    }

    struct PageData: Encodable {
        var durationMs: Int64
        var plotLeft: Int
        var plotWidth: Int
        var startUnixMs: Int64?
        var utcOffsetSeconds: Int
        enum CodingKeys: String, CodingKey {
            case durationMs = "duration_ms", plotLeft = "plot_left", plotWidth = "plot_width", startUnixMs = "start_unix_ms"
            case utcOffsetSeconds = "utc_offset_seconds"
        }
    }

    // MARK: - Header

    static func header(_ h: inout String, _ input: ReportInput, room: String, startMs: Int64?, timeline: ReportTimeline) {
        let s = input.summary
        h += "<header>\n<h1>\(HTMLText.remote(room))</h1>\n<dl class=\"facts\">\n"
        func fact(_ k: String, _ v: String) { h += "<div><dt>\(k)</dt><dd>\(v)</dd></div>\n" }
        if let i = input.instance { fact("Instance", HTMLText.remote(i)) }
        if let server = s?.server.value { fact("Server", HTMLText.remote(server)) }
        if let startMs {
            fact("Started", "<time datetime=\"\(HTMLText.escape(s?.started.value ?? ""))\">\(ReportFormat.localTime(unixMs: startMs, utcOffsetSeconds: input.utcOffsetSeconds))</time>")
            fact("Ended", ReportFormat.localTime(unixMs: startMs + timeline.durationMs, utcOffsetSeconds: input.utcOffsetSeconds))
        }
        fact("Duration", ReportFormat.duration(ms: timeline.durationMs))
        // summary.json, else the last line of a session whose summary was never written.
        // (A summary from elsewhere may lack a key: an empty reason or message is taken as absent.)
        let ended = input.events.lazy.compactMap { if case .sessionEnded(let e) = $0.event { e } else { nil } }.last
        let reason = s.flatMap { $0.endReason.isEmpty ? nil : $0.endReason } ?? ended?.endReason
        var how = HTMLText.escape(reason ?? "not recorded (the recorder stopped without finishing)")
        if let m = s.flatMap({ $0.message.isEmpty ? nil : $0.message }) ?? ended?.detail.text, !m.isEmpty { how += ": " + HTMLText.remote(m) }
        if let c = s?.exitCode.value ?? ended?.exitCode { how += " (exit code \(c))" }
        fact("How it ended", how)
        let people = timeline.lanes.filter { !$0.isRoom }
        fact("Participants", people.isEmpty ? "none" : "\(people.count): " + people.map { HTMLText.remote($0.name) }.joined(separator: ", "))
        h += "</dl>\n"
        var problems: [String] = []
        if !input.leftoverParts.isEmpty {
            problems.append("Unfinished files left by a crash: " + input.leftoverParts.map(HTMLText.remote).joined(separator: ", ")
                            + ". Run <code>bedrud-bot repair</code> on this folder.")
        }
        if input.unreadableEventLines > 0 { problems.append("\(input.unreadableEventLines) line(s) of events.jsonl could not be read and are left out.") }
        let bad = input.files.filter { $0.valid != true }
        if !bad.isEmpty { problems.append("\(bad.count) audio file(s) failed verification (see Files).") }
        if !problems.isEmpty {
            h += "<div class=\"problems\" role=\"alert\"><strong>Problems:</strong><ul>" + problems.map { "<li>\($0)</li>" }.joined() + "</ul></div>\n"
        }
        h += "<h2>Files</h2>\n<table class=\"files\">\n<thead><tr><th scope=\"col\">File</th><th scope=\"col\">Size</th><th scope=\"col\">Length</th><th scope=\"col\">Verify</th></tr></thead>\n<tbody>\n"
        for f in input.files {
            let link = HTMLText.relativeURL(f.name).map { "<a href=\"\($0)\">\(HTMLText.remote(f.name))</a>" } ?? HTMLText.remote(f.name)
            let verdict: String
            switch f.valid {
            case true?: verdict = "<span class=\"ok\">✓ valid</span>"
            case false?: verdict = "<span class=\"bad\">✗ " + f.problems.prefix(3).map(HTMLText.escape).joined(separator: "; ") + "</span>"
            case nil: verdict = "<span class=\"bad\">✗ unreadable</span>"
            }
            h += "<tr><td>\(link)</td><td>\(ReportFormat.bytes(f.bytes))</td><td>\(f.durationMs.map { ReportFormat.clock(ms: Int64($0.rounded())) } ?? "–")</td><td>\(verdict)</td></tr>\n"
        }
        for f in input.otherFiles {
            let link = HTMLText.relativeURL(f.path).map { "<a href=\"\($0)\">\(HTMLText.remote(f.path))</a>" } ?? HTMLText.remote(f.path)
            h += "<tr><td>\(link)</td><td>\(ReportFormat.bytes(f.bytes))</td><td></td><td></td></tr>\n"
        }
        h += "</tbody>\n</table>\n</header>\n"
    }

    // MARK: - Timeline

    static func timelineSection(_ h: inout String, _ input: ReportInput, _ t: ReportTimeline, startMs: Int64?) {
        let d = max(1, t.durationMs)
        let height = axisHeight + t.lanes.count * (laneHeight + laneGap) + 4
        h += "<section id=\"timeline-section\" aria-labelledby=\"timeline-title\">\n<h2 id=\"timeline-title\">Timeline</h2>\n"
        h += "<noscript><p>Without JavaScript the timeline is a picture: clicking it does not move the players.</p></noscript>\n"
        h += "<div class=\"controls\"><button type=\"button\" id=\"play\" aria-pressed=\"false\">▶ Play</button> "
        h += "<span id=\"position\" aria-live=\"off\">0:00</span> <span class=\"hint\">Click the timeline, or focus it and use ←/→ (5 s), PageUp/PageDown (1 min), Home/End, to move every player.</span></div>\n"
        legend(&h)
        h += "<div class=\"timeline-wrap\">\n"
        h += "<svg id=\"timeline\" viewBox=\"0 0 \(width) \(height)\" role=\"slider\" tabindex=\"0\" aria-label=\"Timeline: position in the recording\" "
        h += "aria-valuemin=\"0\" aria-valuemax=\"\(d / 1000)\" aria-valuenow=\"0\" aria-valuetext=\"0:00\" data-duration-ms=\"\(t.durationMs)\" xmlns=\"http://www.w3.org/2000/svg\">\n"
        h += ReportAssets.svgDefs
        axis(&h, t, startMs: startMs, utcOffset: input.utcOffsetSeconds, height: height)
        for (i, lane) in t.lanes.enumerated() {
            laneSVG(&h, lane, file: input.files.first { $0.name == lane.file }, y: axisHeight + i * (laneHeight + laneGap), duration: d)
        }
        h += "<line id=\"playhead\" x1=\"\(plotLeft)\" x2=\"\(plotLeft)\" y1=\"\(axisHeight - 6)\" y2=\"\(height)\" visibility=\"hidden\"/>\n"
        h += "</svg>\n<div id=\"tip\" role=\"status\" hidden></div>\n</div>\n"
        // Players: one per file, by relative path.
        h += "<h3>Listen</h3>\n"
        if input.files.isEmpty { h += "<p>No audio files in this folder.</p>\n" }
        h += "<div class=\"players\">\n"
        for f in input.files {
            guard let url = HTMLText.relativeURL(f.name) else { continue }
            let who = f.identity.flatMap { id in t.lanes.first { $0.identity == id }?.name } ?? (f.identity == nil ? "room mix" : f.name)
            let id = "player-\(HTMLText.escape(f.name))"
            h += "<figure class=\"player\"><figcaption id=\"\(id)-label\">\(HTMLText.remote(who)) <span class=\"file\">\(HTMLText.remote(f.name))</span></figcaption>"
            h += "<audio controls preload=\"metadata\" src=\"\(url)\" data-start=\"\(f.startOffsetMs)\" data-file-duration-ms=\"\(f.durationMs.map { num($0) } ?? "")\" aria-labelledby=\"\(id)-label\"></audio></figure>\n"
        }
        h += "</div>\n</section>\n"
    }

    static func legend(_ h: inout String) {
        h += "<ul class=\"legend\" aria-label=\"Legend\">\n"
        for k in ReportTimeline.SpanKind.allCases {
            h += "<li><svg width=\"28\" height=\"14\" aria-hidden=\"true\"><rect class=\"\(k.rawValue)\" x=\"0\" y=\"1\" width=\"28\" height=\"12\"/></svg>\(k.label)</li>\n"
        }
        h += "<li><svg width=\"28\" height=\"14\" aria-hidden=\"true\"><path class=\"level\" d=\"M0 14 L4 8 L8 11 L12 3 L16 9 L20 6 L24 12 L28 14 Z\"/></svg>audio level</li>\n"
        for kind in ReportTimeline.MarkerKind.allCases {
            h += "<li><svg width=\"16\" height=\"14\" aria-hidden=\"true\">\(markerShape(kind, x: 8, y: 7))</svg>\(kind.label)</li>\n"
        }
        h += "</ul>\n"
    }

    static func markerShape(_ kind: ReportTimeline.MarkerKind, x: Double, y: Double) -> String {
        let (cx, cy) = (num(x), num(y))
        switch kind {
        case .chat: return "<circle class=\"mk-chat\" cx=\"\(cx)\" cy=\"\(cy)\" r=\"5\"/>"
        case .reaction: return "<path class=\"mk-reaction\" d=\"M\(cx) \(num(y - 6)) L\(num(x + 6)) \(cy) L\(cx) \(num(y + 6)) L\(num(x - 6)) \(cy) Z\"/>"
        case .moderation: return "<path class=\"mk-moderation\" d=\"M\(cx) \(num(y - 6)) L\(num(x + 6)) \(num(y + 5)) L\(num(x - 6)) \(num(y + 5)) Z\"/>"
        case .poll: return "<rect class=\"mk-poll\" x=\"\(num(x - 5))\" y=\"\(num(y - 5))\" width=\"10\" height=\"10\"/>"
        case .event: return "<circle class=\"mk-event\" cx=\"\(cx)\" cy=\"\(cy)\" r=\"4\"/>"
        }
    }

    /// Tick spacing: the smallest of these giving at most ten ticks.
    static let tickSteps: [Int64] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14_400].map { $0 * 1000 }

    static func axis(_ h: inout String, _ t: ReportTimeline, startMs: Int64?, utcOffset: Int, height: Int) {
        let d = max(1, t.durationMs)
        let step = tickSteps.first { d / $0 <= 10 } ?? 28_800_000
        h += "<g class=\"axis\" aria-hidden=\"true\">\n"
        h += "<text x=\"4\" y=\"16\" class=\"axis-title\">\(startMs == nil ? "" : "clock")</text><text x=\"4\" y=\"34\" class=\"axis-title\">offset</text>\n"
        var ms: Int64 = 0
        while ms <= d {
            let x = self.x(ms, d)
            h += "<line class=\"tick\" x1=\"\(x)\" x2=\"\(x)\" y1=\"\(axisHeight - 6)\" y2=\"\(height)\"/>"
            let anchor = ms == 0 ? "start" : (d - ms < step / 2 ? "end" : "middle")
            if let startMs { h += "<text x=\"\(x)\" y=\"16\" text-anchor=\"\(anchor)\">\(ReportFormat.timeOfDay(unixMs: startMs + ms, utcOffsetSeconds: utcOffset))</text>" }
            h += "<text x=\"\(x)\" y=\"34\" text-anchor=\"\(anchor)\">+\(ReportFormat.clock(ms: ms))</text>\n"
            ms += step
        }
        h += "</g>\n"
    }

    static func laneSVG(_ h: inout String, _ lane: ReportTimeline.Lane, file: ReportFile?, y: Int, duration d: Int64) {
        let turns = lane.spans.filter { $0.kind == .turn }
        let speaking = turns.reduce(Int64(0)) { $0 + $1.endMs - $1.startMs }
        var label = lane.isRoom ? "Room mix" : "\(lane.name)"
        if !lane.isRoom { label += ": \(turns.count) speaking turn\(turns.count == 1 ? "" : "s"), \(ReportFormat.duration(ms: speaking))" }
        let gaps = lane.spans.filter { $0.kind.rawValue.hasPrefix("gap") || $0.kind == .outage }
        if !gaps.isEmpty { label += ", \(gaps.count) gap\(gaps.count == 1 ? "" : "s")" }
        h += "<g class=\"lane\(lane.isRoom ? " room" : "")\" role=\"group\" aria-label=\"\(HTMLText.escape(label))\" data-identity=\"\(HTMLText.escape(lane.identity))\">\n"
        h += "<rect class=\"lane-bg\" x=\"0\" y=\"\(y)\" width=\"\(width)\" height=\"\(laneHeight)\"/>"
        let shown = lane.name.count > 22 ? String(lane.name.prefix(21)) + "…" : lane.name
        h += "<text class=\"lane-name\" x=\"6\" y=\"\(y + 20)\">\(HTMLText.escape(lane.isRoom ? "Room mix" : shown))<title>\(HTMLText.escape(lane.isRoom ? "Room mix" : lane.name))</title></text>"
        if let f = lane.file { h += "<text class=\"lane-file\" x=\"6\" y=\"\(y + 38)\">\(HTMLText.escape(f.count > 26 ? String(f.prefix(25)) + "…" : f))</text>" }
        h += "\n"
        for s in lane.spans where s.kind == .presence {
            spanRect(&h, s, y: y + 2, height: laneHeight - 4, d: d)
        }
        if let levels = file?.levels, !levels.values.isEmpty {
            h += "<path class=\"level\" d=\"\(levelPath(levels, start: file?.startOffsetMs ?? 0, y: y, d: d))\"/>\n"
        }
        for s in lane.spans where s.kind != .presence && s.kind != .turn {
            spanRect(&h, s, y: y + 2, height: laneHeight - 18, d: d)
        }
        // Speaking turns on a row of their own under the level strip, so neither hides the other.
        for s in turns { spanRect(&h, s, y: y + laneHeight - 13, height: 10, d: d) }
        for m in lane.markers {
            let x = Double(plotLeft) + Double(min(max(0, m.offsetMs), d)) / Double(d) * Double(plotWidth)
            h += "<g class=\"marker\" tabindex=\"0\" role=\"img\" data-kind=\"\(m.kind.rawValue)\" data-offset=\"\(m.offsetMs)\" aria-label=\"\(HTMLText.escape("\(m.kind.rawValue) at +\(ReportFormat.clock(ms: m.offsetMs)): \(m.text)"))\">"
            h += markerShape(m.kind, x: x, y: Double(y + 10)) + "<title>\(HTMLText.escape(m.text))</title></g>\n"
        }
        h += "</g>\n"
    }

    static func spanRect(_ h: inout String, _ s: ReportTimeline.Span, y: Int, height: Int, d: Int64) {
        let x0 = Double(plotLeft) + Double(min(max(0, s.startMs), d)) / Double(d) * Double(plotWidth)
        let x1 = Double(plotLeft) + Double(min(max(0, s.endMs), d)) / Double(d) * Double(plotWidth)
        let w = max(1, x1 - x0)  // a short turn in a long meeting is still visible
        h += "<rect class=\"\(s.kind.rawValue)\" x=\"\(num(x0))\" y=\"\(y)\" width=\"\(num(w))\" height=\"\(height)\" data-start=\"\(s.startMs)\" data-end=\"\(s.endMs)\">"
        h += "<title>\(s.kind.label) +\(ReportFormat.clock(ms: s.startMs))–+\(ReportFormat.clock(ms: s.endMs))</title></rect>\n"
    }

    /// The level strip as a filled step area: one step per point of the strip, or, when
    /// there are more points than SVG units, per unit (the loudest of its points).
    static func levelPath(_ l: AudioLevels, start: Int64, y: Int, d: Int64) -> String {
        var steps: [(x0: Double, x1: Double, v: UInt8)] = []
        let perUnit = Double(d) / Double(plotWidth)  // ms per SVG unit
        let xOf = { (ms: Int64) in Double(plotLeft) + Double(min(max(0, ms), d)) / Double(d) * Double(plotWidth) }
        for (i, v) in l.values.enumerated() {
            let ms = start + Int64(i * l.stepMs)
            guard ms < d else { break }
            var x0 = xOf(ms), x1 = xOf(ms + Int64(l.stepMs))
            // More points than fit: two SVG units a step (still finer than most screens show).
            if Double(l.stepMs) < 2 * perUnit { x0 = (x0 / 2).rounded(.down) * 2; x1 = x0 + 2 }
            if let last = steps.last, last.x0 == x0 {
                steps[steps.count - 1].v = max(last.v, v)
            } else {
                steps.append((x0, x1, v))
            }
        }
        // Runs of one level are one step (a steady tone or silence costs a few bytes).
        var merged: [(x0: Double, x1: Double, v: UInt8)] = []
        for s in steps {
            if let last = merged.last, last.v == s.v, abs(last.x1 - s.x0) < 0.05 { merged[merged.count - 1].x1 = s.x1 } else { merged.append(s) }
        }
        steps = merged
        let base = Double(y + laneHeight - 16)  // above the turns' row
        let top = 28.0
        var p = ""
        var open = false
        for s in steps {
            if s.v == 0 {
                if open { p += "V\(num(base))Z"; open = false }
                continue
            }
            let h = num(base - Double(s.v) / Double(AudioLevels.maxLevel) * top)
            if !open { p += "M\(num(s.x0)) \(num(base))"; open = true }
            p += "L\(num(s.x0)) \(h)H\(num(s.x1))"
        }
        if open { p += "V\(num(base))Z" }
        return p
    }
}

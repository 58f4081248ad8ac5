import Foundation
import Testing
import TestSupport

/// `report.html` in a real browser (Debian's chromium, headless, installed by
/// scripts/bootstrap): a devserver recording with two speakers, a late joiner, a mute,
/// chat with an image and a 3 s network drop; and one of the meeting wire (a poll, a vote,
/// a reaction). A check script, added to a copy of the page
/// under the page's own Content-Security-Policy, writes what it finds into the DOM, which
/// chromium's `--dump-dom` prints.
@Suite struct ReportBrowserTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A 48×32 PNG (orange and blue squares), the chat's image.
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAADAAAAAgCAIAAADbtmxLAAAARUlEQVR42u3WsQ0AIAgEwJ/ZhdzBoZzDBbA0Flzy5SdcBWTPlMlYZV73AwQE1A70a/C1DwQE1A5kUwMBAfmHnA4goOagA5s5+2pzzGMrAAAAAElFTkSuQmCC") ?? Data()

    static let hostile = "<img src=x onerror=\"window.__pwned=1\"></script><script>window.__pwned=2</script>"

    /// What the page reports about itself (written by ``checkScript``).
    struct Findings: Decodable {
        struct Audio: Decodable { var src: String; var duration: Double?; var error: Int? }
        struct Span: Decodable { var start: Int64; var end: Int64; var x: Double; var width: Double }
        struct Lane: Decodable { var id: String; var turns: [Span]; var gaps: [Span]; var gapKinds: [String] }
        struct Image: Decodable { var src: String; var width: Int }
        var audio: [Audio]
        var lanes: [Lane]
        var images: [Image]
        var errors: [String]
        var violations: [String]
        var pwned: Bool
        var imgX: Int
        var seekOK: Bool
        var keyOK: Bool
        var plotLeft: Double
        var plotWidth: Double
        var durationMs: Double
        /// What each item of the chat list reads as (its text content), and each timeline marker's label.
        var chat: [String]
        var markers: [String]
    }

    /// Runs at the end of the page: waits for every player's metadata, reads the timeline's
    /// spans, clicks the middle of the timeline and checks every player moved there.
    static let checkScript = """
        (async function () {
          const data = JSON.parse(document.getElementById("report-data").textContent);
          const audios = Array.from(document.querySelectorAll("audio"));
          const meta = a => new Promise(res => {
            const done = () => res({ src: a.getAttribute("src"), duration: isFinite(a.duration) ? a.duration : null, error: a.error ? a.error.code : null });
            if (a.readyState >= 1) return done();
            a.addEventListener("loadedmetadata", done); a.addEventListener("error", done);
          });
          const audio = await Promise.all(audios.map(meta));
          const spans = (g, sel) => Array.from(g.querySelectorAll(sel)).map(r => ({ start: Number(r.dataset.start), end: Number(r.dataset.end),
            x: Number(r.getAttribute("x")), width: Number(r.getAttribute("width")) }));
          const lanes = Array.from(document.querySelectorAll("g.lane")).map(g => ({ id: g.dataset.identity, turns: spans(g, "rect.turn"),
            gaps: spans(g, "rect[class^='gap-'], rect.outage"),
            gapKinds: Array.from(g.querySelectorAll("rect[class^='gap-'], rect.outage")).map(r => r.getAttribute("class")) }));
          const imgs = Array.from(document.querySelectorAll("main img"));
          await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = r; i.onerror = r; })));
          const images = imgs.map(i => ({ src: i.getAttribute("src"), width: i.naturalWidth }));
          // Click the middle of the plot: every player goes to the same session moment.
          const svg = document.getElementById("timeline");
          const box = svg.getBoundingClientRect(), scale = box.width / svg.viewBox.baseVal.width;
          const x = box.left + (data.plot_left + data.plot_width / 2) * scale, y = box.top + 60 * scale;
          svg.dispatchEvent(new MouseEvent("click", { clientX: x, clientY: y, bubbles: true }));
          const mid = data.duration_ms / 2;
          const seekOK = audios.every(a => {
            const want = Math.max(0, Math.min((mid - Number(a.dataset.start)) / 1000, a.duration));
            return Math.abs(a.currentTime - want) < 0.25;
          });
          // The keyboard: focused, → moves every player 5 s on, End to the end.
          svg.focus();
          svg.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
          const keyOK = document.activeElement === svg && Math.abs(Number(svg.getAttribute("aria-valuenow")) - Math.round((mid + 5000) / 1000)) <= 1
            && audios.every(a => Math.abs(a.currentTime - Math.max(0, Math.min((mid + 5000 - Number(a.dataset.start)) / 1000, a.duration))) < 0.25);
          const out = { audio, lanes, images, keyOK, errors: window.__errors, violations: window.__violations, pwned: window.__pwned !== undefined,
            imgX: document.querySelectorAll("img[src='x']").length, seekOK, plotLeft: data.plot_left, plotWidth: data.plot_width,
            durationMs: data.duration_ms,
            chat: Array.from(document.querySelectorAll("ol.chat > li")).map(li => li.textContent),
            markers: Array.from(document.querySelectorAll("g.marker")).map(g => g.getAttribute("aria-label")) };
          const pre = document.createElement("pre"); pre.id = "check-result"; pre.textContent = JSON.stringify(out);
          document.body.appendChild(pre);
        })();
        """

    static let catchScript = """
        window.__errors = []; window.__violations = [];
        window.addEventListener("error", e => window.__errors.push((e.message || ("failed to load " + (e.target && (e.target.src || e.target.currentSrc)))) + ""), true);
        document.addEventListener("securitypolicyviolation", e => window.__violations.push(e.violatedDirective + " " + e.blockedURI));
        """

    /// Writes `report-check.html` beside the report (same folder, so relative paths hold),
    /// with the two scripts under the page's own nonce, and returns what the page found.
    static func check(folder: String) async throws -> Findings {
        let page = try String(contentsOfFile: folder + "/report.html", encoding: .utf8)
        let nonce = try #require(page.firstMatch(of: /<script nonce="([0-9a-f]+)">/)?.1).description
        let csp = try #require(page.range(of: "form-action 'none'\">\n"))
        var copy = page
        copy.insert(contentsOf: "<script nonce=\"\(nonce)\">\(catchScript)</script>\n", at: csp.upperBound)
        let end = try #require(copy.range(of: "</body>", options: .backwards))
        copy.insert(contentsOf: "<script nonce=\"\(nonce)\">\(checkScript)</script>\n", at: end.lowerBound)
        let checkPath = folder + "/report-check.html"
        try copy.write(toFile: checkPath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: checkPath) }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let browser = try #require(chromium, "chromium is not installed (scripts/bootstrap installs it)")
        let r = try await offPool {
            try Subprocess.run(URL(fileURLWithPath: browser), [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions", "--mute-audio",
                "--user-data-dir=\(profile.path)", "--virtual-time-budget=15000", "--window-size=1280,2000",
                "--dump-dom", "file://" + checkPath,
            ], environment: ["HOME": profile.path], timeout: 90)
        }
        let json = try #require(r.stdout.firstMatch(of: /<pre id="check-result">(.*?)<\/pre>/)?.1, "no findings in the page:\n\(r.stdout.suffix(2000))\n\(r.stderr.suffix(2000))")
        let text = String(json).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
        return try JSONDecoder().decode(Findings.self, from: Data(text.utf8))
    }

    func events(_ dir: String) throws -> [[String: Any]] {
        try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The meeting of the report's screenshot (room `review`): two speakers, a late joiner,
    /// a mute, a chat and a 3 s drop (CLIOutageTests records it for the mix too).
    static let meeting = """
        room review public
        start first-join
        at 0s    join alice name="Alice"
        at 0.5s  tone alice 440Hz 3s amplitude=0.3
        at 4s    join bob name="Bob"
        at 4.5s  tone bob 660Hz 2s amplitude=0.3
        at 7s    mute bob
        at 9s    unmute bob
        at 9.5s  chat alice "the picture is attached"
        at 10s   drop $client 3s
        at 15s   tone alice 330Hz 2s amplitude=0.3
        at 15.5s tone bob 550Hz 2s amplitude=0.3
        """

    /// samples/scenarios/meeting-wire.scenario recorded: the chat shows Bob's poll with its
    /// options and Alice's vote, and Bob's 👍 on Alice's slide; the timeline says the same.
    @Test func theMeetingWiresPollVoteAndReactionAreOnThePage() async throws {
        let server = try await DevServer.start(scenario: "meeting-wire")
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        try await user.expect(10, ["join", server.baseURL + "/m/wire", "--record", "--output", out], timeout: 90)
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/wire")
        let dir = out + "/wire/" + (sessions.first ?? "")
        let f = try await Self.check(folder: dir)
        #expect(f.errors.isEmpty && f.violations.isEmpty, "\(f.errors) \(f.violations)")
        let chat = f.chat.map { $0.replacingOccurrences(of: #"^\+\d+:\d\d "#, with: "", options: .regularExpression) }
        #expect(chat == [
            "Alice Doe Grüße — the slide 👩‍👩‍👧👍 Bob Chen",
            "Bob Chen Poll: Lunch at noon?Pizza: no votesSoup: no votesRamen 🍜: 1 vote (Alice Doe)",
            "Bob Chen renamed",
        ], "\(f.chat)")
        #expect(f.images.count == 1 && f.images.first?.width ?? 0 > 0, "the slide is shown: \(f.images)")
        #expect(f.markers.contains { $0.hasSuffix(": 👍 to Alice Doe: “Grüße — the slide 👩‍👩‍👧”") && $0.hasPrefix("reaction at +0:0") }, "\(f.markers)")
        #expect(f.markers.contains { $0.hasSuffix(": poll: Lunch at noon? (Pizza / Soup / Ramen 🍜)") && $0.hasPrefix("poll at +0:0") }, "\(f.markers)")
        #expect(f.markers.contains { $0.hasSuffix(": vote: Ramen 🍜 (poll Lunch at noon?)") && $0.hasPrefix("poll at +0:0") }, "\(f.markers)")
    }

    @Test func aRecordingsReportWorksInChromium() async throws {
        let server = try await DevServer.start(scenarioText: Self.meeting, timeout: 90)
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        try await user.expect(0, ["join", server.baseURL + "/m/review", "--record", "--output", out, "--duration", "21s"], timeout: 120)
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/review")
        let dir = out + "/review/" + (sessions.first ?? "")
        #expect(FileManager.default.fileExists(atPath: dir + "/report.html"), "written when the session ended")

        // The image: until the bot saves attachments itself, the chat line refers to a file placed in the folder.
        try FileManager.default.createDirectory(atPath: dir + "/attachments", withIntermediateDirectories: true)
        try Self.png.write(to: URL(fileURLWithPath: dir + "/attachments/picture.png"))
        var lines = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8)
        lines = lines.replacingOccurrences(of: #""attachments":[]"#, with: #""attachments":[{"kind":"image","url":"attachments/picture.png","mime":"image/png"}]"#)
        try lines.write(toFile: dir + "/events.jsonl", atomically: true, encoding: .utf8)
        let regenerated = try await user.expect(0, ["report", dir])
        #expect(regenerated.stdout == dir + "/report.html\n")

        let all = try events(dir)
        let f = try await Self.check(folder: dir)
        #expect(f.errors.isEmpty, "\(f.errors)")
        #expect(f.violations.isEmpty, "\(f.violations)")
        // Every player loads, and plays as long as the file is.
        #expect(f.audio.count == 3, "\(f.audio)")
        for a in f.audio {
            let v = try await user.expect(0, ["verify", "--json", dir + "/" + a.src])
            let ms = try #require((try JSONSerialization.jsonObject(with: Data(v.stdout.utf8)) as? [String: Any])?["duration_ms"] as? Double)
            let got = try #require(a.duration, "\(a.src) did not load (error \(a.error ?? -1))")
            #expect(abs(got * 1000 - ms) <= 50, "\(a.src): browser \(got * 1000) ms, file \(ms) ms")
        }
        #expect(f.seekOK, "a click on the timeline moves every player to that moment")
        #expect(f.keyOK, "the focused timeline moves every player with the arrow keys")
        // Speaking spans are the speaking_turn events, lane by lane.
        for lane in f.lanes where !lane.id.isEmpty {
            let turns = all.filter { $0["type"] as? String == "speaking_turn" && ($0["participant"] as? [String: Any])?["identity"] as? String == lane.id }
                .map { [($0["start_ms"] as? Int ?? -1), ($0["end_ms"] as? Int ?? -1)] }.sorted { $0[0] < $1[0] }
            #expect(lane.turns.map { [Int($0.start), Int($0.end)] } == turns, "lane \(lane.id)")
            #expect(!turns.isEmpty, "\(lane.id) spoke")
        }
        // The drop: a reconnect gap drawn where the gap event says, at its place on the axis.
        let gaps = all.filter { $0["type"] as? String == "gap" && $0["cause"] as? String == "reconnect" }
        #expect(!gaps.isEmpty, "the 3 s drop left a reconnect gap")
        for g in gaps {
            let id = (g["participant"] as? [String: Any])?["identity"] as? String ?? ""
            let start = Int64(g["offset_ms"] as? Int ?? -1), end = start + Int64(g["duration_ms"] as? Int ?? 0)
            let drawn = f.lanes.first { $0.id == id }?.gaps.first { $0.start == start && $0.end == end }
            let d = try #require(drawn, "gap \(start)–\(end) of \(id) not drawn: \(f.lanes)")
            let x = f.plotLeft + Double(start) / f.durationMs * f.plotWidth
            #expect(abs(d.x - x) < 0.2)
            #expect(abs(d.width - Double(end - start) / f.durationMs * f.plotWidth) < 0.3)
        }
        #expect(f.images.map(\.src) == ["attachments/picture.png"])
        #expect(f.images.first?.width == 48, "the image loads from the folder")

        // The same session, every name and the room hostile: shown as text, nothing runs.
        let evil = user.home.appendingPathComponent("evil").path
        try FileManager.default.copyItem(atPath: dir, toPath: evil)
        let quoted = String(decoding: try JSONEncoder().encode(Self.hostile), as: UTF8.self)
        for name in ["events.jsonl", "summary.json"] {
            var text = try String(contentsOfFile: evil + "/" + name, encoding: .utf8)
            for key in ["\"name\":\"Bob\"", "\"room\":\"review\"", "\"message\":\"the picture is attached\""] {
                let k = String(key.prefix { $0 != ":" })
                text = text.replacingOccurrences(of: key, with: "\(k):\(quoted)").replacingOccurrences(of: key.replacingOccurrences(of: ":", with: " : "), with: "\(k) : \(quoted)")
            }
            try text.write(toFile: evil + "/" + name, atomically: true, encoding: .utf8)
        }
        try await user.expect(0, ["report", evil])
        let page = try String(contentsOfFile: evil + "/report.html", encoding: .utf8)
        #expect(page.contains("&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;"), "the hostile text is on the page, as text")
        let e = try await Self.check(folder: evil)
        #expect(!e.pwned && e.imgX == 0, "injected code ran")
        #expect(e.errors.isEmpty && e.violations.isEmpty, "\(e.errors) \(e.violations)")

        // A screenshot for people to look at (kept when BEDRUD_REPORT_SCREENSHOT names a file).
        if let shot = ProcessInfo.processInfo.environment["BEDRUD_REPORT_SCREENSHOT"], let browser = Self.chromium {
            let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: profile) }
            _ = try await offPool {
                try Subprocess.run(URL(fileURLWithPath: browser), ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--user-data-dir=\(profile.path)", "--window-size=1280,1500", "--virtual-time-budget=5000",
                    "--screenshot=\(shot)", "file://" + dir + "/report.html"], environment: ["HOME": profile.path], timeout: 90)
            }
        }
    }
}

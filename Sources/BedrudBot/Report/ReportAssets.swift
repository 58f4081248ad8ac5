/// The report page's fixed style sheet, SVG patterns and script (no remote text in here).
///
/// Colours are the Okabe–Ito palette (distinguishable with the common colour-vision
/// deficiencies), and every gap cause also has its own pattern, so none is told apart by
/// colour alone. Light and dark schemes follow `prefers-color-scheme`.
enum ReportAssets {
    static let css = """
        :root { --bg:#ffffff; --fg:#1b1b1b; --muted:#5c5c5c; --lane:#f3f3f3; --presence:#dcdcdc; --grid:#c8c8c8;
          --turn:#0072B2; --level:#009E73; --mute:#6e6e6e; --loss:#E69F00; --reconnect:#D55E00; --nopackets:#CC79A7;
          --writeerr:#1b1b1b; --outage:#D55E00; --chat:#0072B2; --reaction:#F0E442; --moderation:#D55E00; --poll:#CC79A7;
          --link:#005a9c; --bad:#b00020; --ok:#006b3c; color-scheme: light dark; }
        @media (prefers-color-scheme: dark) {
          :root { --bg:#121212; --fg:#e8e8e8; --muted:#a8a8a8; --lane:#1e1e1e; --presence:#3a3a3a; --grid:#444;
            --turn:#56B4E9; --level:#2fbf8f; --mute:#b0b0b0; --writeerr:#e8e8e8; --chat:#56B4E9; --link:#7cc0ff; --bad:#ff7b8a; --ok:#6fdc9c; }
        }
        * { box-sizing: border-box; }
        body { margin:0; background:var(--bg); color:var(--fg); font:15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
        main { max-width:1240px; margin:0 auto; padding:16px 20px 48px; }
        a { color:var(--link); }
        .skip { position:absolute; left:-9999px; } .skip:focus { left:8px; top:8px; background:var(--bg); padding:4px 8px; z-index:2; }
        h1 { font-size:1.6em; margin:8px 0 4px; overflow-wrap:anywhere; } h2 { font-size:1.2em; margin:28px 0 8px; border-bottom:1px solid var(--grid); }
        h3 { font-size:1em; margin:16px 0 6px; }
        .facts { display:grid; grid-template-columns:repeat(auto-fill, minmax(380px, 1fr)); gap:4px 24px; margin:8px 0; }
        .facts div { display:flex; gap:8px; } .facts dt { color:var(--muted); min-width:7.5em; flex:none; } .facts dd { margin:0; overflow-wrap:break-word; min-width:0; }
        table { border-collapse:collapse; width:100%; font-size:0.93em; margin:6px 0; }
        th, td { text-align:left; padding:3px 8px; border-bottom:1px solid var(--grid); vertical-align:top; overflow-wrap:break-word; }
        thead th { color:var(--muted); font-weight:600; white-space:nowrap; }
        .ok { color:var(--ok); } .bad { color:var(--bad); }
        .problems { border:2px solid var(--bad); padding:6px 12px; border-radius:6px; margin:10px 0; }
        .problems ul { margin:4px 0; }
        .controls { display:flex; gap:12px; align-items:center; flex-wrap:wrap; margin:4px 0 8px; }
        button { font:inherit; padding:4px 14px; border-radius:6px; border:1px solid var(--muted); background:var(--lane); color:var(--fg); cursor:pointer; }
        button:focus-visible, svg#timeline:focus-visible, .marker:focus-visible { outline:3px solid var(--turn); outline-offset:2px; }
        #position { font-variant-numeric:tabular-nums; min-width:9em; } .hint { color:var(--muted); font-size:0.88em; }
        .legend { list-style:none; padding:0; margin:6px 0 10px; display:flex; flex-wrap:wrap; gap:4px 16px; font-size:0.88em; }
        .legend li { display:flex; align-items:center; gap:6px; } .legend svg { flex:none; }
        .timeline-wrap { position:relative; }
        svg#timeline { width:100%; height:auto; display:block; cursor:crosshair; font-size:12px; }
        svg text { fill:var(--fg); } .axis text { fill:var(--muted); font-variant-numeric:tabular-nums; } .axis-title { font-style:italic; }
        .tick { stroke:var(--grid); stroke-width:1; } .lane-bg { fill:var(--lane); }
        .lane-name { font-weight:600; } .lane-file { fill:var(--muted); font-size:11px; }
        .room .lane-bg { fill:var(--presence); fill-opacity:0.55; }
        rect.presence { fill:var(--presence); }
        rect.turn { fill:var(--turn); }
        rect.mute { fill:url(#p-mute); stroke:var(--mute); stroke-width:1; }
        rect.outage { fill:url(#p-outage); stroke:var(--outage); stroke-width:1.5; }
        rect.gap-loss { fill:url(#p-loss); stroke:var(--loss); stroke-width:1.5; }
        rect.gap-reconnect { fill:url(#p-reconnect); stroke:var(--reconnect); stroke-width:1.5; }
        rect.gap-nopackets { fill:url(#p-nopackets); stroke:var(--nopackets); stroke-width:1.5; }
        rect.gap-write-error { fill:url(#p-writeerr); stroke:var(--writeerr); stroke-width:1.5; }
        rect.gap-other { fill:var(--mute); fill-opacity:0.5; }
        path.level { fill:var(--level); fill-opacity:0.55; stroke:none; }
        .mk-chat { fill:var(--chat); stroke:var(--bg); stroke-width:1.5; } .mk-reaction { fill:var(--reaction); stroke:var(--fg); stroke-width:1; }
        .mk-moderation { fill:var(--moderation); stroke:var(--bg); stroke-width:1; } .mk-poll { fill:var(--poll); stroke:var(--bg); stroke-width:1; }
        .mk-event { fill:var(--bg); stroke:var(--fg); stroke-width:1.5; }
        .marker { cursor:help; }
        #playhead { stroke:var(--fg); stroke-width:2; pointer-events:none; }
        #tip { position:absolute; max-width:420px; background:var(--fg); color:var(--bg); padding:4px 8px; border-radius:4px; font-size:0.88em;
          pointer-events:none; overflow-wrap:anywhere; z-index:3; }
        .players { display:grid; grid-template-columns:repeat(auto-fill, minmax(300px, 1fr)); gap:8px 16px; }
        .player { margin:0; } .player audio { width:100%; } .player .file { color:var(--muted); font-size:0.85em; }
        .chat { list-style:none; padding:0; } .chat > li { padding:3px 0; border-bottom:1px solid var(--grid); overflow-wrap:anywhere; }
        .when { color:var(--muted); font-variant-numeric:tabular-nums; } .msg { white-space:pre-wrap; }
        .attachments { list-style:none; padding:4px 0 0 0; } .attachments img { max-width:320px; max-height:240px; border:1px solid var(--grid); }
        .mime { color:var(--muted); font-size:0.85em; }
        details summary { cursor:pointer; }

        """

    /// Fill patterns, one per span kind that needs telling apart without colour.
    static let svgDefs = """
        <defs>
        <pattern id="p-mute" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" style="stroke:var(--mute);stroke-width:2"/></pattern>
        <pattern id="p-loss" width="5" height="5" patternUnits="userSpaceOnUse"><circle cx="2.5" cy="2.5" r="1.3" style="fill:var(--loss)"/></pattern>
        <pattern id="p-reconnect" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><line x1="0" y1="0" x2="0" y2="6" style="stroke:var(--reconnect);stroke-width:3"/></pattern>
        <pattern id="p-outage" width="8" height="8" patternUnits="userSpaceOnUse"><path d="M0 0 L8 8 M8 0 L0 8" style="stroke:var(--outage);stroke-width:1.5"/></pattern>
        <pattern id="p-nopackets" width="6" height="6" patternUnits="userSpaceOnUse"><line x1="0" y1="3" x2="6" y2="3" style="stroke:var(--nopackets);stroke-width:2"/></pattern>
        <pattern id="p-writeerr" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M3 0 V6 M0 3 H6" style="stroke:var(--writeerr);stroke-width:1.5"/></pattern>
        </defs>

        """

    /// Click or keys to seek every player, the moving play line, marker tips.
    static let script = """
        (function () {
          "use strict";
          var data = JSON.parse(document.getElementById("report-data").textContent);
          var svg = document.getElementById("timeline");
          if (!svg) return;
          var line = document.getElementById("playhead");
          var pos = document.getElementById("position");
          var tip = document.getElementById("tip");
          var playButton = document.getElementById("play");
          var players = Array.prototype.slice.call(document.querySelectorAll("audio[data-start]"));
          var D = Math.max(1, data.duration_ms), L = data.plot_left, P = data.plot_width;
          var current = 0;
          function clock(ms) {
            var s = Math.floor(Math.max(0, ms) / 1000), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
            return (h > 0 ? h + ":" + (m < 10 ? "0" : "") + m : m) + ":" + (r < 10 ? "0" : "") + r;
          }
          function wall(ms) {
            if (data.start_unix_ms == null) return "";
            var t = new Date(data.start_unix_ms + ms + data.utc_offset_seconds * 1000);
            return " (" + t.toISOString().substr(11, 8) + ")";
          }
          function show(ms) {
            current = Math.max(0, Math.min(D, ms));
            var x = L + current / D * P;
            line.setAttribute("x1", x); line.setAttribute("x2", x); line.setAttribute("visibility", "visible");
            var text = "+" + clock(current) + wall(current);
            pos.textContent = text;
            svg.setAttribute("aria-valuenow", String(Math.round(current / 1000)));
            svg.setAttribute("aria-valuetext", text);
          }
          function seek(ms) {
            players.forEach(function (a) {
              var t = (ms - Number(a.dataset.start)) / 1000;
              var end = isFinite(a.duration) ? a.duration : t;
              try { a.currentTime = Math.max(0, Math.min(t, end)); } catch (e) { /* not loaded yet */ }
            });
            show(ms);
          }
          svg.addEventListener("click", function (ev) {
            var m = svg.getScreenCTM();
            if (!m) return;
            var p = svg.createSVGPoint(); p.x = ev.clientX; p.y = ev.clientY;
            var u = p.matrixTransform(m.inverse());
            seek((u.x - L) / P * D);
          });
          svg.addEventListener("keydown", function (ev) {
            var step = { ArrowLeft: -5000, ArrowRight: 5000, PageDown: 60000, PageUp: -60000 }[ev.key];
            if (step !== undefined) seek(current + step);
            else if (ev.key === "Home") seek(0);
            else if (ev.key === "End") seek(D);
            else if (ev.key === " " || ev.key === "Enter") { toggle(); } else return;
            ev.preventDefault();
          });
          var main = players[0];
          function toggle() {
            if (!main) return;
            if (main.paused) { seek(current); main.play().catch(function () {}); } else { main.pause(); }
          }
          if (playButton) {
            if (!main) playButton.disabled = true;
            playButton.addEventListener("click", toggle);
          }
          function follow() {
            var playing = players.filter(function (a) { return !a.paused; })[0];
            if (playing) { show(Number(playing.dataset.start) + playing.currentTime * 1000); requestAnimationFrame(follow); }
          }
          players.forEach(function (a) {
            a.addEventListener("play", function () {
              if (a === main && playButton) { playButton.textContent = "❚❚ Pause"; playButton.setAttribute("aria-pressed", "true"); }
              requestAnimationFrame(follow);
            });
            a.addEventListener("pause", function () {
              if (a === main && playButton) { playButton.textContent = "▶ Play"; playButton.setAttribute("aria-pressed", "false"); }
            });
            a.addEventListener("seeked", function () { if (!a.paused) show(Number(a.dataset.start) + a.currentTime * 1000); });
          });
          function showTip(ev) {
            var g = ev.currentTarget, r = g.getBoundingClientRect(), w = svg.parentNode.getBoundingClientRect();
            tip.textContent = g.getAttribute("aria-label");
            tip.hidden = false;
            tip.style.left = Math.max(0, Math.min(r.left - w.left, w.width - 420)) + "px";
            tip.style.top = (r.bottom - w.top + 4) + "px";
          }
          function hideTip() { tip.hidden = true; }
          Array.prototype.forEach.call(svg.querySelectorAll(".marker"), function (g) {
            g.addEventListener("mouseenter", showTip); g.addEventListener("focus", showTip);
            g.addEventListener("mouseleave", hideTip); g.addEventListener("blur", hideTip);
            g.addEventListener("click", function (ev) { ev.stopPropagation(); seek(Number(g.dataset.offset)); });
          });
        })();

        """
}

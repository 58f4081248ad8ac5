import Foundation
import Testing
import TestSupport

/// `bedrud-bot play` end to end on the forwarding devserver: an Ogg Opus file goes out
/// packet for packet (the server logs exactly the file's packets at the file's sample
/// offsets, and a second bot's recording holds them), and a WAV played with --loop keeps
/// its RTP timestamps on the wall clock.
@Suite struct CLIPlayTests {
    static let python = Repo.root.appendingPathComponent(".venv/bin/python")

    /// The track the participant named `name` publishes in `room`, once it shows up.
    /// The SID of `name`'s first track in `room`, once the devserver lists it (throws after `seconds`).
    static func trackSID(_ server: DevServer, room: String, name: String, within seconds: Double = 30) async throws -> String {
        // The probe's type is spelled out: inferred from an optional result, `waitFor` would
        // wait for a `String?` and return the first nil at once.
        try await waitFor("\(name)'s track in \(room)", timeout: seconds, every: 0.1) { () throws -> String? in
            let state = try server.dev("GET", "/_dev/state") as? [String: Any] ?? [:]
            let rooms = state["rooms"] as? [[String: Any]] ?? []
            let people = rooms.first { $0["name"] as? String == room }?["participants"] as? [[String: Any]] ?? []
            return (people.first { $0["name"] as? String == name }?["tracks"] as? [[String: Any]])?.first?["sid"] as? String
        }
    }

    static func runPython(_ script: String, _ args: [String]) async throws -> [String: Any] {
        let r = try await offPool { try Subprocess.run(python, ["-c", script] + args, timeout: 60) }
        let line = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "python said: \(r.stdout) \(r.stderr)")
    }

    /// Packets of the file (demuxed by PyAV, independent of our reader) against the packets
    /// the server received and the ones a recording holds.
    static let comparePackets = """
        import sys, json, base64, urllib.request, av
        src, url, rec = sys.argv[1:4]
        def packets(path):
            c = av.open(path); s = c.streams.audio[0]
            return [(bytes(p), p.pts) for p in c.demux(s) if p.size > 0]
        f = packets(src); fb = [b for b, _ in f]
        log = json.load(urllib.request.urlopen(url))["packets"]
        sp = [base64.b64decode(p["payload"]) for p in log]; sts = [p["ts"] for p in log]
        res = {"file": len(f), "server": len(sp), "serverExact": sp == fb,
               "timestampsMatch": [(t - sts[0]) % 2**32 for t in sts] == [pts - f[0][1] for _, pts in f]}
        rb = [b for b, _ in packets(rec)]
        res["recorded"] = len(rb)
        j = next((i for i, b in enumerate(rb) if b in fb), None)
        if j is not None:
            k = fb.index(rb[j]); n = 0
            while j + n < len(rb) and k + n < len(fb) and rb[j + n] == fb[k + n]: n += 1
            res["skipped"], res["run"] = k, n
        print(json.dumps(res))
        """

    /// Speech (espeak-ng) encoded by opusenc (opus-tools): a real encoder's Ogg Opus file,
    /// with varying packet sizes, made by other tools than ours.
    static func speechOpus(in dir: URL) async throws -> String {
        let wav = dir.appendingPathComponent("speech.wav").path, opus = dir.appendingPathComponent("speech.opus").path
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let text = "This is bedrud bot playing an Ogg Opus file, packet for packet, without encoding it again."
        let e = try await offPool { try Subprocess.run(URL(fileURLWithPath: "/usr/bin/espeak-ng"), ["-w", wav, text], timeout: 30) }
        #expect(e.exitCode == 0, "\(e.stderr)")
        let o = try await offPool { try Subprocess.run(URL(fileURLWithPath: "/usr/bin/opusenc"), ["--quiet", "--bitrate", "24", wav, opus], timeout: 30) }
        #expect(o.exitCode == 0, "\(o.stderr)")
        return opus
    }

    @Test func anOggOpusFileGoesOutAsItIsAndIsRecorded() async throws {
        let server = try await DevServer.start(["--seed-room", "radio"])
        let listener = try CLIUser()
        let player = try CLIUser()
        let file = try await Self.speechOpus(in: player.home.appendingPathComponent("media"))
        let out = listener.home.appendingPathComponent("rec").path
        let link = server.baseURL + "/m/radio"
        let recorder = try listener.start(["join", link, "--record", "--output", out, "--guest-name", "Listener", "--no-mix"])
        try await server.waitForParticipants(in: "radio")
        async let played = player.run(["play", link, file, "--guest-name", "Player", "-q"], timeout: 60)
        let sid = try await Self.trackSID(server, room: "radio", name: "Player")
        let p = try await played
        #expect(p.exitCode == 0, "\(p.stderr)")
        #expect(p.stdout.isEmpty && p.stderr.isEmpty, "-q prints nothing on success: \(p.stdout) \(p.stderr)")
        recorder.signal(SIGINT)
        let end = await recorder.exit(timeout: 30)
        #expect(end?.code == 0, "\(recorder.stderr)")
        let files = FileManager.default.enumerator(atPath: out)?.compactMap { $0 as? String } ?? []
        let rec = try #require(files.first { $0.hasSuffix("Player.opus") }, "no Player.opus in \(files)")
        let r = try await Self.runPython(Self.comparePackets, [file, server.baseURL + "/_dev/rooms/radio/packets/" + sid, out + "/" + rec])
        print("play an Ogg Opus file: \(r)")
        let count = try #require(r["file"] as? Int)
        #expect(count > 200, "\(r)")
        // Byte for byte, at the file's own sample offsets.
        #expect(r["server"] as? Int == count, "\(r)")
        #expect(r["serverExact"] as? Bool == true, "\(r)")
        #expect(r["timestampsMatch"] as? Bool == true, "\(r)")
        // The recording: the file's packets from where forwarding to the listener began
        // (the first few may go out before the server forwards), to the end, unchanged.
        let skipped = try #require(r["skipped"] as? Int, "the recording holds none of the file's packets: \(r)")
        #expect(skipped <= 10, "\(r)")
        #expect(r["run"] as? Int == count - skipped, "\(r)")
    }

    /// A 16-bit stereo WAV at 44.1 kHz (resampled to 48 kHz by `play`): 1.5 s of two tones.
    static func stereoWAV(_ path: String, seconds: Double = 1.5) throws {
        let rate = 44_100, frames = Int(seconds * Double(rate))
        var b: [UInt8] = []
        func u32(_ v: Int) { b += [UInt8(v & 255), UInt8(v >> 8 & 255), UInt8(v >> 16 & 255), UInt8(v >> 24 & 255)] }
        func u16(_ v: Int) { b += [UInt8(v & 255), UInt8(v >> 8 & 255)] }
        b += Array("RIFF".utf8); u32(36 + frames * 4); b += Array("WAVEfmt ".utf8)
        u32(16); u16(1); u16(2); u32(rate); u32(rate * 4); u16(4); u16(16)
        b += Array("data".utf8); u32(frames * 4)
        for i in 0..<frames {
            let t = Double(i) / Double(rate)
            u16(Int(Int16(9000 * sin(2 * .pi * 330 * t))) & 0xFFFF)
            u16(Int(Int16(9000 * sin(2 * .pi * 550 * t))) & 0xFFFF)
        }
        try Data(b).write(to: URL(fileURLWithPath: path))
    }

    /// Arrival time at the server against RTP time: how far the two drift apart, from the
    /// earliest packets of the first and the last second (the least-delayed ones, so the
    /// machine's scheduling delays do not count as drift).
    static let driftScript = """
        import sys, json, urllib.request
        log = json.load(urllib.request.urlopen(sys.argv[1]))["packets"]
        ts0 = log[0]["ts"]; t0 = log[0]["t"]
        rtp = [((p["ts"] - ts0) % 2**32) / 48000 for p in log]
        off = [p["t"] - t0 - r for p, r in zip(log, rtp)]
        first = min(o for o, r in zip(off, rtp) if r < 1); last = min(o for o, r in zip(off, rtp) if r > rtp[-1] - 1)
        steps = sorted({(log[i + 1]["ts"] - log[i]["ts"]) % 2**32 for i in range(len(log) - 1)})
        print(json.dumps({"packets": len(log), "rtpSeconds": rtp[-1], "wallSeconds": log[-1]["t"] - t0,
                          "driftMs": (last - first) * 1000, "maxLateMs": (max(off) - min(off)) * 1000, "steps": steps}))
        """

    @Test func aLoopedWAVKeepsItsTimestampsOnTheWallClock() async throws {
        let server = try await DevServer.start(["--seed-room", "radio"])
        let player = try CLIUser()
        let wav = player.home.appendingPathComponent("two-tones.wav").path
        try Self.stereoWAV(wav)
        let link = server.baseURL + "/m/radio"
        async let played = player.run(["play", link, wav, "--loop", "--duration", "8s", "--guest-name", "Looper"], timeout: 60)
        let sid = try await Self.trackSID(server, room: "radio", name: "Looper")
        let p = try await played
        #expect(p.exitCode == 0, "\(p.stderr)")
        #expect(p.stderr.contains("Played 0:08 of two-tones.wav"), "\(p.stderr)")
        let r = try await Self.runPython(Self.driftScript, [server.baseURL + "/_dev/rooms/radio/packets/" + sid])
        print("play --loop WAV, 8 s at the server: \(r)")
        // 8 s of 20 ms frames, every one of them, each 960 samples after the one before.
        #expect(r["packets"] as? Int == 400, "\(r)")
        #expect(r["steps"] as? [Int] == [960], "\(r)")
        let drift = try #require(r["driftMs"] as? Double)
        #expect(abs(drift) < 20, "RTP time and arrival time drifted \(drift) ms apart over 8 s: \(r)")
    }

    @Test func sigusr1MutesAndUnmutesAndSIGTERMStopsCleanly() async throws {
        let server = try await DevServer.start(["--seed-room", "radio"])
        let player = try CLIUser()
        let child = try player.start(["play", server.baseURL + "/m/radio", "--tone", "440", "--guest-name", "Tone"])
        let sid = try await Self.trackSID(server, room: "radio", name: "Tone")
        func received() throws -> Int { try #require((try server.dev("GET", "/_dev/rooms/radio/packets/" + sid) as? [String: Any])?["received"] as? Int) }
        func mutedAtServer() throws -> Bool? {
            let state = try #require(try server.dev("GET", "/_dev/state") as? [String: Any])
            let people = (state["rooms"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "radio" }?["participants"] as? [[String: Any]] ?? []
            return (people.first { $0["name"] as? String == "Tone" }?["tracks"] as? [[String: Any]])?.first?["muted"] as? Bool
        }
        try await waitUntil("packets arrive", timeout: 10) { try received() > 10 }
        // SIGUSR1 mutes: the server marks the track muted and gets no more media ...
        child.signal(SIGUSR1)
        try await waitUntil("the server sees the track muted", timeout: 10) { try mutedAtServer() == true }
        try await Task.sleep(for: .milliseconds(200))  // packets sent before the mute, still on their way
        let atMute = try received()
        try await Task.sleep(for: .seconds(1))
        #expect(try received() == atMute, "media kept coming while muted")
        // ... and again unmutes: media flows again.
        child.signal(SIGUSR1)
        try await waitUntil("the server sees the track unmuted", timeout: 10) { try mutedAtServer() == false }
        try await waitUntil("media flows again", timeout: 10) { try received() > atMute + 10 }
        let sent = Date()
        child.signal(SIGTERM)
        let end = await child.exit(timeout: 15)
        #expect(end?.code == 0, "\(child.stderr)")
        #expect(Date().timeIntervalSince(sent) < 5)
        #expect(child.stderr.contains("stopped by a signal"), "\(child.stderr)")
        #expect(child.stderr.contains("Muted (SIGUSR1 again unmutes).") && child.stderr.contains("Unmuted."), "\(child.stderr)")
        try await waitUntil("the player left", timeout: 10) { try server.participants(in: "radio") == 0 }
    }

    @Test func whatCannotBePlayedIsRefusedBeforeJoining() async throws {
        let user = try CLIUser()
        let notAudio = try user.writeFile("notes.txt", "hello")
        var r = try await user.expect(2, ["play", "standup", notAudio])
        #expect(r.stderr.contains("neither an Ogg Opus file nor a WAV file"), "\(r.stderr)")
        r = try await user.expect(2, ["play", "standup", notAudio, "--tone", "440"])
        #expect(r.stderr.contains("give exactly one of FILE, --tone HZ or --speech TEXT"), "\(r.stderr)")
        let eightBit = user.home.appendingPathComponent("8bit.wav").path
        try Data(Array("RIFF".utf8) + [40, 0, 0, 0] + Array("WAVEfmt ".utf8) + [16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1F, 0, 0, 0x40, 0x1F, 0, 0, 1, 0, 8, 0]
                 + Array("data".utf8) + [4, 0, 0, 0, 1, 2, 3, 4]).write(to: URL(fileURLWithPath: eightBit))
        r = try await user.expect(2, ["play", "standup", eightBit])
        #expect(r.stderr.contains("unsupported WAV encoding (format tag 1, 8 bits)"), "\(r.stderr)")
        user.extraEnvironment["PATH"] = user.home.path  // no espeak-ng on it
        r = try await user.expect(3, ["play", "standup", "--speech", "hello"])
        #expect(r.stderr.contains("needs espeak-ng, which is not installed (Debian/Ubuntu: apt-get install espeak-ng)"), "\(r.stderr)")
    }
}

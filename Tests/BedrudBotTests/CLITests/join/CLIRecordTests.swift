import Foundation
import Testing
import TestSupport

/// `join --record` as a user runs it: the files a recording leaves, checked with
/// independent tools (opusinfo from opus-tools) as well as our own verify.
@Suite(.serialized) struct CLIRecordTests {
    func opusinfo(_ path: String) throws -> ProcessResult {
        try Subprocess.run(URL(fileURLWithPath: "/usr/bin/opusinfo"), [path], timeout: 30)
    }

    /// "Playback length: 0m:25.913s" → 25.913
    func playbackSeconds(_ info: String) -> Double? {
        guard let line = info.split(separator: "\n").first(where: { $0.contains("Playback length") }) else { return nil }
        let t = line.split(separator: ":").dropFirst().joined(separator: ":").trimmingCharacters(in: .whitespaces)  // "0m:25.913s"
        let parts = t.replacingOccurrences(of: "s", with: "").split(separator: "m:")
        guard parts.count == 2, let m = Double(parts[0]), let s = Double(parts[1]) else { return nil }
        return m * 60 + s
    }

    @Test func recordsATwoPersonStandup() async throws {
        let server = try await DevServer.start(scenario: "two-person-standup")
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let r = try await user.expect(0, ["join", server.baseURL + "/m/standup", "--record", "--output", out, "--alone-timeout", "2s"], timeout: 90)
        #expect(r.stderr.contains("everyone else left"), "\(r.stderr)")
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/standup")
        #expect(sessions.count == 1)
        let dir = out + "/standup/" + sessions[0]
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files == ["Alice Martin.opus", "Bob Chen.opus", "events.jsonl", "report.html", "room.opus", "summary.json", "transcript.vtt"], "\(files)")

        // Independent check: opusinfo accepts every file.
        var lengths: [String: Double] = [:]
        for f in files where f.hasSuffix(".opus") {
            let info = try opusinfo(dir + "/" + f)
            #expect(info.exitCode == 0, "\(f): \(info.stdout)\(info.stderr)")
            #expect(!info.stdout.lowercased().contains("warning") && !info.stderr.lowercased().contains("warning"), "\(f): \(info.stdout)")
            lengths[f] = playbackSeconds(info.stdout)
        }
        // Alice is there from the start to her leave at 26 s, Bob to 24 s; the room file
        // runs until the bot left, 2 s after the last person.
        let alice = try #require(lengths["Alice Martin.opus"]), bob = try #require(lengths["Bob Chen.opus"]), room = try #require(lengths["room.opus"])
        #expect(alice > 24 && alice < 28, "\(alice)")
        #expect(bob > 22 && bob < 26, "\(bob)")
        #expect(room > alice && room < alice + 6, "\(room)")
        let verify = try await user.expect(0, ["verify", dir + "/room.opus", dir + "/Alice Martin.opus", dir + "/Bob Chen.opus"])
        #expect(verify.stdout.contains("valid"))

        // The transcript: chat, who spoke, joins and leaves, with times; every line as the schema says.
        try await expectValidEvents(dir)
        let events = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
        let objects = events.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == events.count, "every line is one JSON object")
        #expect(objects.allSatisfy { $0["time"] is String && $0["offset_ms"] is Int && $0["type"] is String })
        let types = objects.map { $0["type"] as? String ?? "" }
        for t in ["session_started", "joined", "participant_joined", "speaking_turn", "chat", "participant_left", "file_finished", "session_ended"] {
            #expect(types.contains(t), "events.jsonl has no \(t)")
        }
        #expect(objects.contains { $0["type"] as? String == "chat" && $0["message"] as? String == "notes are in the wiki"
                && ($0["participant"] as? [String: Any])?["name"] as? String == "Bob Chen" })
        // Turns are written when they end, after later events: written_ms says when.
        let turns = objects.filter { $0["type"] as? String == "speaking_turn" }
        #expect(!turns.isEmpty && turns.allSatisfy { t in
            (t["participant"] as? [String: Any])?["identity"] is String && (t["written_ms"] as? Int ?? -1) >= (t["end_ms"] as? Int ?? .max)
        }, "\(turns)")
        let vtt = try String(contentsOfFile: dir + "/transcript.vtt", encoding: .utf8)
        #expect(vtt.hasPrefix("WEBVTT"))
        #expect(vtt.contains("<v Alice Martin>") && vtt.contains("<v Bob Chen>"))
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))) as? [String: Any]
        #expect(summary?["exit_code"] as? Int == 0)
        #expect((summary?["participants"] as? [[String: Any]])?.count == 2)
        // Both speakers left before the bot: their tracks keep their figures.
        let tracks = ((summary?["network"] as? [String: Any])?["tracks"] as? [[String: Any]]) ?? []
        #expect(Set(tracks.compactMap { $0["participant"] as? String }).count == 2, "\(tracks)")
        #expect(tracks.allSatisfy { ($0["packets"] as? Int ?? 0) > 500 && $0["nacked"] is Int && $0["recovered"] is Int }, "\(tracks)")
    }

    @Test func killMinus9LeavesRepairableFiles() async throws {
        let server = try await DevServer.start(scenario: "two-person-standup")
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let p = try user.start(["join", server.baseURL + "/m/standup", "--record", "--output", out])
        // Wait until the three files exist and each has more than 4 s of audio on disk.
        let (dir, parts) = try await waitFor("three .opus.part files with 4 s of audio each", timeout: 60) { () -> (String, [String])? in
            guard let s = try? FileManager.default.contentsOfDirectory(atPath: out + "/standup").first else { return nil }
            let dir = out + "/standup/" + s
            let parts = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".opus.part") }
            let long = parts.filter { (Self.lastGranule(dir + "/" + $0) ?? 0) > 312 + 4 * 48_000 }
            return parts.count == 3 && long.count == 3 ? (dir, parts.sorted()) : nil
        }
        let killedAt = Date()
        p.stop(grace: 0)
        #expect(parts.count == 3, "\(parts)")
        #expect(FileManager.default.fileExists(atPath: dir + "/events.jsonl"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/summary.json") && !FileManager.default.fileExists(atPath: dir + "/transcript.vtt"))
        // One file by itself, then the whole session folder.
        let one = try await user.expect(0, ["repair", dir + "/" + parts[0]])
        #expect(one.stdout.contains(" -> ") && one.stdout.contains("end of stream marked"), "\(one.stdout)")
        let r = try await user.expect(0, ["repair", dir])
        #expect(r.stdout.contains("transcript.vtt: rebuilt from events.jsonl") && r.stdout.contains("summary.json: rebuilt from events.jsonl"), "\(r.stdout)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files == ["Alice Martin.opus", "Bob Chen.opus", "events.jsonl", "report.html", "room.opus", "summary.json", "transcript.vtt"], "\(files)")
        for part in parts {
            let final = dir + "/" + part.replacingOccurrences(of: ".part", with: "")
            let info = try opusinfo(final)
            #expect(info.exitCode == 0, "\(info.stdout)")
            #expect((playbackSeconds(info.stdout) ?? 0) > 3, "\(part) kept the audio before the kill: \(info.stdout)")
        }
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))) as? [String: Any]
        #expect(summary?["end_reason"] as? String == "crashed")
        #expect(summary?["room"] as? String == "standup")
        let people = (summary?["participants"] as? [[String: Any]] ?? []).compactMap { $0["file"] as? String }.sorted()
        #expect(people == ["Alice Martin.opus", "Bob Chen.opus"], "\(String(describing: summary))")
        // The duration and `ended` come from the files' end (the kill), not
        // the last event; what a crash makes unknowable is null, never left out.
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let started = try #require((summary?["started"] as? String).flatMap { iso.date(from: $0) })
        let ended = try #require((summary?["ended"] as? String).flatMap { iso.date(from: $0) })
        let duration = Double(summary?["duration_ms"] as? Int ?? 0) / 1000
        let lived = killedAt.timeIntervalSince(started)
        #expect(duration > lived - 1.5 && duration <= lived + 0.2, "duration \(duration) s, killed after \(lived) s")
        #expect(abs(ended.timeIntervalSince(started) - duration) < 0.01, "started \(started), ended \(ended), duration \(duration) s")
        #expect(ended.timeIntervalSince(killedAt) < 0.2, "ended \(ended), killed at \(killedAt)")
        for key in ["exit_code", "network", "storage", "on_finish"] { #expect(summary?.keys.contains(key) == true, "no \(key)") }
        #expect(summary?["exit_code"] is NSNull)
        for entry in summary?["participants"] as? [[String: Any]] ?? [] {
            for key in ["start_offset_ms", "packets", "lost", "speaking_ms"] { #expect(entry.keys.contains(key), "no \(key) in \(entry)") }
            #expect(entry["start_offset_ms"] as? Int != nil && entry["packets"] is NSNull)
        }
        let vtt = try String(contentsOfFile: dir + "/transcript.vtt", encoding: .utf8)
        #expect(vtt.hasPrefix("WEBVTT") && vtt.contains("<v Alice Martin>(speaking)"), "\(vtt)")
        // Repairing the finished session again changes nothing.
        let before = try files.map { try Data(contentsOf: URL(fileURLWithPath: dir + "/" + $0)) }
        let again = try await user.expect(0, ["repair", dir])
        #expect(again.stdout.contains("a finished session; nothing to repair"), "\(again.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == files)
        #expect(try files.map { try Data(contentsOf: URL(fileURLWithPath: dir + "/" + $0)) } == before)
        // The event transcript was flushed line by line: it is intact up to the kill.
        let events = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(events.count > 5)
        #expect(events.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
        try await expectValidEvents(dir)
    }

    /// The granule position (48 kHz samples, pre-skip included) of the last page of an Ogg
    /// file that ends a packet (RFC 3533 §6: bytes 6–13 of the page header, little endian;
    /// -1 on a page that ends none); nil when the file holds no such page yet.
    static func lastGranule(_ path: String) -> Int64? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let bytes = [UInt8](data)
        var i = bytes.count - 27
        while i >= 0 {
            if bytes[i] == 0x4F, bytes[i + 1] == 0x67, bytes[i + 2] == 0x67, bytes[i + 3] == 0x53 {
                let granule = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[i + 6 + $1]) << (8 * UInt64($1)) }
                if granule != UInt64.max { return Int64(bitPattern: granule) }
            }
            i -= 1
        }
        return nil
    }
}

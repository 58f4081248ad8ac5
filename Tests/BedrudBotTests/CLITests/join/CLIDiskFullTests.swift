import Foundation
import Testing
import TestSupport

/// A small tmpfs of its own (we run as root in CI). Unmounted when released.
final class Tmpfs: @unchecked Sendable {
    // @unchecked: used by one test at a time; `path` is immutable.
    let path: String
    private var mounted = true

    /// Whether this machine lets the tests mount a tmpfs (root, or the capability).
    static let canMount: Bool = {
        guard let t = try? Tmpfs(kilobytes: 64) else { return false }
        t.unmount()
        return true
    }()

    init(kilobytes: Int) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("bedrud-tmpfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let r = try Subprocess.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path], timeout: 10)
        guard r.exitCode == 0 else {
            mounted = false
            try? FileManager.default.removeItem(atPath: path)
            throw TestSupportError("cannot mount a tmpfs: \(r.stderr)")
        }
    }

    deinit { unmount() }

    func unmount() {
        guard mounted else { return }
        mounted = false
        _ = try? Subprocess.run(URL(fileURLWithPath: "/bin/umount"), [path], timeout: 10)
        try? FileManager.default.removeItem(atPath: path)
    }

    var freeBytes: Int {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return 0 }
        return Int(s.f_bavail) * Int(s.f_frsize)
    }

    /// Fills the filesystem with `name` until only `leaving` bytes are free.
    @discardableResult
    func fill(_ name: String = "filler", leaving: Int) throws -> String {
        let file = path + "/" + name
        let size = max(0, freeBytes - leaving) / 4096 * 4096
        guard FileManager.default.createFile(atPath: file, contents: Data(count: size)) else { throw TestSupportError("cannot write \(file)") }
        return file
    }
}

/// A full disk. Before: the bot recorded on, exited 0, renamed broken files
/// to `.opus`, left half a line in `events.jsonl` and an empty `summary.json.part`; when
/// space came back, the audio after it played 5 s early. Now: a full disk stops the
/// session with exit 15 and every file it leaves is valid or `.part`; space that comes
/// back in time costs a `write_error` gap, with the audio after it at its own time.
@Suite(.serialized, .enabled(if: Tmpfs.canMount, "needs root (or CAP_SYS_ADMIN) to mount a tmpfs"))
struct CLIDiskFullTests {
    /// 0.3 s tones at irregular, known times (1.3 s and 1.6 s apart), so a shifted stretch
    /// of audio cannot line up with the pattern again.
    static let toneTimes: [Double] = {
        var t = 1.0, out: [Double] = [], i = 0
        while t < 44 {
            out.append(t)
            t += i % 2 == 0 ? 1.3 : 1.6
            i += 1
        }
        return out
    }()

    static var scenario: String {
        var text = "room tones public\nstart first-join\nat 0s join alice name=\"Alice\"\n"
        for t in toneTimes { text += String(format: "at %.1fs tone alice 440Hz 0.3s amplitude=0.3\n", t) }
        return text + "at 45s leave alice\n"
    }

    /// Room the bot needs before the disk is full: its reserve (128 KiB) and a few seconds of recording.
    static let headroom = (128 << 10) + (40 << 10)

    static func session(_ root: String) throws -> String {
        let sessions = try FileManager.default.contentsOfDirectory(atPath: root + "/tones")
        #expect(sessions.count == 1, "\(sessions)")
        return root + "/tones/" + (sessions.first ?? "")
    }

    static func events(_ dir: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8)
        #expect(text.hasSuffix("\n"), "events.jsonl ends with a whole line")
        let lines = text.split(separator: "\n")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "every line of events.jsonl is one JSON object")
        return objects
    }

    @Test func aFullDiskStopsWithExit15AndLeavesOnlyValidFiles() async throws {
        let server = try await DevServer.start(scenarioText: Self.scenario)
        let disk = try Tmpfs(kilobytes: 300)
        defer { disk.unmount() }
        try disk.fill(leaving: Self.headroom)
        let user = try CLIUser()
        // The tmpfs is far below the default record.min_free: this test is about the disk filling up while recording.
        user.extraEnvironment["BEDRUD_BOT_RECORD_MIN_FREE"] = "0"
        let r = try await user.expect(15, ["join", server.baseURL + "/m/tones", "--record", "--output", disk.path], timeout: 120)
        let lines = r.stderr.split(separator: "\n").filter { $0.contains("the disk is full") }
        #expect(lines.count == 1, "one clear line: \(r.stderr)")
        #expect(lines.first?.contains("No space left on device") == true)

        let dir = try Self.session(disk.path)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(!files.contains(".disk-reserve"))
        let finished = files.filter { $0.hasSuffix(".opus") }
        #expect(finished == ["Alice.opus", "room.opus"], "the reserve finishes both files: \(files)")
        for f in finished {
            let v = try await user.expect(0, ["verify", dir + "/" + f])
            #expect(v.stdout.contains("end of stream marked"), "\(f): \(v.stdout)")
        }
        let events = try Self.events(dir)
        let last = try #require(events.last)
        #expect(last["type"] as? String == "session_ended" && last["exit_code"] as? Int == 15, "\(last)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))) as? [String: Any])
        #expect(summary["exit_code"] as? Int == 15)
        #expect((summary["message"] as? String)?.contains("the disk is full") == true)
        let storage = try #require(summary["storage"] as? [String: Any])
        #expect(storage["disk_full"] as? Bool == true && storage["unfinished_files"] as? Int == 0, "\(storage)")
        #expect(FileManager.default.fileExists(atPath: dir + "/transcript.vtt"))
    }

    /// The lifecycle's disk-low rule on a real small disk: the session stops *before* the
    /// disk is full (free space below `record.min_free`, checked every 2 s), with exit 15,
    /// `end_reason` `disk_low`, and every file finished and valid (no write ever failed).
    @Test func lowFreeSpaceStopsCleanlyBeforeTheDiskIsFull() async throws {
        let server = try await DevServer.start(scenarioText: Self.scenario)
        let disk = try Tmpfs(kilobytes: 1024)
        defer { disk.unmount() }
        // 128 KiB go to the session's .disk-reserve; min_free is 600 KiB: the bot joins
        // with about 670 KiB free and stops once recording has taken the rest of the margin.
        try disk.fill(leaving: 800 << 10)
        let user = try CLIUser()
        user.extraEnvironment["BEDRUD_BOT_RECORD_MIN_FREE"] = "600KiB"
        let r = try await user.expect(15, ["join", server.baseURL + "/m/tones", "--record", "--output", disk.path, "--duration", "60s"],
                                      timeout: 120)
        #expect(r.stderr.contains("below record.min_free (600 KiB)"), "\(r.stderr)")
        #expect(!r.stderr.contains("No space left"), "stopped before the disk was full: \(r.stderr)")
        #expect(disk.freeBytes > 128 << 10, "room left on the disk: \(disk.freeBytes)")
        let dir = try Self.session(disk.path)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files.filter { $0.hasSuffix(".opus") } == ["Alice.opus", "room.opus"], "\(files)")
        #expect(!files.contains { $0.hasSuffix(".part") }, "\(files)")
        for f in ["Alice.opus", "room.opus"] {
            let v = try await user.expect(0, ["verify", dir + "/" + f])
            #expect(v.stdout.contains("end of stream marked"), "\(f): \(v.stdout)")
        }
        let events = try Self.events(dir)
        let last = try #require(events.last)
        #expect(last["type"] as? String == "session_ended" && last["end_reason"] as? String == "disk_low", "\(last)")
        #expect(!events.contains { $0["type"] as? String == "gap" && $0["cause"] as? String == "write_error" })
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/summary.json"))) as? [String: Any])
        #expect(summary["end_reason"] as? String == "disk_low" && summary["exit_code"] as? Int == 15, "\(summary)")
        let alice = (summary["participants"] as? [[String: Any]])?.first
        #expect((alice?["duration_ms"] as? Int ?? 0) > 1000, "something was recorded before the stop: \(alice ?? [:])")
    }

    @Test func spaceThatComesBackCostsAGapAndTheAudioAfterItIsOnTime() async throws {
        let server = try await DevServer.start(scenarioText: Self.scenario)
        let disk = try Tmpfs(kilobytes: 2048)
        defer { disk.unmount() }
        let filler = try disk.fill(leaving: Self.headroom)
        let user = try CLIUser()
        // The tmpfs is far below the default record.min_free: this test is about the disk filling up while recording.
        user.extraEnvironment["BEDRUD_BOT_RECORD_MIN_FREE"] = "0"
        let bot = try user.start(["join", server.baseURL + "/m/tones", "--record", "--output", disk.path, "--duration", "30s"])
        try await bot.line(on: .stderr, timeout: 60, "the first failed write") { $0.contains("cannot write recording pages") }
        // The disk stays full for 5 s (longer than the 3 s of pages kept in memory), then
        // another program's file is deleted.
        try await Task.sleep(for: .seconds(5))
        unlink(filler)
        let end = await bot.exit(timeout: 60)
        #expect(end == .exited(0), "\(end.map { "\($0)" } ?? "still running"): \(bot.stderr)")
        let serverLog = server.log

        let dir = try Self.session(disk.path)
        var verified = ""
        for f in ["Alice.opus", "room.opus"] {
            let v = try await user.expect(0, ["verify", dir + "/" + f])
            #expect(v.stdout.contains("end of stream marked"), "\(f): \(v.stdout)")
            verified += v.stdout
        }
        let events = try Self.events(dir)
        let gaps = events.filter { $0["type"] as? String == "gap" && $0["cause"] as? String == "write_error" }
        let aliceGap = try #require(gaps.first { ($0["participant"] as? [String: Any])?["identity"] as? String == "alice" }, "a write_error gap in Alice's file: \(gaps)")
        let gapMs = try #require(aliceGap["duration_ms"] as? Int)
        #expect(gapMs >= 1000 && gapMs <= 5000, "\(gapMs)")
        let started = try #require(events.first { $0["type"] as? String == "file_started" && $0["output"] as? String == "Alice" })
        let fileStart = Double(try #require(started["offset_ms"] as? Int)) / 1000
        let gapEndInFile = Double(try #require(aliceGap["offset_ms"] as? Int) + gapMs) / 1000 - fileStart

        // Decode Alice's file and find the tone onsets: every one must sit on the scenario's
        // pattern (±40 ms), those after the gap included.
        let wav = user.home.path + "/alice.wav"  // not on the small tmpfs: 30 s of PCM would not fit
        let dec = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/opusdec"), ["--quiet", "--rate", "48000", dir + "/Alice.opus", wav], timeout: 60)
        #expect(dec.exitCode == 0, "\(dec.stderr)")
        let onsets = try Self.onsets(wav)
        let first = try #require(onsets.first)
        let t0 = Self.toneTimes[0]
        // A tone the gap's end cut in two shows its tail as a late "onset": not an onset.
        let whole = onsets.filter { $0 < gapEndInFile - 0.4 || $0 > gapEndInFile + 0.35 }
        let after = whole.filter { $0 > gapEndInFile }
        #expect(after.count >= 3, "tones after the gap (ends \(gapEndInFile) s): \(onsets)\n\(verified)\n\(events.filter { $0["type"] as? String == "gap" })\n\(serverLog.suffix(3000))")
        for o in whole {
            let off = Self.toneTimes.map { abs((o - first) - ($0 - t0)) }.min() ?? 99
            #expect(off <= 0.040, "onset at \(o) s in the file is \(Int(off * 1000)) ms off the pattern (gap ends at \(gapEndInFile) s): \(onsets)")
        }
    }

    /// Tone onsets (seconds from the file's start) in a 48 kHz 16-bit WAV: the first 2.5 ms
    /// window above a tenth of full scale after at least 200 ms below it.
    static func onsets(_ path: String) throws -> [Double] {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var at = 12
        var pcm = ArraySlice<UInt8>()
        var channels = 1
        while at + 8 <= data.count {
            let id = String(decoding: data[at..<at + 4], as: UTF8.self)
            let size = Int(data[at + 4]) | Int(data[at + 5]) << 8 | Int(data[at + 6]) << 16 | Int(data[at + 7]) << 24
            if id == "fmt " { channels = Int(data[at + 10]) }
            if id == "data" {
                pcm = data[(at + 8)..<min(data.count, at + 8 + size)]
                break
            }
            at += 8 + size + (size & 1)
        }
        let frames = pcm.count / (2 * channels)
        let base = pcm.startIndex
        let window = 120
        var loud: [Bool] = []
        var w = 0
        while (w + 1) * window <= frames {
            var peak = 0
            for i in (w * window)..<((w + 1) * window) {
                let o = base + i * 2 * channels
                let v = Int(Int16(bitPattern: UInt16(pcm[o]) | UInt16(pcm[o + 1]) << 8))
                peak = max(peak, abs(v))
            }
            loud.append(peak > 3277)
            w += 1
        }
        // A tone lasts 300 ms: a click (a concealed packet) is not one.
        var out: [Double] = []
        var quiet = 80
        for (i, l) in loud.enumerated() {
            if l {
                let next = loud[i..<min(loud.count, i + 40)]
                if quiet >= 80 && next.filter({ $0 }).count >= 30 { out.append(Double(i * window) / 48000) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return out
    }
}

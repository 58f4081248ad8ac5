import BedrudProtocol
import BedrudRuntime
import Foundation
import TestSupport
import Testing

import BedrudMedia

/// The media subcommands run as a user runs them: the built binary as a subprocess.
@Suite(.serialized) struct MediaCLITests {
    func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bedrud-media-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.path
    }

    @discardableResult
    func runTool(_ path: String, _ args: [String]) throws -> ProcessResult {
        let r = try Subprocess.run(URL(fileURLWithPath: path), args)
        guard r.exitCode == 0 else { throw TestSupportError("\(path) \(args) exited \(r.exitCode): \(r.stderr)") }
        return r
    }

    func opusencFile(seconds: String) throws -> String {
        let dir = try temporaryDirectory()
        let wav = dir + "/in.wav"
        try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-b", "16", "-c", "1", wav, "synth", seconds, "sine", "440"])
        let out = dir + "/tone.opus"
        try runTool("/usr/bin/opusenc", ["--quiet", wav, out])
        return out
    }

    @Test func verifyReportsValidFilesAndExitsZero() throws {
        let path = try opusencFile(seconds: "2")
        let r = try Subprocess.bot(["verify", path])
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\(path): valid"))
        #expect(r.stdout.contains("duration 2000 ms"))
        let j = try Subprocess.bot(["verify", "--json", path])
        let obj = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
        #expect(obj?["valid"] as? Bool == true)
        #expect(obj?["duration_ms"] as? Double == 2000)
    }

    @Test func verifyFlagsDamageWithExitCode11AndMissingFilesWith5() throws {
        let path = try opusencFile(seconds: "5")
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let r = try Subprocess.bot(["verify", path])
        #expect(r.exitCode == 13)
        #expect(r.stdout.contains("INVALID"))
        let missing = try Subprocess.bot(["verify", path + ".nope"])
        #expect(missing.exitCode == 5)
        #expect(missing.stderr.contains("Cannot open"))
        let usage = try Subprocess.bot(["verify"])
        #expect(usage.exitCode == 2)
    }

    /// Unknown values are `null`, not missing (docs/CLI.md): a file that is not Ogg at all, and
    /// an Ogg Opus stream whose two header pages (OpusHead, OpusTags) were cut off.
    @Test func verifyJSONWritesNullForHeadersAFileDoesNotHave() throws {
        let dir = try temporaryDirectory()
        let garbage = dir + "/garbage.opus"
        try Data("this is not a recording\n".utf8).write(to: URL(fileURLWithPath: garbage))
        let opus = Array(try Data(contentsOf: URL(fileURLWithPath: try opusencFile(seconds: "2"))))
        // Every page starts with "OggS"; the third one is the first audio page.
        let pages = opus.indices.dropLast(3).filter { Array(opus[$0..<$0 + 4]) == Array("OggS".utf8) }
        let headerless = dir + "/headerless.opus"
        try Data(opus[try #require(pages.dropFirst(2).first)...]).write(to: URL(fileURLWithPath: headerless))
        for path in [garbage, headerless] {
            let r = try Subprocess.bot(["verify", "--json", path])
            #expect(r.exitCode == 13, "\(path): \(r.stdout)\(r.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout)")
            #expect(object["file"] as? String == path && object["valid"] as? Bool == false)
            for key in ["channels", "pre_skip", "vendor", "tags"] {
                #expect(object[key] is NSNull, "\(path): \(key) in \(r.stdout)")
            }
        }
    }

    @Test func repairFinishesATruncatedPartFile() throws {
        let path = try opusencFile(seconds: "8")
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let part = path.replacingOccurrences(of: "tone.opus", with: "cut.opus.part")
        try Data(bytes.prefix(bytes.count / 2 + 17)).write(to: URL(fileURLWithPath: part))
        let r = try Subprocess.bot(["repair", part])
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(r.stdout.contains("end of stream marked"))
        let fixed = part.replacingOccurrences(of: ".part", with: "")
        #expect(FileManager.default.fileExists(atPath: fixed))
        #expect(!FileManager.default.fileExists(atPath: part))
        #expect(try Subprocess.bot(["verify", fixed]).exitCode == 0)
    }

    @Test func benchQuickPrintsEveryFigureWithRatiosLast() throws {
        // Small sizes: this checks the command, not the machine (docs/BENCHMARKS.md has the figures).
        let dir = try temporaryDirectory()
        try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-b", "16", "-c", "1", dir + "/s.wav", "synth", "2", "sine", "200"])
        let r = try Subprocess.bot(
            ["bench", "--tracks", "4", "--passthrough-tracks", "8", "--seconds", "3", "--no-alloc-probe", "--speech", dir + "/s.wav"], timeout: 300)
        #expect(r.stdout.hasPrefix("bedrud-bot media benchmark on s.wav"))
        #expect(r.exitCode == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        for tag in ["(a)", "(b)", "(c)", "(d)", "(e)", "(f)"] { #expect(lines.contains { $0.hasPrefix(tag) }, "missing \(tag)") }
        #expect(lines.last?.hasPrefix("ratios: ") == true)
        let bad = try Subprocess.bot(["bench", "--tracks", "zero"])
        #expect(bad.exitCode == 2)
        let notWav = try Subprocess.bot(["bench", "--speech", "/etc/hostname"])
        #expect(notWav.exitCode == 2)
    }

    /// kill -9 in the middle of a recording leaves .part files that repair turns into
    /// valid files holding all but about the last second.
    @Test func killNineThenRepairKeepsAllButTheLastSecond() async throws {
        let dir = try temporaryDirectory()
        let p = try ChildProcess(Repo.binary, ["dev-record", "--dir", dir, "--seconds", "120", "--tracks", "2"])
        // Wait (with a deadline) for the recording's start time, then for 4 s of session time.
        let started: UInt64 = try await waitFor("dev-record's start time", timeout: 60, every: 0.02) {
            if let s = try? String(contentsOfFile: dir + "/started", encoding: .utf8), let t = UInt64(s.trimmingCharacters(in: .whitespacesAndNewlines)) { return t }
            guard p.isRunning else { throw WaitAbandoned("dev-record ended: \(p.stderr)") }
            return nil
        }
        let now = MonotonicClock.nanos()
        if now < started + 4_000_000_000 { try await Task.sleep(for: .nanoseconds(Int(started + 4_000_000_000 - now))) }
        p.signal(SIGKILL)
        let killedAt = MonotonicClock.nanos()
        #expect(p.stop() == .signalled(SIGKILL))
        let elapsedMillis = Double(killedAt - started) / 1e6
        let parts = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".part") }.sorted()
        #expect(parts == ["room.opus.part", "speaker 0.opus.part", "speaker 1.opus.part"])
        let r = try Subprocess.bot(["repair"] + parts.map { dir + "/" + $0 })
        #expect(r.exitCode == 0, "\(r.stdout)\(r.stderr)")
        for name in ["room.opus", "speaker 0.opus", "speaker 1.opus"] {
            let report = try OggOpusVerifier.verify(path: dir + "/" + name)
            #expect(report.isValid, "\(name): \(report.problems)")
            let offset = Double(report.tags?.value("START_OFFSET_MS") ?? "0") ?? 0
            let lost = elapsedMillis - offset - report.durationMillis
            print("kill -9 after \(Int(elapsedMillis)) ms: \(name) kept \(Int(report.durationMillis)) ms, lost \(Int(lost)) ms")
            // One second of page flushing, plus scheduling slack on a loaded machine.
            #expect(lost <= 1000 + 250, "\(name) lost \(lost) ms")
        }
    }
}

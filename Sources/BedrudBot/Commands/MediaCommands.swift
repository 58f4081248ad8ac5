import BedrudBench
import BedrudMedia
import BedrudProtocol
import BedrudRTC
import BedrudRuntime
import Dispatch
import FoundationEssentials
import Glibc

/// `verify`, `repair`, `bench`, and the hidden `dev-record` used by the crash test.
enum MediaCommands {
    static let verify = CommandSpec(
        "verify", summary: "check Ogg Opus recordings (pages, CRCs, headers, granules) and report duration and gaps",
        discussion: """
            Reads each file without decoding it. Works on any Ogg Opus file, not only ours.
            Exit status: 0 when every file is valid, 13 when a file has problems, 5 when a
            file cannot be read.

            Examples:
              bedrud-bot verify recordings/standup/2026-11-29_120000/*.opus
              bedrud-bot verify --json room.opus
            """,
        arguments: [ArgumentSpec("FILE", variadic: true, help: "Ogg Opus files to check.")],
        options: [VerifyOptions.json.spec],
        action: runVerify)

    /// Declared once: the spec lists them and the command reads them through these.
    enum VerifyOptions {
        static let json = Flag("json", help: "Print one JSON object per file.")
    }

    static let repair = CommandSpec(
        "repair", summary: "finish recordings, or a whole session folder, left behind by a crash",
        discussion: """
            For NAME.opus.part: keeps everything up to the last complete page, marks it
            end-of-stream, writes NAME.opus beside it (synced, read back and verified first) and
            only then removes the .part file. A killed recording loses at most about the last
            second. A file that is already a finished, valid recording is left as it is. A damaged
            file without .part is kept; the result is NAME.repaired.opus. Nothing is ever replaced.

            For a session folder (one with events.jsonl): repairs every .opus.part in it and
            rebuilds transcript.vtt and summary.json (end_reason "crashed") from events.jsonl. A
            folder a running bedrud-bot is still writing is refused (exit 6).

            Examples:
              bedrud-bot repair recordings/standup/2026-11-29_120000
              bedrud-bot repair recordings/standup/2026-11-29_120000/*.part
            """,
        arguments: [ArgumentSpec("FILE|SESSION_DIR", variadic: true, help: "*.part files or session folders to finish.")],
        action: runRepair)

    static let bench = CommandSpec(
        "bench", summary: "measure the audio pipeline (decode cost, tracks per core, allocations, memory)",
        discussion: """
            Streams real Opus packets through the media pipeline as fast as one thread can and
            prints the figures documented in docs/BENCHMARKS.md, the ratios on the last line.
            Allocations per packet are counted by glibc's malloc tracer (libc_malloc_debug) in
            two short child runs that differ only in their number of steady-state packets.

            Examples:
              bedrud-bot bench --quick
              bedrud-bot bench --tracks 200 --seconds 300
            """,
        options: [
            BenchOptions.quick.spec,
            BenchOptions.tracks.spec,
            BenchOptions.passthroughTracks.spec,
            BenchOptions.seconds.spec,
            BenchOptions.complexity.spec,
            BenchOptions.speech.spec,
            BenchOptions.noAllocProbe.spec,
            BenchOptions.mixTalkers.spec,
            BenchOptions.writeMix.spec,
            BenchOptions.noNetwork.spec,
            BenchOptions.allocProbe.spec,
            BenchOptions.steps.spec,
        ],
        action: runBench)

    /// Declared once: the spec lists them and the command reads them through these.
    enum BenchOptions {
        static let quick = Flag("quick", help: "The CI size: well under two minutes.")
        static let tracks = ValueOption("tracks", value: "N", help: "Decoded tracks (rooms of 10).")
        static let passthroughTracks = ValueOption("passthrough-tracks", value: "N", help: "Passthrough-only tracks.")
        static let seconds = ValueOption("seconds", value: "S", help: "Media seconds per track.")
        static let complexity = ValueOption("complexity", value: "C",
                                            help: "libopus complexity of the mix encoder (0-10, default \(Settings.Record.mixComplexity.builtIn)).")
        static let speech = ValueOption("speech", value: "WAV", help: "Encode this 48 kHz 16-bit WAV (e.g. espeak-ng speech) instead of the built-in signal.")
        static let noAllocProbe = Flag("no-alloc-probe", help: "Skip the allocation count.")
        static let mixTalkers = ValueOption("mix-talkers", value: "N", help: "Talkers in the mix encoder figures' room (default \(MediaBenchmarkOptions(quick: false).mixTalkers)).")
        static let writeMix = ValueOption("write-mix", value: "DIR", help: "Write the mix encoder figures' input and decoded outputs into DIR as WAV (to score them, docs/BENCHMARKS.md).")
        static let noNetwork = Flag("no-network", help: "Skip the WebRTC receive-path figures (g).")
        static let allocProbe = ValueOption("alloc-probe", value: "MODE", help: "(internal) run one allocation probe: passthrough, full or calibration.")
        static let steps = ValueOption("steps", value: "K", help: "(internal) steps of the allocation probe.")
    }

    static let devRecord = CommandSpec(
        "dev-record", summary: "(developer) record generated speech for N tracks in real time into DIR",
        discussion: "Used by the crash-safety test: records until --seconds pass, then stops cleanly.",
        options: [
            DevRecordOptions.dir.spec,
            DevRecordOptions.seconds.spec,
            DevRecordOptions.tracks.spec,
        ],
        hidden: true,
        action: runDevRecord)

    /// Declared once: the spec lists them and the command reads them through these.
    enum DevRecordOptions {
        static let dir = ValueOption("dir", value: "DIR", help: "Output directory (must exist).")
        static let seconds = ValueOption("seconds", value: "S", help: "How long to record (default \(defaultSeconds)).")
        static let tracks = ValueOption("tracks", value: "N", help: "Participants (default \(defaultTracks)).")
        static let defaultSeconds = 30
        static let defaultTracks = 2
    }

    // MARK: - verify

    static func runVerify(_ inv: Invocation) async throws -> ExitCode {
        guard !inv.positionals.isEmpty else { throw CommandFailure(.usage, "verify needs at least one FILE") }
        var worst = ExitCode.success
        for path in inv.positionals {
            var report: OggOpusReport
            do {
                report = try OggOpusVerifier.verify(path: path)
            } catch {
                inv.console.err("bedrud-bot: \(error)")
                worst = .notFound
                continue
            }
            let notOgg = !report.isValid && !startsLikeOgg(path)
            if notOgg {
                // Not a damaged recording at all: no "try repair".
                report.problems = ["not an Ogg file (it does not begin with the OggS capture pattern); verify checks Ogg Opus recordings such as *.opus"]
            }
            if inv[VerifyOptions.json] {
                inv.console.json(json(path: path, report))
            } else {
                inv.console.out("\(path): \(report.isValid ? "valid" : "INVALID")")
                let lines = notOgg ? report.problems.map { "problem: \($0)" } : report.summary.split(separator: "\n").map(String.init)
                for line in lines { inv.console.out("  \(line)") }
            }
            if !report.isValid && worst == .success { worst = .fileProblems }
        }
        return worst
    }

    static func startsLikeOgg(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 4)
        return read(fd, &head, 4) == 4 && head == Array("OggS".utf8)
    }

    /// `verify --json`: one object per file (docs/CLI.md), every key always present;
    /// `channels`, `pre_skip`, `vendor` and `tags` are `null` for a file without those headers.
    struct VerifyJSON: Encodable, Equatable {
        struct Gap: Encodable, Equatable {
            var startMs: Double
            var durationMs: Double
            enum CodingKeys: String, CodingKey { case startMs = "start_ms", durationMs = "duration_ms" }
        }
        var file: String
        var valid: Bool
        var durationMs: Double
        var pages: Int
        var audioPackets: Int
        var eos: Bool
        var problems: [String]
        var gaps: [Gap]
        var gapMs: Double
        var channels: Nullable<Int>
        var preSkip: Nullable<Int>
        var vendor: Nullable<String>
        var tags: Nullable<[String: String]>
        enum CodingKeys: String, CodingKey {
            case file, valid, pages, eos, problems, gaps, channels, vendor, tags
            case durationMs = "duration_ms", audioPackets = "audio_packets", gapMs = "gap_ms", preSkip = "pre_skip"
        }
    }

    static func jsonValue(path: String, _ r: OggOpusReport) -> VerifyJSON {
        VerifyJSON(file: path, valid: r.isValid, durationMs: Double(r.durationMillis), pages: r.pages, audioPackets: r.audioPackets, eos: r.hasEOS,
                   problems: r.problems, gaps: r.gaps.map { .init(startMs: Double($0.startMillis), durationMs: Double($0.durationMillis)) },
                   gapMs: Double(r.gapMillis), channels: Nullable(r.head.map { Int($0.channelCount) }), preSkip: Nullable(r.head.map { Int($0.preSkip) }),
                   vendor: Nullable(r.tags?.vendor),
                   tags: Nullable(r.tags.map { Dictionary($0.comments.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }) }))
    }

    static func json(path: String, _ r: OggOpusReport) -> String {
        (try? JSONOutput.string(jsonValue(path: path, r), pretty: false)) ?? ""
    }

    // MARK: - repair

    static func runRepair(_ inv: Invocation) async throws -> ExitCode {
        guard !inv.positionals.isEmpty else { throw CommandFailure(.usage, "repair needs at least one FILE.part or SESSION_DIR") }
        var worst = ExitCode.success
        func note(_ code: ExitCode) { if worst == .success { worst = code } }
        for path in inv.positionals {
            if SessionRepair.isSession(path) {
                do { note(try SessionRepair.run(path, console: inv.console)) } catch let e as CommandFailure {
                    inv.console.err("bedrud-bot: \(e.description)")
                    note(e.code)
                }
                continue
            }
            do {
                let r = try OggOpusRepair.repair(path: path)
                inv.console.out(describe(path, r))
                if !r.report.isValid { note(.fileProblems) }
            } catch let e as MediaIOError where e.errno == ENOENT {
                inv.console.err("bedrud-bot: \(e)")
                note(.notFound)
            } catch {
                inv.console.err("bedrud-bot: cannot repair \(path): \(error)")
                note(.fileProblems)
            }
        }
        return worst
    }

    static func describe(_ path: String, _ r: OggOpusRepairResult) -> String {
        if r.unchanged {
            return "\(path): already a finished, valid recording (\(formatMillis(r.report.durationMillis))); nothing to repair, nothing changed"
        }
        return "\(path) -> \(r.outputPath): \(formatMillis(r.report.durationMillis)) kept, \(r.bytesDropped) bytes dropped"
            + (r.markedEndOfStream ? ", end of stream marked" : "") + (r.report.isValid ? "" : " (still has problems)")
    }

    static func formatMillis(_ ms: Double) -> String { String(cFormat: "%.3f s", ms / 1000) }

    // MARK: - bench

    static func runBench(_ inv: Invocation) async throws -> ExitCode {
        if let mode = inv[BenchOptions.allocProbe] {
            guard let m = MediaBenchmark.Mode(rawValue: mode) else {
                throw CommandFailure(.usage, "--alloc-probe must be passthrough, full or calibration")
            }
            MediaBenchmark.allocationProbe(mode: m, tracks: try inv.integer(BenchOptions.tracks, in: 1...100) ?? 4, steps: try inv.integer(BenchOptions.steps, in: 0...100_000) ?? 200)
            return .success
        }
        var options = MediaBenchmarkOptions(quick: inv[BenchOptions.quick])
        // The mix join records with: the table's defaults.
        options.mixCoder = Settings.Record.mixCoder.builtIn
        options.mixBitrate = Settings.Record.mixBitrate.builtIn
        options.mixComplexity = Settings.Record.mixComplexity.builtIn
        if let t = try inv.integer(BenchOptions.tracks, in: 1...100_000) { options.tracks = t }
        if let t = try inv.integer(BenchOptions.passthroughTracks, in: 1...1_000_000) { options.passthroughTracks = t }
        if let s = try inv.integer(BenchOptions.seconds, in: 1...86_400) { options.seconds = Double(s) }
        if let c = try inv.integer(BenchOptions.complexity, in: 0...10) { options.mixComplexity = c }
        if let wav = inv[BenchOptions.speech] {
            guard let data = FileManager.default.contents(atPath: wav) else {
                throw CommandFailure(.notFound, "cannot read \(wav)")
            }
            guard let pcm = MediaBenchmark.readWAV48k(Array(data)), pcm.count >= 48000 else {
                throw CommandFailure(.usage, "\(wav) is not a 48 kHz 16-bit PCM WAV of at least a second (convert it with: sox IN -r 48000 -b 16 -c 1 OUT.wav)")
            }
            options.speech = pcm
            options.speechName = PathText.lastComponent(wav)
        }
        if let t = try inv.integer(BenchOptions.mixTalkers, in: 1...16) { options.mixTalkers = t }
        if let dir = inv[BenchOptions.writeMix] {
            var st = stat()
            guard stat(dir, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else {
                throw CommandFailure(.notFound, "--write-mix: \(dir) is not a folder")
            }
            options.writeMixTo = dir
        }
        let result = await Task.detached { MediaBenchmark.run(options) }.value
        var lines = result.lines
        var allocLine = "(e) heap allocations per packet in steady state: not measured (--no-alloc-probe)"
        var allocRatio = "allocs/packet=n/a"
        if !inv[BenchOptions.noAllocProbe] {
            if let probe = allocationsPerPacket() {
                allocLine = "(e) heap allocations per packet in steady state (glibc mtrace, 4 tracks, 2000 packets): passthrough \(probe.passthrough), full \(probe.full)"
                allocRatio = "allocs/packet=\(probe.passthrough)/\(probe.full)"
            } else {
                allocLine = "(e) heap allocations per packet: not measured (glibc's libc_malloc_debug.so.0 not found; see docs/BENCHMARKS.md)"
            }
        }
        let last = lines.removeLast()
        lines.insert(allocLine, at: lines.count - 1)
        var networkRatio = ""
        if !inv[BenchOptions.noNetwork] {
            // (g) the network thread's work per packet, in the same run: SRTP unprotect,
            // RTP parse, statistics and NACK bookkeeping, ring push (and the consumer's pop).
            let packets = inv[BenchOptions.quick] ? 50_000 : 200_000
            let r = await Task.detached { RTCBenchmark.receivePath(packets: packets, variants: [.evpgcm, .gcm, .none]) }.value
            let parts = r.variants.map { $0.name + String(cFormat: " %.0f ns", $0.nanosPerPacket) }.joined(separator: ", ")
            lines.append("(g) WebRTC receive path per RTP packet (\(r.payloadBytes)-byte payloads): \(parts)")
            if r.variants.count == 3, case let (g, n) = (r.variants[0].nanosPerPacket, r.variants[2].nanosPerPacket), n > 0 {
                networkRatio = String(cFormat: " rx-ns/packet=%.0f srtp-gcm/plain=%.2f", g, g / n)
            }
            // (h) the send path per packet in the same run: ring pop, RTP build, SRTP protect, NACK history.
            let s = await Task.detached { RTCBenchmark.sendPath(packets: packets) }.value
            let sparts = s.variants.map { $0.name + String(cFormat: " %.0f ns", $0.nanosPerPacket) }.joined(separator: ", ")
            lines.append("(h) WebRTC send path per RTP packet (\(s.payloadBytes)-byte payloads): \(sparts)")
            if let g = s.variants.first { networkRatio += String(cFormat: " tx-ns/packet=%.0f", g.nanosPerPacket) }
        }
        lines.append(last + " " + allocRatio + networkRatio)
        for l in lines { inv.console.out(l) }
        return .success
    }

    /// Allocations per packet in steady state, per mode (see
    /// `MediaBenchmark.allocationsPerPacket`): glibc's malloc tracer in a child run.
    static func allocationsPerPacket() -> (passthrough: String, full: String)? {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let tmp = FileManager.default.temporaryDirectory.path
        func one(_ m: MediaBenchmark.Mode) -> String? {
            MediaBenchmark.allocationsPerPacket(executable: exe, mode: m, temporaryDirectory: tmp).map { String(cFormat: "%.3f", $0) }
        }
        guard let p = one(.passthrough), let f = one(.full) else { return nil }
        return (p, f)
    }

    // MARK: - dev-record

    static func runDevRecord(_ inv: Invocation) async throws -> ExitCode {
        guard let dir = inv[DevRecordOptions.dir] else { throw CommandFailure(.usage, "--dir DIR is required") }
        let seconds = try inv.integer(DevRecordOptions.seconds, in: 1...86_400) ?? DevRecordOptions.defaultSeconds
        let tracks = try inv.integer(DevRecordOptions.tracks, in: 1...50) ?? DevRecordOptions.defaultTracks
        var config = MediaPipelineConfig()
        config.room = "dev-record"
        config.sessionStartUnixNanos = Int64(Date().timeIntervalSince1970 * 1e9)
        let pipeline = MediaPipeline(config: config, sinks: DirectorySinkFactory(directory: dir), syncIntervalSeconds: 1)
        let packets = MediaBenchmark.makePackets(seconds: 10, bitrate: 32000)
        let rings = (0..<tracks).map { _ in PacketRing(capacity: 64) }
        for (i, r) in rings.enumerated() {
            pipeline.send(.addTrack(MediaTrackSpec(trackSid: "TR_\(i)", participantIdentity: "p\(i)", participantName: "speaker \(i)"), r))
        }
        // Where the crash test reads session time zero (CLOCK_MONOTONIC is system-wide).
        try "\(pipeline.startNanos)\n".write(toFile: dir + "/started", atomically: true, encoding: .utf8)
        let drain = Task { for await _ in pipeline.events {} }
        let total = seconds * 50
        let start = MonotonicClock.nanos()
        await Task.detached {
            var header = MediaPacketHeader(ssrc: 0, rtpTimestamp: 0, arrivalNanos: 0)
            for step in 0..<total {
                let due = start + UInt64(step) * 20_000_000
                while MonotonicClock.nanos() < due { usleep(1000) }
                for (t, ring) in rings.enumerated() {
                    header.ssrc = UInt32(t + 1)
                    header.sequenceNumber = UInt16(truncatingIfNeeded: step)
                    header.rtpTimestamp = UInt32(truncatingIfNeeded: step * 960)
                    header.arrivalNanos = MonotonicClock.nanos()
                    packets[(step + t * 37) % packets.count].withUnsafeBytes { _ = ring.push(header, payload: $0) }
                }
            }
        }.value
        await pipeline.stop()
        _ = await drain.value
        inv.console.out("recorded \(seconds) s of \(tracks) tracks into \(dir)")
        return .success
    }
}

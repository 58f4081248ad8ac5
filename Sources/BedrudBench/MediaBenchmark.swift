#if canImport(Glibc)
import Glibc
#endif
import BedrudMedia
import BedrudProtocol
import BedrudRuntime
import COpus

/// What to measure. `quick` keeps the whole run well under two minutes on a loaded
/// 2-core machine (the CI budget).
public struct MediaBenchmarkOptions: Sendable {
    /// Tracks for the decode path (grouped in rooms of `tracksPerRoom`).
    public var tracks: Int
    /// Tracks for the passthrough-only path (cheap, so more of them).
    public var passthroughTracks: Int
    /// Media seconds each track streams.
    public var seconds: Double
    public var tracksPerRoom: Int = 10
    /// Bit rate of the Opus packets the tracks carry (what a speaker sends).
    public var bitrate: Int = 32000
    /// The room mix's coder, bit rate and complexity: the pipeline's defaults.
    public var mixCoder: MixCoder = MediaPipelineConfig().mixCoder
    public var mixBitrate: Int = MediaPipelineConfig().mixBitrate
    public var mixComplexity: Int = MediaPipelineConfig().mixComplexity
    /// Slots of the per-track PacketRing (its memory counts in the RSS figure).
    public var ringSlots: Int = 32
    /// 48 kHz mono speech to encode instead of the built-in voiced signal (e.g. espeak-ng
    /// output resampled by sox; scripts/bench does that), and what to call it.
    public var speech: [Float]?
    public var speechName = "synthetic voiced signal"
    /// Write the mix encoder's input and decoded outputs here (`bench --write-mix DIR`).
    public var writeMixTo: String?
    /// Talkers in the mix encoder figures' room (`bench --mix-talkers N`).
    public var mixTalkers = 4

    public init(quick: Bool) {
        tracks = quick ? 20 : 100
        passthroughTracks = quick ? 200 : 1000
        seconds = quick ? 30 : 120
    }
}

/// The figures of one benchmark run, all measured in that run.
public struct MediaBenchmarkResult: Sendable {
    /// (a) bare `opus_decode_float` per 20 ms frame on the same packets, ns.
    public var bareDecodeNanos: Double = 0
    /// (b) pipeline cost per 20 ms frame per track, ns: passthrough only, and
    /// passthrough + decode + levels/VAD + mix + encode.
    public var passthroughNanos: Double = 0
    public var fullNanos: Double = 0
    /// Time inside libopus calls during the full run, per track-frame, ns (of which the
    /// room encoder's share, one encode per room frame spread over its tracks).
    public var fullLibopusNanos: Double = 0
    public var fullEncodeNanos: Double = 0
    /// Decode + levels/speech detection without the mix, per track per 20 ms frame, ns, and
    /// the libopus calls inside it (the decodes).
    public var decodeNoMixNanos: Double = 0
    public var decodeNoMixLibopusNanos: Double = 0
    /// Bare decode of the same packets with the decoder's output at 16 kHz (enough for
    /// speech detection), ns per 20 ms frame.
    public var bareDecode16kNanos: Double = 0
    /// Share of the benchmark's packets whose sender marked every SILK frame inactive
    /// (the VAD flags in the packet; CELT-only packets count as active).
    public var silentPacketShare: Double = 0
    /// (c) fullNanos / bareDecodeNanos.
    public var fullOverBare: Double { bareDecodeNanos > 0 ? fullNanos / bareDecodeNanos : 0 }
    /// Decode-path overhead beyond the libopus calls themselves.
    public var overheadBeyondLibopus: Double { fullLibopusNanos > 0 ? (fullNanos - fullLibopusNanos) / fullLibopusNanos : 0 }
    /// (d) real-time tracks one core sustains.
    public var passthroughTracksPerCore: Double { passthroughNanos > 0 ? 20_000_000 / passthroughNanos : 0 }
    public var fullTracksPerCore: Double { fullNanos > 0 ? 20_000_000 / fullNanos : 0 }
    /// (f) resident memory added per recorded track (full mode, ring included), bytes.
    public var rssBytesPerTrack: Double = 0
    public var rssBytesPerPassthroughTrack: Double = 0
    /// Mix encoder cost per 20 ms room frame by libopus complexity (the default coder at
    /// the mix bit rate), and the voice coder at 32 kbit/s for reference, ns.
    public var encodeNanosByComplexity: [(setting: String, nanos: Double)] = []
    /// The mix encoder's settings on a four-talker room: cost and quality (see
    /// ``MediaBenchmark/mixEncoderFigures(signal:bitrate:)``).
    public var mixEncoder: [MediaBenchmark.MixEncoderFigure] = []
    public var options: MediaBenchmarkOptions
    public var packets = 0
    public var outputBytes = 0

    /// The report, one figure a line; the ratios on the last line.
    public var lines: [String] {
        func f(_ v: Double, _ digits: Int = 0) -> String {
            let m = pow(10, Double(digits))
            let r = (v * m).rounded() / m
            return digits == 0 ? String(Int64(r)) : String(r)
        }
        return [
            "bedrud-bot media benchmark on \(options.speechName): \(options.tracks) decoded tracks in rooms of \(options.tracksPerRoom), "
                + "\(options.passthroughTracks) passthrough tracks, \(f(options.seconds)) s each, Opus \(options.bitrate / 1000) kbit/s 20 ms, "
                + "mix \(options.mixCoder.rawValue) \(options.mixBitrate / 1000) kbit/s complexity \(options.mixComplexity), single thread, thread CPU time",
            "(a) bare opus_decode_float per 20 ms frame: \(f(bareDecodeNanos)) ns",
            "(b) pipeline per 20 ms frame per track: passthrough \(f(passthroughNanos)) ns; "
                + "passthrough+decode+levels+mix+encode \(f(fullNanos)) ns (libopus calls inside: \(f(fullLibopusNanos)) ns, of which room encode \(f(fullEncodeNanos)) ns; split by wall-time share)",
            "decode skip: decode+levels without mix \(f(decodeNoMixNanos)) ns per track-frame (libopus inside: \(f(decodeNoMixLibopusNanos)) ns) "
                + "against passthrough \(f(passthroughNanos)) ns; bare decode at 16 kHz \(f(bareDecode16kNanos)) ns against \(f(bareDecodeNanos)) ns at 48 kHz; "
                + "packets the sender marked inactive (SILK VAD flags): \(f(silentPacketShare * 100, 1)) %",
            "(c) full pipeline / bare decode: \(f(fullOverBare, 3)); overhead beyond libopus calls: \(f(overheadBeyondLibopus * 100, 1)) %",
            "(d) real-time tracks per core: passthrough \(f(passthroughTracksPerCore)); full \(f(fullTracksPerCore))",
            "mix encoder per 20 ms room frame by complexity: "
                + encodeNanosByComplexity.map { "\($0.setting): \(f($0.nanos / 1000, 1)) µs" }.joined(separator: ", "),
            "mix encoder settings on a room of \(options.mixTalkers) talker(s) (coder complexity/dtx/kbit/s: encode µs per 20 ms frame, correlation, SNR dB, segmental SNR dB, kbit/s written, DTX frames): "
                + mixEncoder.map {
                    "\($0.coder.rawValue) \($0.complexity)\($0.dtx ? "/dtx" : "")\($0.bitrate == options.mixBitrate ? "" : "/\($0.bitrate / 1000)k"): "
                        + "\(f($0.nanos / 1000, 1)) µs r=\(f($0.correlation, 4)) \(f($0.snrDB, 1)) dB seg \(f($0.segmentalSNRDB, 1)) dB "
                        + "\(f($0.bitsPerSecond / 1000, 1)) kbit/s\($0.dtx ? " dtx \(f($0.dtxFrameShare * 100, 0)) %" : "")"
                }.joined(separator: "; "),
            "(f) resident memory per track: full \(f(rssBytesPerTrack / 1024, 1)) KB; passthrough \(f(rssBytesPerPassthroughTrack / 1024, 1)) KB "
                + "(each includes a \(options.ringSlots)-slot PacketRing of 1500-byte slots)",
            "ratios: full/bare=\(f(fullOverBare, 3)) overhead-beyond-libopus=\(f(overheadBeyondLibopus * 100, 1))% "
                + "passthrough-tracks/core=\(f(passthroughTracksPerCore)) full-tracks/core=\(f(fullTracksPerCore)) "
                + "rss/track=\(f(rssBytesPerTrack / 1024, 1))KB",
        ]
    }
}

/// The media benchmark: real Opus packets (a synthetic voiced signal encoded with libopus
/// at 32 kbit/s, VOIP, 20 ms) streamed through ``MediaEngine`` for many tracks as fast as
/// one thread can, in virtual time, with pages going to counting sinks. Figures (a)–(d)
/// and (f); (e) allocations per packet comes from ``allocationsPerPacket(executable:mode:temporaryDirectory:)``
/// (glibc's malloc tracer around the steady state of a child run; see docs/BENCHMARKS.md).
public enum MediaBenchmark {
    public enum Mode: String, Sendable {
        case passthrough, full
        /// Allocates 1,000 objects per 100 steps instead of running the pipeline: proves
        /// the counter sees Swift allocations.
        case calibration
    }

    final class Probe { var value = 0 }

    public static func run(_ options: MediaBenchmarkOptions) -> MediaBenchmarkResult {
        var result = MediaBenchmarkResult(options: options)
        let packets = options.speech.map { encode($0, bitrate: options.bitrate) } ?? makePackets(seconds: 10, bitrate: options.bitrate)
        let steps = Int(options.seconds * 50)

        // (f) and (b) full first, so the RSS growth is not hidden by freed memory.
        let rss0 = residentBytes()
        let full = runPipeline(.full, packets: packets, tracks: options.tracks, steps: steps, options: options, timeCodec: true)
        let rss1 = residentBytes()
        result.rssBytesPerTrack = Double(max(0, rss1 - rss0)) / Double(options.tracks)
        result.fullNanos = Double(full.nanos) / Double(steps * options.tracks)
        result.fullLibopusNanos = result.fullNanos * full.libopusShare
        result.fullEncodeNanos = result.fullNanos * full.encodeShare
        result.outputBytes += full.bytes

        // Decoding for speech detection alone (record.mix = no): what a track's decode costs
        // when nothing is mixed, so what skipping it would save.
        let noMix = runPipeline(.full, packets: packets, tracks: options.tracks, steps: steps, options: options, timeCodec: true, mix: false)
        result.decodeNoMixNanos = Double(noMix.nanos) / Double(steps * options.tracks)
        result.decodeNoMixLibopusNanos = result.decodeNoMixNanos * noMix.libopusShare

        let rss2 = residentBytes()
        let pass = runPipeline(.passthrough, packets: packets, tracks: options.passthroughTracks, steps: steps, options: options, timeCodec: false)
        let rss3 = residentBytes()
        result.rssBytesPerPassthroughTrack = Double(max(0, rss3 - rss2)) / Double(options.passthroughTracks)
        result.passthroughNanos = Double(pass.nanos) / Double(steps * options.passthroughTracks)
        result.outputBytes += pass.bytes
        result.packets = steps * (options.tracks + options.passthroughTracks)

        result.bareDecodeNanos = bareDecode(packets, frames: max(5000, steps * 4))
        result.bareDecode16kNanos = bareDecode(packets, frames: max(5000, steps * 4), rate: 16000)
        result.silentPacketShare = Double(packets.filter { !OpusPacketInfo.hasVoiceActivity($0) }.count) / Double(max(1, packets.count))
        result.encodeNanosByComplexity = encoderCost(coder: options.mixCoder, bitrate: options.mixBitrate, frames: options.seconds >= 60 ? 1500 : 500)
        result.mixEncoder = mixEncoderFigures(
            signal: roomMixSignal(frames: options.seconds >= 60 ? 3000 : 1000, speech: options.speech, talkers: options.mixTalkers),
            bitrate: options.mixBitrate,
            writeDecodedTo: options.writeMixTo)
        return result
    }

    /// Runs `steps` 20 ms steps of `tracks` tracks after a warm-up of 300 steps, with
    /// glibc's malloc tracer (`mtrace`) on for exactly the steady-state steps. The tracer
    /// only records when the process was started with glibc's `libc_malloc_debug.so`
    /// preloaded and `MALLOC_TRACE` naming the trace file (``allocationsPerPacket``
    /// does that); otherwise this just runs.
    public static func allocationProbe(mode: Mode, tracks: Int, steps: Int) {
        var o = MediaBenchmarkOptions(quick: true)
        o.tracksPerRoom = max(1, tracks)
        let packets = makePackets(seconds: 2, bitrate: o.bitrate)
        // libc_malloc_debug exports the working mtrace/muntrace only under the old symbol
        // version (libc's own default-version ones are stubs), so look them up by version.
        typealias Hook = @convention(c) () -> Void
        typealias DLVSym = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>, UnsafePointer<CChar>) -> UnsafeMutableRawPointer?
        let dlvsym = dlsym(nil, "dlvsym").map { unsafeBitCast($0, to: DLVSym.self) }
        let on = dlvsym?(nil, "mtrace", "GLIBC_2.2.5").map { unsafeBitCast($0, to: Hook.self) }
        let off = dlvsym?(nil, "muntrace", "GLIBC_2.2.5").map { unsafeBitCast($0, to: Hook.self) }
        if mode == .calibration {
            on?()
            var keep: [Probe] = []
            keep.reserveCapacity(steps * 10)
            for i in 0..<(steps * 10) { keep.append(Probe()); keep[i].value = i }
            off?()
            return
        }
        _ = runPipeline(mode, packets: packets, tracks: tracks, steps: 300 + steps, options: o, timeCodec: false) { step in
            if step == 300 { on?() }
            if step == 300 + steps { off?() }
        }
    }

    /// Counts heap allocations per packet in steady state: runs `executable bench
    /// --alloc-probe MODE` twice (200 and 700 steady steps of 4 tracks) with glibc's
    /// malloc tracer preloaded, counts the allocations (`+` and realloc `>` lines) in
    /// each trace, and divides the difference by the 2,000 packets in between.
    /// - Returns: nil when glibc's `libc_malloc_debug.so.0` is not installed.
    public static func allocationsPerPacket(executable: String, mode: Mode, temporaryDirectory: String) -> Double? {
        let candidates = ["/lib/x86_64-linux-gnu/libc_malloc_debug.so.0", "/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0",
                          "/lib/aarch64-linux-gnu/libc_malloc_debug.so.0", "/usr/lib/aarch64-linux-gnu/libc_malloc_debug.so.0"]
        guard let lib = candidates.first(where: { access($0, R_OK) == 0 }) else { return nil }
        func count(_ steps: Int, _ mode: Mode) -> Int? {
            let trace = temporaryDirectory + "/bedrud-alloc-\(getpid())-\(mode.rawValue)-\(steps).trace"
            defer { unlink(trace) }
            let args = [executable, "bench", "--alloc-probe", mode.rawValue, "--tracks", "4", "--steps", String(steps)]
            let env = ["LD_PRELOAD=\(lib)", "MALLOC_TRACE=\(trace)", "PATH=/usr/bin:/bin"]
            guard spawnAndWait(args, env) == 0, let bytes = try? FileBytes.read(trace) else { return nil }
            var n = 0
            var lineStart = true
            var i = 0
            // Lines look like "@ caller + 0xADDR 0xSIZE" (malloc) or "@ caller > 0xNEW 0xSIZE" (realloc).
            while i < bytes.count {
                let b = bytes[i]
                if b == 10 { lineStart = true } else if lineStart {
                    lineStart = false
                    var j = i
                    while j < bytes.count && bytes[j] != 10 {
                        if bytes[j] == 32, j + 2 < bytes.count, (bytes[j + 1] == 43 || bytes[j + 1] == 62), bytes[j + 2] == 32 { n += 1; break }
                        j += 1
                    }
                }
                i += 1
            }
            return n
        }
        // The counter must see the calibration's 5,000 extra objects, or its figure means nothing.
        guard let c0 = count(200, .calibration), let c1 = count(700, .calibration), c1 - c0 >= 5000 else { return nil }
        guard let a = count(200, mode), let b = count(700, mode) else { return nil }
        return Double(b - a) / Double(500 * 4)
    }

    private static func spawnAndWait(_ args: [String], _ env: [String]) -> Int32 {
        var pid: pid_t = 0
        let argv = args.map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        defer { posix_spawn_file_actions_destroy(&actions) }
        guard posix_spawn(&pid, args[0], &actions, nil, argv, envp) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
    }

    // MARK: -

    struct Run {
        /// Thread CPU time in `process` (what the figures use: preemption by other
        /// processes on a shared machine does not count).
        var nanos: UInt64 = 0
        /// Wall time in `process`, and wall time inside libopus calls within it: their
        /// ratio splits `nanos` into codec and pipeline shares.
        var wallNanos: UInt64 = 0
        var libopusNanos: UInt64 = 0
        var encodeNanos: UInt64 = 0
        var libopusShare: Double { wallNanos > 0 ? Double(libopusNanos) / Double(wallNanos) : 0 }
        var encodeShare: Double { wallNanos > 0 ? Double(encodeNanos) / Double(wallNanos) : 0 }
        var bytes = 0
    }

    final class CountingSinks: RecordingSinkFactory {
        var sinks: [CountingSink] = []
        func makeSink(for output: RecordingOutput) throws -> PageSink {
            let s = CountingSink()
            sinks.append(s)
            return s
        }
    }

    static func runPipeline(
        _ mode: Mode, packets: [[UInt8]], tracks: Int, steps: Int, options: MediaBenchmarkOptions, timeCodec: Bool,
        mix: Bool = true, onStep: (Int) -> Void = { _ in }
    ) -> Run {
        var config = MediaPipelineConfig()
        config.room = "bench"
        config.decode = mode == .full
        config.mix = mode == .full && mix
        config.mixCoder = options.mixCoder
        config.mixBitrate = options.mixBitrate
        config.mixComplexity = options.mixComplexity
        config.timeCodecCalls = timeCodec
        let start: UInt64 = 1_000_000_000
        let perRoom = max(1, options.tracksPerRoom)
        let roomCount = (tracks + perRoom - 1) / perRoom
        let sinks = CountingSinks()
        let pages = DirectPageWriter()
        var engines: [MediaEngine] = []
        var rings: [[PacketRing]] = []
        for r in 0..<roomCount {
            let e = MediaEngine(config: config, startNanos: start, sinks: sinks, pages: pages) { _ in }
            var rr: [PacketRing] = []
            for t in 0..<min(perRoom, tracks - r * perRoom) {
                let ring = PacketRing(capacity: options.ringSlots)
                let id = "p\(r)-\(t)"
                e.apply(.addTrack(MediaTrackSpec(trackSid: "TR_\(id)", participantIdentity: id, participantName: id), ring), now: start)
                rr.append(ring)
            }
            engines.append(e)
            rings.append(rr)
        }
        var run = Run()
        var header = MediaPacketHeader(ssrc: 0, rtpTimestamp: 0, arrivalNanos: 0)
        for step in 0..<steps {
            onStep(step)
            let now = start + UInt64(step) * 20_000_000 + 30_000_000
            for (r, e) in engines.enumerated() {
                for (t, ring) in rings[r].enumerated() {
                    let p = packets[(step + t * 37) % packets.count]
                    header.ssrc = UInt32(t + 1)
                    header.sequenceNumber = UInt16(truncatingIfNeeded: step)
                    header.rtpTimestamp = UInt32(truncatingIfNeeded: step * 960)
                    header.arrivalNanos = now
                    p.withUnsafeBytes { _ = ring.push(header, payload: $0) }
                }
                let c0 = threadCPUNanos()
                let t0 = MonotonicClock.nanos()
                e.process(now: now)
                run.wallNanos &+= MonotonicClock.nanos() &- t0
                run.nanos &+= threadCPUNanos() &- c0
            }
        }
        onStep(steps)
        let end = start + UInt64(steps) * 20_000_000 + 30_000_000
        for e in engines {
            run.libopusNanos &+= e.libopusNanos
            run.encodeNanos &+= e.libopusEncodeNanos
            e.finish(now: end)
        }
        run.bytes = pages.bytesWritten
        return run
    }

    /// Encodes a ten-voice mix (what a room sounds like) at each complexity of `coder`,
    /// and with the voice coder at complexity 5 and 32 kbit/s (the mix before 2026-12-02).
    static func encoderCost(coder: MixCoder, bitrate: Int, frames: Int) -> [(setting: String, nanos: Double)] {
        let voices = (0..<10).map { v in (Float(100 + v * 23), Float(v) * 0.7) }
        var pcm = [Float](repeating: 0, count: frames * 960)
        for i in 0..<pcm.count {
            let t = Float(i) / 48000
            var x: Float = 0
            for (f, ph) in voices where sinf(2 * .pi * 0.3 * t + ph) > 0.3 { x += 0.05 * sinf(2 * .pi * f * t + ph) + 0.02 * sinf(4 * .pi * f * t) }
            pcm[i] = x
        }
        var out: [(String, Double)] = []
        var packet = [UInt8](repeating: 0, count: 4000)
        let settings = [0, 2, 5, 8, 10].map { ("\(coder.rawValue) \($0)", coder, $0, bitrate) } + [("voice 5 at 32k", MixCoder.voice, 5, 32000)]
        for (name, cd, c, br) in settings {
            guard let enc = OpusEncoderBox(channels: 1, bitrate: br, complexity: c, coder: cd) else { continue }
            let c0 = threadCPUNanos()
            pcm.withUnsafeBufferPointer { p in
                packet.withUnsafeMutableBufferPointer { o in
                    guard let base = p.baseAddress, let ob = o.baseAddress else { return }
                    for k in 0..<frames { _ = enc.encode(base + k * 960, frameSamples: 960, into: ob, outCapacity: 4000) }
                }
            }
            let total = threadCPUNanos() &- c0
            out.append((name, Double(total) / Double(frames)))
        }
        return out
    }

    // MARK: - The mix encoder's settings: cost and quality

    /// A room of `talkers` (four by default) who overlap and pause (each a harmonic voice at its own
    /// pitch with a syllable envelope, talk spurts of 0.4–1.2 s and pauses of 0.2–0.6 s, as
    /// `scripts/bench-peers` plays them), over a −60 dBFS noise floor such as decoded
    /// microphones carry, so the encoder's DTX can tell pauses from speech. With `speech`,
    /// the four talkers are that recording started at four different places instead.
    public static func roomMixSignal(frames: Int, speech: [Float]?, talkers: Int = 4) -> [Float] {
        let n = frames * 960
        var mix = [Float](repeating: 0, count: n)
        var noiseSeed: UInt64 = 99
        for v in 0..<max(1, talkers) {
            if let speech, !speech.isEmpty {
                let shift = v * speech.count / max(1, talkers)
                for i in 0..<n { mix[i] += (talkers == 1 ? 1 : 0.5) * speech[(i + shift) % speech.count] }
                continue
            }
            var seed = UInt64(1000 + v) &* 2862933555777941757 &+ 3037000493
            var phase: Float = 0
            var i = v * 4800
            while i < n {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                let talk = Int((seed >> 33) % 800 + 400) * 48
                let pause = Int((seed >> 13) % 400 + 200) * 48
                let rate = 3 + Float((seed >> 40) % 300) / 100
                for k in 0..<talk where i + k < n {
                    let env = abs(sinf(Float.pi * Float(k) / 48000 * rate))
                    let f0 = 95 + 13 * Float(v) + 40 * sinf(2 * .pi * 0.3 * Float(i + k) / 48000 + Float(v))
                    phase += 2 * .pi * f0 / 48000
                    var s: Float = 0
                    for h in 1...6 { s += sinf(phase * Float(h)) / Float(h) }
                    mix[i + k] += 0.25 * env * s
                }
                i += talk + pause
            }
        }
        for i in 0..<n {
            noiseSeed = noiseSeed &* 6364136223846793005 &+ 1442695040888963407
            mix[i] += (Float(noiseSeed >> 40) / Float(1 << 24) - 0.5) * 0.002
            mix[i] = max(-1, min(1, mix[i]))
        }
        return mix
    }

    /// One setting of the mix encoder, measured on ``roomMixSignal(frames:speech:)``.
    public struct MixEncoderFigure: Sendable {
        public var coder: MixCoder
        public var complexity: Int
        public var dtx: Bool
        public var bitrate: Int
        /// Thread CPU time of `opus_encode_float` per 20 ms frame, ns.
        public var nanos: Double
        /// The decoded mix against its input (lookahead removed): Pearson correlation,
        /// SNR over the whole signal, and segmental SNR (the mean of per-20 ms-frame SNRs,
        /// each clamped to −10…35 dB, over frames above −50 dBFS).
        public var correlation: Double
        public var snrDB: Double
        public var segmentalSNRDB: Double
        /// What the encoder wrote, bits per second, and the share of DTX frames (≤ 2 bytes).
        public var bitsPerSecond: Double
        public var dtxFrameShare: Double
    }

    /// The settings worth comparing: CELT (the default coder) at every complexity at
    /// `bitrate` (nil), with DTX, and at 48 kbit/s; the voice coder (SILK/hybrid) at 32
    /// kbit/s (the default before 2026-12-02 was 5 there) and at `bitrate`.
    public static let mixEncoderSettings: [(coder: MixCoder, complexity: Int, dtx: Bool, bitrate: Int?)] =
        (0...10).map { (.celt, $0, false, nil) } + [(.celt, 5, true, nil), (.celt, 2, false, 48000), (.celt, 5, false, 48000)]
        + [0, 2, 5, 10].map { (.voice, $0, false, 32000) } + [(.voice, 5, true, 32000), (.voice, 5, false, nil)]

    /// Encodes `signal` with each setting, decodes it with a fresh libopus decoder and
    /// compares the result with the input.
    /// - Parameter writeDecodedTo: a folder to write the input (`mix-input.wav`) and each
    ///   setting's decoded output, aligned (`mix-celt-c5.wav`, `mix-celt-c5-dtx.wav`, `mix-voice-c5-32k.wav`…)
    ///   into, 48 kHz 16-bit mono, for a perceptual score outside (docs/BENCHMARKS.md).
    public static func mixEncoderFigures(signal: [Float], bitrate: Int, writeDecodedTo: String? = nil) -> [MixEncoderFigure] {
        if let dir = writeDecodedTo {
            signal.withUnsafeBufferPointer { writeWAV48k(dir + "/mix-input.wav", $0) }
        }
        let frames = signal.count / 960
        var figures: [MixEncoderFigure] = []
        var packet = [UInt8](repeating: 0, count: 4000)
        let decoded = UnsafeMutablePointer<Float>.allocate(capacity: frames * 960 + 5760)
        defer { decoded.deallocate() }
        for s in mixEncoderSettings {
            let br = s.bitrate ?? bitrate
            guard let enc = OpusEncoderBox(channels: 1, bitrate: br, complexity: s.complexity, dtx: s.dtx, coder: s.coder),
                  let dec = OpusDecoderBox(channels: 1) else { continue }
            var nanos: UInt64 = 0
            var bytes = 0
            var dtxFrames = 0
            var got = 0
            signal.withUnsafeBufferPointer { p in
                packet.withUnsafeMutableBufferPointer { o in
                    guard let base = p.baseAddress, let ob = o.baseAddress else { return }
                    for k in 0..<frames {
                        let c0 = threadCPUNanos()
                        let len = enc.encode(base + k * 960, frameSamples: 960, into: ob, outCapacity: 4000)
                        nanos &+= threadCPUNanos() &- c0
                        guard len > 0 else { continue }
                        bytes += len
                        if len <= 2 { dtxFrames += 1 }
                        let n = dec.decode(UnsafeRawBufferPointer(start: ob, count: len), into: decoded + got, maxSamples: 5760)
                        got += n > 0 ? n : max(0, dec.conceal(into: decoded + got, samples: 960))
                    }
                }
            }
            // The decoder's output lags the input by the encoder's lookahead, give or take
            // what SILK's resampler adds: take the lag (within 0…30 ms) that fits best.
            let la = bestLag(signal, decoded, got, maxLag: 1440)
            if let dir = writeDecodedTo {
                let name = "mix-\(s.coder.rawValue)-c\(s.complexity)\(s.dtx ? "-dtx" : "")\(br == bitrate ? "" : "-\(br / 1000)k").wav"
                writeWAV48k(dir + "/" + name, UnsafeBufferPointer(start: decoded + la, count: max(0, got - la)))
            }
            let m = max(0, min(got - la, signal.count))
            var sx = 0.0, sy = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0, se = 0.0
            var segSum = 0.0
            var segFrames = 0
            var fs = 0.0, fe = 0.0, fn = 0
            for i in 0..<m {
                let x = Double(signal[i]), y = Double(decoded[i + la])
                sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y
                se += (x - y) * (x - y)
                fs += x * x; fe += (x - y) * (x - y); fn += 1
                if fn == 960 {
                    if fs / 960 > 1e-5 {  // −50 dBFS
                        segSum += max(-10, min(35, 10 * log10(fs / max(fe, 1e-12))))
                        segFrames += 1
                    }
                    fs = 0; fe = 0; fn = 0
                }
            }
            let dm = Double(max(1, m))
            let cov = sxy / dm - sx / dm * sy / dm
            let vx = sxx / dm - sx / dm * sx / dm, vy = syy / dm - sy / dm * sy / dm
            figures.append(MixEncoderFigure(
                coder: s.coder, complexity: s.complexity, dtx: s.dtx, bitrate: br, nanos: Double(nanos) / Double(max(1, frames)),
                correlation: vx > 0 && vy > 0 ? cov / (vx * vy).squareRoot() : 0,
                snrDB: 10 * log10(sxx / max(se, 1e-12)), segmentalSNRDB: segFrames > 0 ? segSum / Double(segFrames) : 0,
                bitsPerSecond: Double(bytes * 8) / (Double(frames) * 0.02), dtxFrameShare: Double(dtxFrames) / Double(max(1, frames))))
        }
        return figures
    }

    /// The lag in 0…maxLag at which `y` (first `count` samples) best matches `x`, by the
    /// dot product over up to half a second from the middle of the signal: every 8th lag
    /// first, then the 15 around the best of those.
    static func bestLag(_ x: [Float], _ y: UnsafePointer<Float>, _ count: Int, maxLag: Int) -> Int {
        let span = min(24000, max(0, min(x.count, count) - maxLag) / 2)
        guard span > 0 else { return 0 }
        let start = (min(x.count, count) - maxLag - span) / 2
        return x.withUnsafeBufferPointer { xp -> Int in
            guard let xb = xp.baseAddress else { return 0 }
            func dot(_ lag: Int) -> Float {
                var d: Float = 0
                for i in start..<(start + span) { d += xb[i] * y[i + lag] }
                return d
            }
            var best = 0
            var bestDot = -Float.infinity
            func consider(_ lag: Int) {
                let d = dot(lag)
                if d > bestDot { bestDot = d; best = lag }
            }
            for lag in stride(from: 0, through: maxLag, by: 8) { consider(lag) }
            let coarse = best
            for lag in max(0, coarse - 7)...min(maxLag, coarse + 7) { consider(lag) }
            return best
        }
    }

    /// Writes 48 kHz mono 16-bit PCM WAV; errors are ignored (a diagnostic output).
    public static func writeWAV48k(_ path: String, _ pcm: UnsafeBufferPointer<Float>) {
        let bytes = WAVAudio.pcm16(pcm.lazy.map { x in Int16(max(-32768, min(32767, (x * 32767).rounded()))) })
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    static func bareDecode(_ packets: [[UInt8]], frames: Int, rate: Int32 = 48000) -> Double {
        var err: Int32 = 0
        guard let dec = opus_decoder_create(rate, 1, &err) else { return 0 }
        defer { opus_decoder_destroy(dec) }
        let pcm = UnsafeMutablePointer<Float>.allocate(capacity: 5760)
        defer { pcm.deallocate() }
        let c0 = threadCPUNanos()
        for i in 0..<frames {
            let p = packets[i % packets.count]
            p.withUnsafeBufferPointer { b in _ = opus_decode_float(dec, b.baseAddress, Int32(b.count), pcm, 5760, 0) }
        }
        let total = threadCPUNanos() &- c0
        return Double(total) / Double(frames)
    }

    /// A deterministic voiced signal (harmonic tone, syllable envelope, pauses) encoded
    /// as a WebRTC sender would: libopus VOIP, 20 ms, in-band FEC on.
    public static func makePackets(seconds: Double, bitrate: Int) -> [[UInt8]] {
        let n = Int(seconds * 48000)
        var pcm = [Float](repeating: 0, count: n)
        var phase: Float = 0
        var seed: UInt64 = 12345
        var i = 0
        while i < n {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let talk = Int((seed >> 33) % 800 + 400) * 48
            let pause = Int((seed >> 13) % 400 + 200) * 48
            for k in 0..<talk where i + k < n {
                let env = sinf(Float.pi * Float(k) / Float(talk))
                phase += 2 * .pi * (130 + 10 * sinf(Float(k) / 9000)) / 48000
                var s: Float = 0
                for h in 1...6 { s += sinf(phase * Float(h)) / Float(h) }
                pcm[i + k] = 0.15 * env * s
            }
            i += talk + pause
        }
        return encode(pcm, bitrate: bitrate)
    }

    /// Encodes 48 kHz mono PCM as a WebRTC sender would: libopus VOIP, 20 ms, in-band FEC.
    public static func encode(_ pcm: [Float], bitrate: Int) -> [[UInt8]] {
        let n = pcm.count
        var err: Int32 = 0
        guard let enc = opus_encoder_create(48000, 1, OPUS_APPLICATION_VOIP, &err) else { return [] }
        defer { opus_encoder_destroy(enc) }
        _ = shim_opus_encoder_set_bitrate(enc, Int32(bitrate))
        _ = shim_opus_encoder_set_inband_fec(enc, 1)
        _ = shim_opus_encoder_set_packet_loss_perc(enc, 5)
        var out = [UInt8](repeating: 0, count: 4000)
        var packets: [[UInt8]] = []
        pcm.withUnsafeBufferPointer { p in
            guard let base = p.baseAddress else { return }
            for f in 0..<(n / 960) {
                let len = out.withUnsafeMutableBufferPointer { o -> Int32 in
                    guard let ob = o.baseAddress else { return -1 }
                    return opus_encode_float(enc, base + f * 960, 960, ob, 4000)
                }
                if len > 0 { packets.append(Array(out[0..<Int(len)])) }
            }
        }
        return packets
    }

    /// A 48 kHz WAV file's first channel (``WAVAudio/read(_:)``: 16-, 24-, 32-bit PCM or
    /// float); nil when it is not a WAV file WAVAudio reads or not at 48 kHz.
    public static func readWAV48k(_ bytes: [UInt8]) -> [Float]? {
        guard let wav = try? WAVAudio.read(bytes), wav.sampleRate == 48_000 else { return nil }
        return wav.channels == 1 ? wav.samples : stride(from: 0, to: wav.samples.count, by: wav.channels).map { wav.samples[$0] }
    }

    /// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), ns.
    static func threadCPUNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Current resident set size of this process (/proc/self/statm), bytes.
    static func residentBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 128)
        let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, 127) }
        guard n > 0 else { return 0 }
        let fields = String(decoding: buf[0..<n], as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

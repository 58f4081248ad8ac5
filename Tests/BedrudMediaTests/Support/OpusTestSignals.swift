import BedrudRuntime
import TestSupport
import BedrudMedia
import BedrudProtocol
import COgg
import COpus
import Foundation

/// Deterministic test audio: a "speaker" is voiced bursts (a harmonic tone with a
/// syllable-rate envelope) separated by pauses, which both libopus and the VAD treat
/// like speech.
enum TestSignal {
    static func speech(seconds: Double, pitch: Float = 140, seed: UInt64 = 1, amplitude: Float = 0.3, talkFrom: Double = 0, talkUntil: Double = .infinity) -> [Float] {
        let n = Int(seconds * 48000)
        var out = [Float](repeating: 0, count: n)
        var rng = SplitMix(seed: seed)
        var phase: Float = 0
        var i = 0
        while i < n {
            // 0.4–1.2 s of talk, 0.2–0.6 s pause.
            let talk = Int(Double(rng.next() % 800 + 400) * 48)
            let pause = Int(Double(rng.next() % 400 + 200) * 48)
            for k in 0..<talk where i + k < n {
                let t = Double(i + k) / 48000
                guard t >= talkFrom && t < talkUntil else { continue }
                let env = sinf(Float.pi * Float(k) / Float(talk)) * (0.6 + 0.4 * sinf(Float(k) / 48000 * 2 * .pi * 4))
                let f = pitch * (1 + 0.05 * sinf(Float(k) / 48000 * 2 * .pi * 1.5))
                phase += 2 * .pi * f / 48000
                if phase > 2 * .pi { phase -= 2 * .pi }
                var s: Float = 0
                for h in 1...6 { s += sinf(phase * Float(h)) / Float(h) }
                out[i + k] = amplitude * env * s * 0.5
            }
            i += talk + pause
        }
        return out
    }

    static func tone(seconds: Double, frequency: Float, amplitude: Float) -> [Float] {
        (0..<Int(seconds * 48000)).map { amplitude * sinf(2 * .pi * frequency * Float($0) / 48000) }
    }
}

/// The media tests' name for the shared seeded generator.
typealias SplitMix = SeededGenerator

/// Encodes PCM into Opus packets with libopus, as a WebRTC sender would.
enum TestEncoder {
    static func encode(
        _ pcm: [Float], channels: Int = 1, frameSamples: Int = 960, bitrate: Int = 32000, fec: Bool = false, lossPercent: Int = 0,
        application: Int32 = OPUS_APPLICATION_VOIP, signalVoice: Bool = false
    ) -> [[UInt8]] {
        var err: Int32 = 0
        guard let enc = opus_encoder_create(48000, Int32(channels), application, &err) else { return [] }
        defer { opus_encoder_destroy(enc) }
        _ = shim_opus_encoder_set_bitrate(enc, Int32(bitrate))
        _ = shim_opus_encoder_set_inband_fec(enc, fec ? 1 : 0)
        _ = shim_opus_encoder_set_packet_loss_perc(enc, Int32(lossPercent))
        // The synthetic voices are harmonic enough for libopus to code them as music (CELT);
        // a real voice at these rates is SILK or hybrid, as with this hint.
        if signalVoice { _ = shim_opus_encoder_set_signal_voice(enc) }
        var packets: [[UInt8]] = []
        var out = [UInt8](repeating: 0, count: 4000)
        let frames = pcm.count / channels / frameSamples
        for f in 0..<frames {
            let n = pcm.withUnsafeBufferPointer { p in
                out.withUnsafeMutableBufferPointer { o in
                    opus_encode_float(enc, p.baseAddress! + f * frameSamples * channels, Int32(frameSamples), o.baseAddress!, 4000)
                }
            }
            packets.append(Array(out[0..<Int(max(0, n))]))
        }
        return packets
    }

    /// Decodes packets in order with a fresh decoder (the reference for PCM identity).
    static func decode(_ packets: [[UInt8]], channels: Int = 1) -> [Float] {
        var err: Int32 = 0
        guard let dec = opus_decoder_create(48000, Int32(channels), &err) else { return [] }
        defer { opus_decoder_destroy(dec) }
        var out: [Float] = []
        var buf = [Float](repeating: 0, count: 5760 * channels)
        for p in packets {
            let n = p.withUnsafeBufferPointer { pp in
                buf.withUnsafeMutableBufferPointer { b in
                    opus_decode_float(dec, p.isEmpty ? nil : pp.baseAddress, Int32(p.count), b.baseAddress!, 5760, 0)
                }
            }
            if n > 0 { out.append(contentsOf: buf[0..<Int(n) * channels]) }
        }
        return out
    }
}

/// Reads an Ogg Opus file's packets with libogg and decodes them like a player:
/// pre-skip removed, end trimmed to the final granule position.
enum TestOggReader {
    static func packets(_ bytes: [UInt8]) -> [[UInt8]] {
        var oy = ogg_sync_state()
        ogg_sync_init(&oy)
        defer { ogg_sync_clear(&oy) }
        var os = ogg_stream_state()
        var ready = false
        defer { if ready { ogg_stream_clear(&os) } }
        let buf = ogg_sync_buffer(&oy, bytes.count)!
        bytes.withUnsafeBytes { UnsafeMutableRawPointer(buf).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        ogg_sync_wrote(&oy, bytes.count)
        var og = ogg_page()
        var op = ogg_packet()
        var out: [[UInt8]] = []
        while ogg_sync_pageout(&oy, &og) == 1 {
            if !ready {
                ogg_stream_init(&os, ogg_page_serialno(&og))
                ready = true
            }
            ogg_stream_pagein(&os, &og)
            while ogg_stream_packetout(&os, &op) == 1 {
                out.append(Array(UnsafeRawBufferPointer(start: op.packet, count: op.bytes)))
            }
        }
        return out
    }

    /// Decoded mono PCM of the whole file, as a player would output it.
    static func decode(_ bytes: [UInt8], channels: Int = 1) -> [Float] {
        let all = packets(bytes)
        guard all.count >= 2, let head = OpusHead.parse(all[0]) else { return [] }
        let report = OggOpusVerifier.verify(bytes)
        var pcm = TestEncoder.decode(Array(all.dropFirst(2)), channels: channels)
        let pre = Int(head.preSkip) * channels
        pcm.removeFirst(min(pre, pcm.count))
        let keep = Int((report.durationMillis * 48).rounded()) * channels
        if pcm.count > keep { pcm.removeLast(pcm.count - keep) }
        return pcm
    }
}

/// One scripted RTP packet.
struct ScriptedPacket {
    var sequence: UInt16
    var timestamp: UInt32
    var arrivalNanos: UInt64
    var ssrc: UInt32
    var payload: [UInt8]
    /// Non-zero: this entry is an RTCP sender report pairing this NTP time with `timestamp`.
    var ntp: UInt64 = 0
}

/// Builds RTP packet streams from Opus packets: 20 ms apart, with wrap-around counters.
struct PacketScript {
    var packets: [ScriptedPacket] = []

    /// Appends `opus` as a run starting at `startSeconds` (arrival and media time).
    mutating func append(
        _ opus: [[UInt8]], ssrc: UInt32 = 0x1111, firstSequence: UInt16, firstTimestamp: UInt32, startSeconds: Double,
        frameSamples: Int = 960, networkDelayMillis: Double = 30
    ) {
        for (i, p) in opus.enumerated() {
            let media = startSeconds + Double(i * frameSamples) / 48000
            packets.append(
                ScriptedPacket(
                    sequence: firstSequence &+ UInt16(truncatingIfNeeded: i),
                    timestamp: firstTimestamp &+ UInt32(truncatingIfNeeded: i * frameSamples),
                    arrivalNanos: UInt64((media + networkDelayMillis / 1000) * 1e9) + 1_000_000_000, ssrc: ssrc, payload: p))
        }
    }
}

/// Collects sinks in memory, by output.
final class MemorySinks: RecordingSinkFactory, @unchecked Sendable {
    // @unchecked: used from one thread at a time in tests (engine thread, then the test).
    var sinks: [RecordingOutput: MemorySink] = [:]
    /// Every segment of each output, in order (rotation); the first is also in `sinks`.
    var segments: [RecordingOutput: [MemorySink]] = [:]
    func makeSink(for output: RecordingOutput) throws -> PageSink {
        let s = MemorySink()
        sinks[output] = s
        segments[output] = [s]
        return s
    }
    func makeSink(for output: RecordingOutput, segment: Int) throws -> PageSink {
        guard segment > 1 else { return try makeSink(for: output) }
        let s = MemorySink()
        segments[output, default: []].append(s)
        return s
    }
    func participant(_ identity: String) -> MemorySink? {
        sinks.first { if case .participant(let id, _) = $0.key { return id == identity } else { return false } }?.value
    }
    var room: MemorySink? { sinks[.room] }
}

/// Runs a ``MediaEngine`` in virtual time: session sample 0 is at 1 s of virtual time
/// (the scripts' arrival times are offset by that second).
final class VirtualRecording {
    let engine: MediaEngine
    let sinks = MemorySinks()
    let pages = DirectPageWriter()
    var events: [MediaEvent] = []
    var rings: [String: PacketRing] = [:]
    static let origin: UInt64 = 1_000_000_000

    init(config: MediaPipelineConfig = MediaPipelineConfig()) {
        var c = config
        if c.room.isEmpty { c.room = "test-room" }
        let box = EventBox()
        engine = MediaEngine(config: c, startNanos: Self.origin, sinks: sinks, pages: pages) { box.events.append($0) }
        eventBox = box
    }
    private let eventBox: EventBox
    final class EventBox { var events: [MediaEvent] = [] }
    var allEvents: [MediaEvent] { eventBox.events }

    func add(_ identity: String, name: String? = nil, sid: String? = nil, at: UInt64 = origin) -> PacketRing {
        let ring = PacketRing(capacity: 256)
        rings[identity] = ring
        engine.apply(.addTrack(MediaTrackSpec(trackSid: sid ?? "TR_\(identity)", participantIdentity: identity, participantName: name ?? identity), ring), now: at)
        return ring
    }

    /// Delivers the scripted packets to `ring` in arrival order (stable for equal
    /// arrivals, so a script can reorder by listing packets out of order) while stepping
    /// virtual time in 5 ms ticks up to `until`; `controls` fire at their times.
    func run(_ streams: [(PacketRing, [ScriptedPacket])], until: UInt64, controls: [(UInt64, MediaControl)] = [], from: UInt64 = origin) {
        var queue: [(UInt64, Int, PacketRing, ScriptedPacket)] = []
        var order = 0
        for (ring, list) in streams {
            for p in list {
                queue.append((p.arrivalNanos, order, ring, p))
                order += 1
            }
        }
        queue.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        var ctl = controls.sorted { $0.0 < $1.0 }
        var qi = 0
        var now = from
        while now <= until {
            while let c = ctl.first, c.0 <= now {
                engine.apply(c.1, now: c.0)
                ctl.removeFirst()
            }
            while qi < queue.count && queue[qi].0 <= now {
                let (_, _, ring, p) = queue[qi]
                let h = MediaPacketHeader(
                    kind: p.ntp != 0 ? .senderReport : .rtp, ssrc: p.ssrc, sequenceNumber: p.sequence, rtpTimestamp: p.timestamp,
                    payloadType: 111, arrivalNanos: p.arrivalNanos, ntpTimestamp: p.ntp)
                p.payload.withUnsafeBytes { _ = ring.push(h, payload: $0) }
                qi += 1
                if ring.count >= ring.capacity - 1 { engine.process(now: now) }
            }
            engine.process(now: now)
            now += 5_000_000
        }
    }

    func finish(at: UInt64) { engine.finish(now: at) }
}

/// Writes bytes to a fresh temporary file and returns its path.
func temporaryFile(_ bytes: [UInt8], name: String = "test.opus") throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bedrud-media-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let url = dir.appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url.path
}

func temporaryDirectory() throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bedrud-media-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir.path
}

/// Runs a program and returns (exit status, stdout + stderr).
func runTool(_ path: String, _ args: [String]) throws -> (Int32, String) {
    let p = try ChildProcess(URL(fileURLWithPath: path), args, mergeStderr: true)
    let (termination, timedOut) = p.finish(timeout: 120)
    return (timedOut ? -1 : termination.code, p.stdout)
}

/// Normalized cross-correlation at lag 0.
func correlation(_ a: [Float], _ b: [Float]) -> Double {
    let n = min(a.count, b.count)
    var ab = 0.0, aa = 0.0, bb = 0.0
    for i in 0..<n {
        ab += Double(a[i]) * Double(b[i])
        aa += Double(a[i]) * Double(a[i])
        bb += Double(b[i]) * Double(b[i])
    }
    return aa > 0 && bb > 0 ? ab / (aa * bb).squareRoot() : 0
}

/// The best normalized correlation of `a` with `b` shifted by up to ±`maxLag` samples,
/// and that lag (positive: `b` is late in `a`).
func bestCorrelation(_ a: [Float], _ b: [Float], maxLag: Int) -> (Double, Int) {
    var best = (-2.0, 0)
    for lag in -maxLag...maxLag {
        let n = min(a.count, b.count)
        var ab = 0.0, aa = 0.0, bb = 0.0
        for i in max(0, lag)..<min(n, n + lag) {
            let x = Double(a[i]), y = Double(b[i - lag])
            ab += x * y
            aa += x * x
            bb += y * y
        }
        let c = aa > 0 && bb > 0 ? ab / (aa * bb).squareRoot() : 0
        if c > best.0 { best = (c, lag) }
    }
    return best
}

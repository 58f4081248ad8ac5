import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRTC
import Foundation
import Synchronization

/// `bedrud-bot dev-publish ROOM|LINK --tone HZ --seconds S` (hidden, for the tests of the
/// publishing path until `play` lands): joins, publishes a libopus-encoded sine tone as a
/// microphone track for S seconds, leaves when every packet has gone out, exits 0.
enum PlayDevPublish {
    static let spec = CommandSpec(
        "dev-publish", summary: "(developer) publish a sine tone to a room for S seconds",
        discussion: "Used by the publishing tests: add_track, track_published, renegotiation, paced RTP, leave.",
        arguments: [ArgumentSpec("ROOM|LINK", help: "room name or meeting link")],
        options: [
            OptionSpec("tone", value: "HZ", help: "Tone frequency (default 440)."),
            OptionSpec("seconds", value: "S", help: "How long to publish (default 3)."),
            OptionSpec("guest-name", value: "NAME", help: "Display name as a guest (default: bedrud-bot)."),
        ],
        hidden: true,
        action: run)

    /// Waits for room events the command needs (set by the event task).
    final class Watch: Sendable {
        private let published = Mutex<[String: String]>([:])
        private let ended = Mutex<RoomDisconnectReason?>(nil)
        private let refusal = Mutex<String?>(nil)
        func note(_ e: RoomEvent) {
            switch e {
            case .localTrackPublished(let cid, let track): published.withLock { $0[cid] = track.sid }
            case .disconnected(let r): ended.withLock { $0 = r }
            case .requestRefused(let r) where r.kind == .addTrack:
                refusal.withLock { $0 = "\(r.reason)" + (r.message.isEmpty ? "" : " (\(TerminalText.sanitize(String(r.message.prefix(200)))))") }
            default: break
            }
        }
        func sid(_ cid: String) -> String? { published.withLock { $0[cid] } }
        var endedReason: RoomDisconnectReason? { ended.withLock { $0 } }
        /// Why the server refused add_track, if it did.
        var refused: String? { refusal.withLock { $0 } }
    }

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let hz = Double(inv.value("tone") ?? "440") ?? 440
        let seconds = Double(inv.value("seconds") ?? "3") ?? 3
        guard hz > 0, hz < 20_000, seconds > 0, seconds <= 3600 else { throw CommandFailure(.usage, "--tone must be 1–19999 Hz and --seconds 0–3600") }
        // Encoded before joining: nothing is encoded on the way out.
        let n = Int(seconds * 48_000)
        let pcm = (0..<n).map { Float(0.3 * sin(2 * Double.pi * hz * Double($0) / 48_000)) }
        let packets = MediaBenchmark.encode(pcm, bitrate: 32_000)

        let plan = try JoinPlan.make(ctx, target: inv.positionals[0])
        let join = try await plan.requestToken()
        let transport = WebRTCTransport(router: nil, localAddresses: RoomRun.isLoopback(join.livekitHost) ? ["127.0.0.1"] : [], publishData: true)
        let room = RoomManager(livekitHost: join.livekitHost, tls: plan.instance.tls, clientVersion: BedrudBotVersion.string,
                               transport: transport, tokenProvider: { try await plan.requestToken().token })
        let watch = Watch()
        let events = Task { for await e in room.events { watch.note(e) } }
        defer { events.cancel() }
        await room.connect(token: join.token)
        func fail(_ code: ExitCode, _ why: String) async -> CommandFailure {
            _ = await room.leave()
            await transport.shutdown()
            return CommandFailure(code, why)
        }
        guard await transport.waitForDataChannel("_reliable", timeoutSeconds: 20) else {
            throw await fail(.network, "the publisher connection did not come up" + (transport.lastError.map { ": \($0)" } ?? ""))
        }
        let cid = "TR_" + UUID().uuidString.lowercased()
        await room.send(LiveKit.SignalRequest(.addTrack(.microphone(cid: cid, name: "tone \(Int(hz)) Hz", stereo: false, dtx: false))))
        let deadline = Date().addingTimeInterval(10)
        while watch.sid(cid) == nil {
            if let why = watch.refused { throw await fail(.forbidden, "the server refused to publish the track: \(why); the account or guest needs publish permission in this room") }
            if watch.endedReason != nil || Date() > deadline { throw await fail(.forbidden, "the server did not publish the track (no track_published)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        let ring = PacketRing(capacity: 64)
        let (mid, start) = try await transport.publishAudio(cid: cid, stereo: false, dtx: false, ring: ring, timeoutSeconds: 20)
        // The producer runs ahead of the send deadlines by at most 200 ms, on its own thread.
        let producer = PacedProducer(packets: packets, ring: ring, startNanos: start)
        await producer.run()
        let drainDeadline = Date().addingTimeInterval(5)
        while await !transport.isAudioDrained(mid: mid), Date() < drainDeadline { try await Task.sleep(for: .milliseconds(20)) }
        let sent = await transport.publisherStats()?.transport.rtpPacketsSent ?? 0
        _ = await room.leave()
        await transport.shutdown()
        inv.console.err("Published \(sent) packets (\(packets.count) encoded) as \(cid).")
        return sent == UInt64(packets.count) ? .success : .network
    }
}

/// Pushes encoded 20 ms packets into a send ring no more than `lead` ahead of their send
/// deadlines, sleeping on the monotonic clock (absolute deadlines) between them.
final class PacedProducer: Sendable {
    let packets: [[UInt8]]
    let ring: PacketRing
    let pacer: RTPPacer
    static let leadNanos: UInt64 = 200_000_000

    init(packets: [[UInt8]], ring: PacketRing, startNanos: UInt64) {
        self.packets = packets
        self.ring = ring
        pacer = RTPPacer(startNanos: startNanos, clockRate: 48_000)
    }

    func run() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let t = Thread { [self] in
                for (i, p) in packets.enumerated() {
                    let sample = UInt64(i) * 960
                    let due = pacer.deadline(samples: sample)
                    if due > Self.leadNanos {
                        var ts = timespec(tv_sec: Int((due - Self.leadNanos) / 1_000_000_000), tv_nsec: Int((due - Self.leadNanos) % 1_000_000_000))
                        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
                    }
                    let h = MediaPacketHeader(ssrc: 0, rtpTimestamp: UInt32(truncatingIfNeeded: sample), payloadType: 0x80 | 20, marker: i == 0, arrivalNanos: 0)
                    while !p.withUnsafeBytes({ ring.push(h, payload: $0) }) {
                        var ts = timespec(tv_sec: 0, tv_nsec: 5_000_000)
                        nanosleep(&ts, nil)  // full ring: the sender is behind; wait one tick
                    }
                }
                c.resume()
            }
            t.name = "bedrud-publish"
            t.start()
        }
    }
}

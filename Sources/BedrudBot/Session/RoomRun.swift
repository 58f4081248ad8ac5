import BedrudCore
import BedrudMedia
import BedrudNet
import BedrudProtocol
import BedrudRTC
import Foundation
import Synchronization

/// What a `join` run should do once in the room.
struct RoomRunOptions: Sendable {
    var record = false
    var outputDir = "recordings"
    var pathTemplate = "{room}/{date}_{time}"
    var mix = true
    var mixChannels = 1
    var mixBitrate = 32000
    var jitterWaitMillis = 60
    var duration: Double?
    var aloneTimeout: Double = 60
    var showStats = false
    /// `--json`: room events as JSON lines on stdout (the objects of events.jsonl) instead of text.
    var json = false
    var statsIntervalSeconds: Double = 5
    /// Permissions of recorded files and of the folders made for them (meetings are private).
    var fileMode: mode_t = 0o640
    var directoryMode: mode_t = 0o750
    /// Other participants that are bots, not people (see ``BotRecognition``).
    var bots = BotRecognition()
}

/// One joined room with media: the RoomManager (signalling), the WebRTC transport, the
/// media pipeline, and — when recording — the session folder with the per-participant and
/// mixed Ogg Opus files, `events.jsonl`, `transcript.vtt` and `summary.json`.
///
/// Runs until the room ends, `duration` passes, everyone else has been gone for
/// `aloneTimeout`, or a signal arrives; then leaves, finishes the files and reports.
final class RoomRun: @unchecked Sendable {
    // @unchecked: the mutable bookkeeping below is only touched by the run's own event
    // tasks, serialized through `lock`.
    let plan: JoinPlan
    let join: JoinRoomResponse
    let options: RoomRunOptions
    let console: Console
    private let lock = Mutex<Void>(())
    private var remote: [String: String] = [:]  // identity → name, people currently in the room (bots not counted)
    private var bots: Set<String> = []  // identities of other bots in the room
    private var peopleSeen: Set<String> = []
    private var everyone: [String: String] = [:]  // identity → name, ever seen
    private var aloneSince: UInt64?
    private var chatCount = 0
    private var reconnects = 0
    private var speaking: Set<String> = []
    private var endNote: String?
    private let logger = Logger("session")

    init(plan: JoinPlan, join: JoinRoomResponse, options: RoomRunOptions, console: Console) {
        self.plan = plan
        self.join = join
        self.options = options
        self.console = console
    }

    static func isLoopback(_ livekitHost: String) -> Bool {
        guard let url = try? SignalURL.base(livekitHost: livekitHost) else { return false }
        return url.host == "127.0.0.1" || url.host == "localhost" || url.host == "::1"
    }

    func run() async throws -> ExitCode {
        let startUnixNanos = Int64(Date().timeIntervalSince1970 * 1e9)
        var folder: SessionFolder?
        if options.record {
            let base = RecordingLayout.directory(outputDir: options.outputDir, template: options.pathTemplate, room: join.room.name,
                                                 instance: plan.instance.name, startUnixSeconds: Double(startUnixNanos) / 1e9)
            folder = try SessionFolder.create(base: base, directoryMode: options.directoryMode, fileMode: options.fileMode)
        }
        defer { folder?.release() }
        let directory = folder?.path
        var pc = MediaPipelineConfig()
        pc.room = join.room.name
        pc.sessionStartUnixNanos = startUnixNanos
        pc.mix = options.record && options.mix
        pc.mixChannels = options.mixChannels
        pc.mixBitrate = options.mixBitrate
        pc.jitterWaitMillis = options.jitterWaitMillis
        let sinks: RecordingSinkFactory & Sendable = folder ?? DiscardingSinkFactory()
        let pipeline = MediaPipeline(config: pc, sinks: sinks)
        let transcript = try TranscriptWriter.make(directory: directory, json: options.json ? console : nil, startUnixNanos: startUnixNanos,
                                                   startMonotonicNanos: pipeline.startNanos, mode: options.fileMode)
        let router = MediaRouter(pipeline: pipeline)
        let transport = WebRTCTransport(router: router, localAddresses: Self.isLoopback(join.livekitHost) ? ["127.0.0.1"] : [])
        let plan = self.plan
        let room = RoomManager(livekitHost: join.livekitHost, tls: plan.instance.tls, clientVersion: BedrudBotVersion.string,
                               transport: transport, tokenProvider: { try await plan.requestToken().token })
        router.room = room

        let claims = JWTClaims(token: join.token)
        transcript?.write("session_started", [
            "room": join.room.name, "server": plan.instance.server, "livekit_host": join.livekitHost,
            "bot_identity": claims?.subject ?? "", "bot_name": claims?.name ?? "", "version": BedrudBotVersion.string,
            "note": "Chat sent before the bot joined is not stored by Bedrud or LiveKit and cannot be captured.",
        ])
        if let directory { console.note("Recording into \(directory)") }

        // Stop triggers: a signal, the duration, being alone.
        let stopCause = StopCause()
        let stop: @Sendable (String) -> Void = { why in
            if stopCause.set(why) { Task { await room.leave() } }
        }
        let watcher = SignalWatcher { sig in stop(sig == SIGINT ? "interrupted (Ctrl-C)" : "terminated (SIGTERM)") }
        defer { watcher.cancel() }

        let roomEvents = Task { await self.consumeRoomEvents(room: room, pipeline: pipeline, transcript: transcript) }
        let mediaEvents = Task { await self.consumeMediaEvents(pipeline: pipeline, transcript: transcript) }
        let status = StatusReporter(console: console, showStats: options.showStats, interval: options.statsIntervalSeconds)
        let ticker = Task {
            var tick = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                tick += 1
                if self.aloneLongEnough() { stop("everyone else left (alone for \(ConfigValues.formatDuration(self.options.aloneTimeout)))") }
                await status.tick(tick, room: room, pipeline: pipeline, transport: transport, run: self)
            }
        }
        var timer: Task<Void, Never>?
        if let duration = options.duration {
            timer = Task {
                try? await Task.sleep(for: .milliseconds(Int(duration * 1000)))
                if !Task.isCancelled { stop("duration of \(ConfigValues.formatDuration(duration)) reached") }
            }
        }

        await room.connect(token: join.token)
        let reason = await room.waitUntilFinished() ?? .left
        timer?.cancel()
        ticker.cancel()
        status.finish()
        await roomEvents.value

        // Finish the media: files end now, are closed and renamed.
        await pipeline.stop()
        await mediaEvents.value
        let rtcStats = await transport.stats()
        await transport.shutdown()
        let cause = stopCause.value
        let (code, message) = await outcome(reason, cause: cause, room: room, transport: transport)
        let media = pipeline.stats
        transcript?.write("session_ended", ["reason": reason.description, "exit_code": Int(code.rawValue), "detail": message,
                                             "duration_ms": transcript?.offsetNow() ?? 0])
        if let folder, let transcript {
            transcript.sync()
            do { try folder.writeFinished("transcript.vtt", transcript.vtt()) } catch { logger.error("\(error)") }
            let summary = Self.summary(run: self, directory: folder.path, sinks: folder, media: media, rtc: rtcStats,
                                       reason: reason, code: code, message: message, startUnixNanos: startUnixNanos,
                                       durationMs: transcript.offsetNow())
            do { try folder.writeFinished("summary.json", summary) } catch { logger.error("\(error)") }
            console.note(Self.filesLine(directory: folder.path))
        }
        if code != .success { throw CommandFailure(code, message) }
        console.note("Left the room: \(message).")
        return code
    }

    // MARK: - Events

    private func consumeRoomEvents(room: RoomManager, pipeline: MediaPipeline, transcript: TranscriptWriter?) async {
        var formatter = RoomEventFormatter()
        for await event in room.events {
            if let line = formatter.text(event), !options.json { console.event(JoinCommand.stamp(Date()) + " " + line) }
            if case .roomJoined = event { await room.send(BotRecognition.markerRequest) }
            handle(event, pipeline: pipeline)
            if let transcript { TranscriptEvents.write(event, to: transcript, formatter: formatter) }
        }
    }

    private func handle(_ event: RoomEvent, pipeline: MediaPipeline) {
        lock.withLock { _ in
            switch event {
            case .participantJoined(let p), .participantRejoined(let p, _):
                everyone[p.identity] = p.name
                if options.bots.isBot(p) {
                    bots.insert(p.identity)
                } else {
                    remote[p.identity] = p.name
                    peopleSeen.insert(p.identity)
                    aloneSince = nil
                }
            case .participantUpdated(let p, _):
                everyone[p.identity] = p.name
                if options.bots.isBot(p) {
                    // Another bot marks itself just after joining: from now on it is not company.
                    bots.insert(p.identity)
                    peopleSeen.remove(p.identity)
                    if remote.removeValue(forKey: p.identity) != nil, remote.isEmpty { aloneSince = MonotonicClock.nanos() }
                } else if remote[p.identity] != nil {
                    remote[p.identity] = p.name
                }
            case .participantLeft(let p, _):
                bots.remove(p.identity)
                pipeline.send(.participantLeft(identity: p.identity))
                if remote.removeValue(forKey: p.identity) != nil, remote.isEmpty { aloneSince = MonotonicClock.nanos() }
            case .trackMuted(let t, let who) where t.kind == .audio:
                pipeline.send(.setMuted(identity: who, muted: true))
            case .trackUnmuted(let t, let who) where t.kind == .audio:
                pipeline.send(.setMuted(identity: who, muted: false))
            case .reconnecting:
                reconnects += 1
                for identity in remote.keys { pipeline.send(.participantReconnecting(identity: identity)) }
            case .chatReceived:
                chatCount += 1
            default:
                break
            }
        }
    }

    private func consumeMediaEvents(pipeline: MediaPipeline, transcript: TranscriptWriter?) async {
        for await event in pipeline.events {
            guard let transcript else { continue }
            let name = { (identity: String) in self.lock.withLock { _ in self.everyone[identity] ?? "" } }
            TranscriptEvents.write(event, to: transcript, name: name)
            if case .warning(let text) = event { logger.warning(text) }
        }
    }

    // MARK: - Lifecycle bookkeeping

    func aloneLongEnough() -> Bool {
        guard options.aloneTimeout > 0 else { return false }
        return lock.withLock { _ in
            guard !peopleSeen.isEmpty, remote.isEmpty, let since = aloneSince else { return false }
            return Double(MonotonicClock.nanos() &- since) / 1e9 >= options.aloneTimeout
        }
    }

    var presentNames: [String] { lock.withLock { _ in remote.values.map { $0 }.sorted() } }

    private func outcome(_ reason: RoomDisconnectReason, cause: String?, room: RoomManager, transport: WebRTCTransport) async -> (ExitCode, String) {
        switch reason {
        case .left:
            // A stop by SIGTERM or Ctrl-C finishes every file, so it is a success, with or
            // without --duration: a systemd unit stopped on purpose is not "failed".
            return (.success, cause ?? "left the room")
        case .notAllowed:
            return (reason.exitCode, RoomEventFormatter.explain(reason) + (await room.lastConnectError.map { ": \($0)" } ?? ""))
        case .network:
            let connectError = await room.lastConnectError
            let why = transport.lastError ?? connectError ?? ""
            return (reason.exitCode, RoomEventFormatter.explain(reason) + (why.isEmpty ? "" : ": \(why)"))
        default:
            return (reason.exitCode, RoomEventFormatter.explain(reason))
        }
    }

    // MARK: - Outputs

    static func filesLine(directory: String) -> String {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory).sorted()) ?? []
        return "Files in \(directory): " + files.joined(separator: ", ")
    }

    static func summary(run: RoomRun, directory: String, sinks: SessionFolder?, media: MediaStats, rtc: PeerConnectionStats?,
                        reason: RoomDisconnectReason, code: ExitCode, message: String, startUnixNanos: Int64, durationMs: Int64) -> String {
        let paths = sinks?.paths ?? [:]
        var participants: [[String: Any]] = []
        let names = run.lock.withLock { _ in run.everyone }
        for p in media.participants {
            var gaps: [String: Any] = [:]
            for (cause, ms) in p.gapMillis { gaps[cause.rawValue] = ms }
            let file = paths.first { if case .participant(let id, _) = $0.key { id == p.identity } else { false } }?.value
            participants.append([
                "identity": p.identity, "name": names[p.identity] ?? "", "file": file.map { ($0 as NSString).lastPathComponent } ?? NSNull(),
                "duration_ms": p.fileDurationMillis, "packets": p.packets, "lost": p.lost, "late": p.late, "duplicates": p.duplicates,
                "fec_recovered": p.fecRecovered, "concealed_ms": p.concealedMillis, "gaps_ms": gaps,
            ])
        }
        let obj: [String: Any] = [
            "room": run.join.room.name, "server": run.plan.instance.server,
            "started": TranscriptWriter.iso(startUnixNanos), "ended": TranscriptWriter.iso(startUnixNanos + durationMs * 1_000_000),
            "duration_ms": durationMs, "end_reason": reason.description, "exit_code": Int(code.rawValue), "message": message,
            "participants": participants,
            "files": Set(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasSuffix(".part") } + ["summary.json"]).sorted(),
            "room_file": paths[.room].map { ($0 as NSString).lastPathComponent } ?? NSNull(),
            "reconnects": run.lock.withLock { _ in run.reconnects }, "chat_messages": run.lock.withLock { _ in run.chatCount },
            "network": rtc.map { s -> [String: Any] in
                ["srtp_profile": s.srtpProfile.map { "\($0)" } ?? NSNull(), "selected_pair": s.selectedPair ?? NSNull(),
                 "tracks": s.tracks.map { t in
                     ["ssrc": Int(t.ssrc), "track_sid": t.trackSID ?? NSNull(), "packets": Int(t.packetsReceived), "lost": Int(t.packetsLost),
                      "jitter_ms": t.jitterMs, "nacked": Int(t.nackedPackets), "recovered": Int(t.recoveredPackets)] as [String: Any]
                 }]
            } ?? NSNull(),
        ]
        let data = (try? JSONSerialization.data(withJSONObject: obj, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return TerminalText.escapingJSON(String(decoding: data, as: UTF8.self)) + "\n"
    }
}

/// Why a run was asked to stop (the first reason wins).
final class StopCause: Sendable {
    private let cause = Mutex<String?>(nil)
    /// Records `why` unless a reason is already set; true if this was the first.
    func set(_ why: String) -> Bool {
        cause.withLock { c in
            guard c == nil else { return false }
            c = why
            return true
        }
    }
    var value: String? { cause.withLock { $0 } }
}

import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRTC
import BedrudRuntime
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// `bedrud-bot play ROOM|LINK FILE`: joins, publishes an Ogg Opus file as it is (or a WAV
/// file, a tone or speech encoded with libopus) as a microphone track, paced from the
/// monotonic clock, and leaves when done.
enum PlayCommand {
    static let spec = CommandSpec(
        "play", summary: "publish an audio file, a tone or speech to a room and leave",
        discussion: """
            Joins ROOM (a room name or meeting link, as for 'join') and publishes FILE as a
            microphone track, then leaves and exits 0. Everyone in the room hears it; LiveKit
            shows the bot speaking while it plays.

            FILE is one of:
              - an Ogg Opus file (.opus, .ogg): sent as it is, packet for packet, with no
                re-encoding. Each packet goes out at the time its page's granule position
                gives it, so pauses (DTX) and frame sizes from 2.5 to 120 ms are kept. Mono or
                stereo comes from the file's OpusHead. The pre-skip (the encoder's start-up
                samples) is sent but not counted in the playing time.
              - a WAV file: 16-, 24- or 32-bit PCM or 32/64-bit float, mono or stereo, any
                rate from 8 to 192 kHz (resampled to 48 kHz), encoded with libopus in 20 ms
                frames (default 32 kbit/s mono, 64 kbit/s stereo; see --bitrate).
            Instead of FILE: --tone HZ (a sine tone) or --speech "TEXT" (spoken by espeak-ng,
            which must be installed: Debian/Ubuntu package espeak-ng).

            Packets are paced from the sample count against the monotonic clock (never by
            adding up intervals), so a long --loop does not drift. --loop starts again at the
            end; --duration stops after that much playing time (a tone plays 10 s without it).
            Ctrl-C or SIGTERM stops playing, leaves cleanly and exits 0. SIGUSR1 mutes or
            unmutes the track (LiveKit's mute request: others see it muted; the time keeps
            running while muted). A moderator's mute is obeyed the same way.

            On a terminal a progress line shows the time played; -q prints nothing on success.

            Examples:
              bedrud-bot play standup intro.opus
              bedrud-bot play https://meet.example.com/m/radio music.wav --loop --duration 1h
              bedrud-bot play standup --speech "The recording starts now"
              bedrud-bot play standup --tone 440 --duration 5s
            """,
        arguments: [
            ArgumentSpec("ROOM|LINK", help: "room name or meeting link"),
            ArgumentSpec("FILE", optional: true, help: "Ogg Opus or WAV file (not with --tone or --speech)"),
        ],
        options: [
            Options.tone.spec,
            Options.speech.spec,
            Options.loop.spec,
            Options.duration.spec,
            Options.bitrate.spec,
            Options.trackName.spec,
            Options.timeout.spec,
        ] + OptionGroups.link,
        action: run)

    /// Declared once: the spec lists them and the command reads them through these.
    enum Options {
        static let tone = ValueOption("tone", value: "HZ", help: "Publish a sine tone of HZ (20–20000) instead of a file.")
        static let speech = ValueOption("speech", value: "TEXT", help: "Publish TEXT spoken by espeak-ng instead of a file.")
        static let loop = Flag("loop", help: "Start again from the beginning at the end (until --duration or a signal).")
        static let duration = ValueOption("duration", short: "d", value: "DURATION", help: "Stop after this much playing time (e.g. 30s, 10m).")
        static let bitrate = ValueOption("bitrate", value: "RATE", help: "Opus bit rate for WAV, tone and speech (e.g. 48k; default 32k mono, 64k stereo).")
        static let trackName = ValueOption("track-name", value: "NAME", help: "Name of the published track (default: the file name).")
        static let timeout = ValueOption("timeout", value: "DURATION",
                                         help: "Give up joining and publishing after this long (default \(ConfigValues.formatDuration(defaultTimeout))).")
        static let defaultTimeout: Double = 30
    }

    /// What to play, read and checked before joining.
    static func source(_ inv: Invocation) throws -> (source: PlaySource, name: String) {
        let file = inv.positionals.count > 1 ? inv.positionals[1] : nil
        let tone = inv[Options.tone], speech = inv[Options.speech]
        guard [file != nil, tone != nil, speech != nil].filter({ $0 }).count == 1 else {
            throw CommandFailure(.usage, "give exactly one of FILE, --tone HZ or --speech TEXT")
        }
        let loop = inv[Options.loop]
        var bitrate: Int?
        if let b = inv[Options.bitrate] {
            guard let v = ConfigValues.bitrate(b), SettingSpec.opusBitrates.contains(v) else {
                throw CommandFailure(.usage, "--bitrate expects a bit rate between 6k and 510k, like 48k, got '\(TerminalText.quoted(b))'")
            }
            bitrate = v
        }
        do {
            if let tone {
                guard let hz = Double(tone), hz >= 20, hz <= 20_000 else { throw CommandFailure(.usage, "--tone expects a frequency from 20 to 20000 Hz, got '\(tone)'") }
                return (try PlaySource(.tone(hz: hz), loop: loop, bitrate: bitrate), "tone \(tone) Hz")
            }
            if let speech {
                guard !speech.isEmpty else { throw CommandFailure(.usage, "--speech needs some text") }
                let wav = try WAVAudio.read(try Speech.synthesize(speech)).resampled48k()
                return (try PlaySource(.pcm(samples: wav.samples, channels: wav.channels), loop: loop, bitrate: bitrate), "speech")
            }
            let path = file!
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure(.usage, "cannot read '\(path)': " + (FileManager.default.fileExists(atPath: path) ? "permission denied or not a file" : "no such file"))
            }
            let bytes = [UInt8](data)
            let name = URL(fileURLWithPath: path).lastPathComponent
            if bytes.starts(with: Array("OggS".utf8)) {
                let ogg = try OggOpusPackets.read(bytes)
                return (try PlaySource(.ogg(ogg), loop: loop), name)
            }
            if bytes.starts(with: Array("RIFF".utf8)) {
                let wav = try WAVAudio.read(bytes).resampled48k()
                return (try PlaySource(.pcm(samples: wav.samples, channels: wav.channels), loop: loop, bitrate: bitrate), name)
            }
            throw CommandFailure(.usage, "'\(path)' is neither an Ogg Opus file nor a WAV file (convert it, e.g. opusenc in.flac out.opus)")
        } catch let e as OggOpusPackets.ReadError {
            throw CommandFailure(.usage, "cannot play '\(file ?? "")': \(e)")
        } catch let e as WAVAudio.ReadError {
            throw CommandFailure(.usage, "cannot play '\(file ?? "speech")': \(e)")
        } catch let e as PlaySourceError {
            throw CommandFailure(.usage, e.description)
        }
    }

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        var duration = try inv.duration(Options.duration)
        if let d = duration, d <= 0 { throw CommandFailure(.usage, "--duration must be longer than 0") }
        let timeout = try inv.duration(Options.timeout) ?? Options.defaultTimeout
        guard timeout > 0 else { throw CommandFailure(.usage, "--timeout must be longer than 0") }
        // Read and encode-ready before joining: a bad file fails without touching the server.
        let (source, defaultName) = try source(inv)
        if source.passSamples == nil && duration == nil { duration = 10 }
        let limit = duration.map { UInt64(source.leadIn) + UInt64(($0 * 48_000).rounded()) }
        let trackName = inv[Options.trackName] ?? defaultName

        let plan = try JoinPlan.make(ctx, target: inv.positionals[0])
        let join = try await plan.requestToken()
        let session = RoomSession(plan: plan, join: join, timeout: timeout, publishData: true)
        let ring = PacketRing(capacity: 512)
        let producer = PlayProducer(source: source, ring: ring, limitSamples: limit)
        let interrupted = Atomic<Bool>(false)
        let track = PublishedTrack()
        let events = Task {
            for await e in session.events {
                if case .disconnected = e { producer.stop() }
                // A moderator's mute (LiveKit's `mute` response): stop sending until unmuted.
                if case .localTrackMutedByServer(let sid, let muted) = e,
                   let mid = track.value.withLock({ t -> String? in
                       guard let t0 = t, t0.sid == sid else { return nil }
                       t = (t0.sid, t0.mid, muted)
                       return t0.mid
                   }) {
                    await session.transport.setAudioMuted(mid: mid, muted: muted)
                    inv.console.note(muted ? "Muted by the server." : "Unmuted by the server.")
                }
            }
        }
        defer { events.cancel() }
        let signals = SignalWatcher { _ in
            interrupted.store(true, ordering: .relaxed)
            producer.stop()
            session.stopWaiting()
        }
        defer { signals.cancel() }
        await session.connect()
        func stopped() -> Bool { interrupted.load(ordering: .relaxed) }

        guard await session.waitForDataChannel(timeout: timeout) else {
            if let f = await session.leave() { throw f }
            if stopped() { return .success }
            throw CommandFailure(.network, "the publisher connection did not come up within \(ConfigValues.formatDuration(timeout))"
                                 + (session.transport.lastError.map { ": \($0)" } ?? "") + "; check that UDP to the media server is allowed")
        }
        let published: RoomSession.PublishedAudio
        do {
            published = try await session.publishAudio(name: trackName, stereo: source.isStereo, dtx: true, ring: ring, timeout: timeout)
        } catch {
            if let f = await session.leave() { throw f }
            if stopped() { return .success }
            switch error {
            case .refused(let why):
                throw CommandFailure(.forbidden, "the server refused to publish the track: \(why); the account or guest needs publish permission in this room")
            case .notPublished:
                throw CommandFailure(.forbidden, "the server did not publish the track (no track_published)")
            case .transport(let why):
                throw CommandFailure(.network, "publishing the track failed: \(why)")
            }
        }
        let mid = published.mid, start = published.startNanos
        track.value.withLock { $0 = (published.sid, mid, false) }
        // SIGUSR1 mutes or unmutes: the media stops (the timeline keeps running) and the
        // server is told with the `mute` request, so others see the track muted.
        signal(SIGUSR1, SIG_IGN)
        let toggle = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
        toggle.setEventHandler {
            guard let t = track.value.withLock({ t -> (sid: String, mid: String, muted: Bool)? in
                guard let t0 = t else { return nil }
                t = (t0.sid, t0.mid, !t0.muted)
                return t
            }) else { return }
            Task {
                await session.transport.setAudioMuted(mid: t.mid, muted: t.muted)
                await session.room.send(LiveKit.SignalRequest.mute(trackSid: t.sid, muted: t.muted))
                inv.console.note(t.muted ? "Muted (SIGUSR1 again unmutes)." : "Unmuted.")
            }
        }
        toggle.resume()
        defer { toggle.cancel() }
        let total = (source.loop ? limit : (limit.map { min($0, UInt64(source.passSamples ?? 0)) } ?? source.passSamples.map { UInt64($0) }))
            .map { " / " + Self.clock(Int64($0) - Int64(source.leadIn)) } ?? ""
        let label = TerminalText.sanitize(trackName.count > 40 ? String(trackName.prefix(40)) + "…" : trackName)
        let progress = inv.console.quiet || !inv.console.stderrIsTerminal ? nil : Task {
            while !Task.isCancelled {
                inv.console.errRaw("\r\u{1B}[2K▶ \(label)  " + Self.clock(producer.playedSamples(leadIn: source.leadIn)) + total)
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        await producer.run(startNanos: start)
        progress?.cancel()
        if progress != nil { inv.console.errRaw("\r\u{1B}[2K") }
        if !stopped() && session.ended == nil {
            // Woken by the tick that sends the last packet; 5 s is the safety net.
            _ = await session.transport.waitUntilAudioDrained(mid: mid, timeoutSeconds: 5)
        }
        let sent = await (session.transport as? WebRTCTransport)?.publisherStats()?.transport.rtpPacketsSent ?? 0
        if let f = await session.leave() { throw f }
        inv.console.note("Played \(Self.clock(producer.playedSamples(leadIn: source.leadIn))) of \(TerminalText.sanitize(trackName)) in '\(join.room.name)' (\(sent) packets)"
                         + (stopped() ? ", stopped by a signal." : "."))
        return .success
    }

    /// `m:ss` (or `h:mm:ss`) for samples at 48 kHz.
    static func clock(_ samples: Int64) -> String {
        let s = max(0, samples) / 48_000
        return s >= 3600 ? String(cFormat: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(cFormat: "%d:%02d", s / 60, s % 60)
    }
}

/// The track `play` published (its sid and send mid) and whether it is muted: read and
/// changed by the event task (a moderator's mute) and by SIGUSR1.
final class PublishedTrack: Sendable {
    let value = Mutex<(sid: String, mid: String, muted: Bool)?>(nil)
}

/// Speech from espeak-ng, as WAV bytes.
enum Speech {
    static func synthesize(_ text: String) throws -> [UInt8] {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/espeak-ng" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else {
            throw CommandFailure(.config, "--speech needs espeak-ng, which is not installed (Debian/Ubuntu: apt-get install espeak-ng)")
        }
        // "--" so text starting with "-" is spoken, not read as an option.
        let r = try ChildOutput.run(path, ["--stdout", "--", text])
        guard r.status == 0, !r.stdout.isEmpty else {
            throw CommandFailure(.failure, "espeak-ng failed (exit \(r.status)) to speak the text")
        }
        return r.stdout
    }
}

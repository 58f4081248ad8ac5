import BedrudCore
import BedrudMedia
import BedrudNet
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Dispatch
import Glibc

/// `bedrud-bot join ROOM|LINK`.
enum JoinCommand {
    static let spec = CommandSpec(
        "join", summary: "join a room by name or meeting link and follow what happens",
        discussion: """
            ROOM is a room name on the selected instance, or a meeting link such as
            https://meet.example.com/m/standup (also /c/ROOM, with or without https://). A link to a
            server that is not a configured instance joins as a guest there.

            Prints one line per room event (joins, leaves, mutes, who speaks, chat, moderation,
            reconnects) until the room ends, --duration passes, everyone else has been gone for
            alone_timeout, or Ctrl-C or SIGTERM (which leave cleanly, finish the files and exit 0;
            a second signal stops at once with 130 and leaves the files for repair).
            With --json, each event is one JSON line on stdout instead: the objects of
            events.jsonl (docs/EVENTS.md, docs/events.schema.json), with or without --record.

            --record writes <output_dir>/<room>/<date>_<time>/: one Ogg Opus file per participant
            (their original packets, gaps filled so every file lines up with the others),
            room.opus (everyone mixed), events.jsonl (every event with UTC time and offset),
            transcript.vtt (who spoke when) and summary.json. Files are written as *.part and
            renamed when finished; 'bedrud-bot repair' finishes one left by a crash. With
            --align session (record.align) every participant's file starts at the session's
            start, padded with silence, so the files line up in any audio editor.

            --wait-for-participants leaves with exit code 14 when no person came in time. While
            recording, free space is checked before joining and every \(Int(Settings.Record.diskCheckInterval)) s: below record.min_free
            (\(Settings.Record.minFree.spec.defaultValue ?? "")) the session stops cleanly with exit code 15. --on-finish runs a command with
            the finished folder as its last argument (e.g. an upload).

            Several rooms (join A B C --record) are joined at the same time by one process that
            shares its media threads: each room gets its own session folder, summary and exit
            code, and every option applies to each room. A failing room does not stop the others;
            SIGTERM stops them all cleanly. Each room's lines start with [ROOM] (--json: each line
            has session_room, and a last run_ended line sums up the rooms). Exit 0 when every room
            succeeded, their shared code when all failed the same way, else 16.

            --dry-run resolves the room, logs in and asks the server for a LiveKit token, prints
            what it would join (never the token), and stops. --no-media joins the signalling only
            (no audio); LiveKit removes such a participant after about 60 s.

            Examples:
              bedrud-bot join standup --record --duration 90m
              bedrud-bot join https://meet.example.com/m/standup --record --output /srv/rec
              bedrud-bot join standup --stats              # receive and show network figures
              bedrud-bot join standup --record --wait-for-participants 10m --on-finish /usr/local/bin/upload-recording
              bedrud-bot join standup --dry-run
              bedrud-bot join standup retro planning --record --duration 1h   # three rooms, one process
              bedrud-bot join standup --json | jq -c 'select(.type == "chat")'
            """,
        arguments: [ArgumentSpec("ROOM|LINK", help: "room name or meeting link"),
                    ArgumentSpec("ROOM|LINK", optional: true, variadic: true, help: "more rooms, joined (and recorded) at the same time by this process")],
        options: Options.all + OptionGroups.link,
        action: run)

    /// `join`'s options, declared once: the spec lists them and the command reads them
    /// through these declarations. Help that states a default reads it from the table.
    enum Options {
        static let record = Flag("record", short: "r", help: "Write the recording: per-participant and mixed Ogg Opus, events.jsonl, transcript.vtt, summary.json.")
        static let output = ValueOption("output", short: "o", value: "DIR", help: "Recording folder root (default: record.output_dir, ~/.local/share/bedrud-bot/recordings).")
        static let duration = ValueOption("duration", short: "d", value: "DURATION", help: "Leave after this long (e.g. 30s, 90m); default: record.max_duration, else until the room ends.")
        static let aloneTimeout = ValueOption("alone-timeout", value: "DURATION",
                                              help: "Leave when nobody else has been here this long (default: \(SettingSpec.defaultText("record", "alone_timeout")); 0 = never).")
        static let maxOutage = ValueOption("max-outage", value: "DURATION",
                                           help: "Keep reconnecting this long after the connection is lost (default: \(SettingSpec.defaultText("record", "max_outage")); 0 = resume schedule only).")
        static let noMix = Flag("no-mix", help: "Do not write room.opus.")
        static let waitForRoom = ValueOption("wait-for-room", value: "DURATION", help: "When the meeting has ended (or the room does not exist yet), ask again every few seconds for this long until its owner starts it, then join (default: \(SettingSpec.defaultText("record", "wait_for_room")) = do not wait; exit 5).")
        static let noRecreate = Flag("no-recreate", help: "When the bot's account owns a room whose meeting has ended, do not start a new meeting in it (exit 5, or wait with --wait-for-room).")
        static let waitForParticipants = ValueOption("wait-for-participants", value: "DURATION", help: "Leave with exit code 14 if no person (bots do not count) came within this long (default: \(SettingSpec.defaultText("record", "wait_for_participants")) = wait).")
        static let include = ListOption("include", value: "GLOB", help: "Record only participants whose identity or display name matches (shell glob; repeatable).")
        static let exclude = ListOption("exclude", value: "GLOB", help: "Do not record participants whose identity or display name matches (shell glob; repeatable; wins over --include).")
        static let onFinish = ValueOption("on-finish", value: "COMMAND", help: "Run this shell command with the finished session folder as its last argument (default: record.on_finish).")
        static let json = Flag("json", help: "Print every room event as one JSON line on stdout (the objects of events.jsonl) instead of text lines.")
        static let split = ValueOption("split", value: "DURATION", help: "With --record: rotate the files every DURATION into numbered segments, each a valid file (default: record.split, off).")
        static let splitSize = ValueOption("split-size", value: "SIZE", help: "With --record: rotate the files when one reaches SIZE, e.g. 100MiB (default: record.split_size, off).")
        static let align = ValueOption("align", value: "join|session", help: "Start each participant's file at their first audio (join) or at the session's start, padded with silence (session) (default: \(SettingSpec.defaultText("record", "align"))).")
        static let stats = Flag("stats", help: "Print per-track network figures (packets/s, loss, jitter, NACKs) every \(Int(RoomRunOptions.statsInterval)) s.")
        static let dryRun = Flag("dry-run", help: "Only resolve, log in and get the join token; print the plan.")
        static let noMedia = Flag("no-media", help: "Signalling only: room events without audio.")

        static let all: [OptionSpec] = [
            record.spec, output.spec, duration.spec, aloneTimeout.spec, maxOutage.spec, noMix.spec, waitForRoom.spec, noRecreate.spec,
            waitForParticipants.spec, include.spec, exclude.spec, onFinish.spec, json.spec, split.spec, splitSize.spec, align.spec,
            stats.spec, dryRun.spec, noMedia.spec,
        ]
    }

    /// `--wait-for-room` (or `record.wait_for_room`), `--no-recreate` and `--record`: what
    /// ``RoomEntry`` does with an ended meeting, a missing room and a room that forbids recording.
    static func entryRules(_ inv: Invocation, _ config: Configuration, record: Bool) throws -> RoomEntry.Rules {
        var rules = RoomEntry.Rules()
        rules.recreate = !inv[Options.noRecreate]
        rules.record = record
        rules.dryRun = inv[Options.dryRun]
        let wait = try config.value(Settings.Record.waitForRoom, flag: Options.waitForRoom)
        rules.waitForRoom = wait > 0 ? wait : nil
        return rules
    }

    /// `--split` / `--split-size` win over `record.split` / `record.split_size`; both need
    /// `--record` when given as flags.
    static func splitOptions(_ inv: Invocation, _ config: Configuration, into options: inout RoomRunOptions) throws {
        for option in [Options.split, Options.splitSize] where inv[option] != nil && !inv[Options.record] {
            throw CommandFailure(.usage, "--\(option.name) rotates recorded files: add --record")
        }
        let split = try config.value(Settings.Record.split, flag: Options.split)
        if inv[Options.split] != nil, split <= 0 { throw CommandFailure(.usage, "--split must be longer than 0") }
        if split > 0 && split < 1 {
            let what = inv[Options.split] != nil ? "--split" : "record.split"
            throw CommandFailure(inv[Options.split] != nil ? .usage : .config, "\(what) must be at least 1s, got \(ConfigValues.formatDuration(split))")
        }
        options.rules.split = split > 0 ? split : nil
        options.rules.splitBytes = try config.value(Settings.Record.splitSize, flag: Options.splitSize)
        if inv[Options.splitSize] != nil, options.rules.splitBytes <= 0 {
            throw CommandFailure(.usage, "--split-size expects a size like 100MiB or 2GB, got '\(TerminalText.quoted(inv[Options.splitSize] ?? ""))'")
        }
    }

    /// A note for a mix that will sound worse than it needs to: CELT below 48 kbit/s.
    static func mixBitrateNote(coder: MixCoder, bitrate: Int) -> String? {
        guard coder == .celt, bitrate < 48000 else { return nil }
        return "record.mix_bitrate \(bitrate / 1000)k is low for the CELT mix (it needs 48k or more for speech); "
            + "for a small room.opus set record.mix_coder = voice (docs/CONFIG.md)"
    }

    /// What `join` does in the room, every setting read through ``Configuration/value(_:flag:)``:
    /// the flag, else the environment, else the file, else the table's default.
    static func roomRunOptions(_ inv: Invocation, _ config: Configuration) throws -> RoomRunOptions {
        typealias R = Settings.Record
        var options = RoomRunOptions()
        options.record = inv[Options.record]
        let duration = try config.value(R.maxDuration, flag: Options.duration)
        if inv[Options.duration] != nil, duration <= 0 { throw CommandFailure(.usage, "--duration must be longer than 0") }
        options.rules.duration = duration > 0 ? duration : nil
        options.rules.aloneTimeout = try config.value(R.aloneTimeout, flag: Options.aloneTimeout)
        options.maxOutage = try config.value(R.maxOutage, flag: Options.maxOutage)
        options.outputDir = try config.value(R.outputDir, flag: Options.output)
        options.fileMode = try config.value(R.fileMode)
        options.directoryMode = try config.value(R.dirMode)
        options.bots = BotRecognition(namePatterns: ConfigValues.list(try config.valueIfSet(R.botNames) ?? ""))
        options.pathTemplate = try config.value(R.pathTemplate)
        options.media.mix = try !inv[Options.noMix] && config.value(R.mix)
        options.media.mixChannels = try config.value(R.mixChannels)
        options.media.mixBitrate = try config.value(R.mixBitrate)
        options.media.mixComplexity = try config.value(R.mixComplexity)
        options.media.mixPassthrough = try config.value(R.mixPassthrough)
        options.media.mixCoder = try config.value(R.mixCoder)
        if options.record && options.media.mix, let note = mixBitrateNote(coder: options.media.mixCoder, bitrate: options.media.mixBitrate) {
            inv.console.warning(note)
        }
        options.media.jitterWaitMillis = try config.value(R.jitterWait)
        options.media.fileJitterWaitMillis = try config.value(R.fileJitterWait)
        options.showStats = inv[Options.stats]
        options.media.alignToSession = try config.value(R.alignToSession, flag: Options.align)
        let wait = try config.value(R.waitForParticipants, flag: Options.waitForParticipants)
        options.rules.waitForParticipants = wait > 0 ? wait : nil
        options.rules.minFreeBytes = try config.value(R.minFree)
        try splitOptions(inv, config, into: &options)
        options.onFinish = try config.valueIfSet(R.onFinish, flag: Options.onFinish).flatMap { $0.isEmpty ? nil : $0 }
        options.onFinishTimeout = try config.value(R.onFinishTimeout)
        options.filter = ParticipantFilter(include: inv[Options.include].flatMap(ConfigValues.list),
                                           exclude: inv[Options.exclude].flatMap(ConfigValues.list))
        options.json = inv[Options.json]
        options.announce = try config.value(R.announce)
        options.entry = try entryRules(inv, config, record: options.record)
        return options
    }

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        if inv[Options.noMedia] && inv[Options.record] {
            throw CommandFailure(.usage, "--record needs media; drop --no-media")
        }
        if inv[Options.noMedia] {
            let given = [(Options.waitForParticipants.name, inv[Options.waitForParticipants] != nil),
                         (Options.include.name, !inv[Options.include].isEmpty), (Options.exclude.name, !inv[Options.exclude].isEmpty)]
            for (name, isGiven) in given where isGiven {
                throw CommandFailure(.usage, "--\(name) needs media; drop --no-media")
            }
        }
        if inv[Options.onFinish] != nil && !inv[Options.record] {
            throw CommandFailure(.usage, "--on-finish runs with the finished recording folder: add --record")
        }
        let options = try roomRunOptions(inv, ctx.config)
        let duration = options.rules.duration

        if inv.positionals.count > 1 {
            try severalRoomsAllowed(inv)
            return try await MultiRoomRun(ctx: ctx, targets: inv.positionals, options: options, console: inv.console, dryRun: inv[Options.dryRun]).run()
        }
        var plan = try JoinPlan.make(ctx, target: inv.positionals[0])
        plan.entryRules = options.entry
        let (join, summary) = try await requestToken(plan, console: inv.console)
        if inv[Options.dryRun] {
            inv.console.out(summary)
            return .success
        }
        inv.console.note(summary)
        if !inv[Options.noMedia] {
            return try await RoomRun(plan: plan, join: join, options: options, console: inv.console).run()
        }
        var roomOptions = RoomManagerOptions()
        roomOptions.state.maxOutageMs = Int64(options.maxOutage * 1000)
        roomOptions.signalConnectTimeout = try ctx.config.value(Settings.Network.connectTimeout) + 5
        let session = RoomSession(signallingOnly: plan, join: join, options: roomOptions)
        return try await follow(session, duration: duration, json: options.json, console: inv.console)
    }

    /// Asks for the room's LiveKit token; returns it with the line that says what is joined.
    static func requestToken(_ plan: JoinPlan, console: Console? = nil) async throws -> (JoinRoomResponse, String) {
        let join = try await plan.requestToken(console: console)
        let claims = JWTClaims(token: join.token)
        let who = claims?.subject ?? "?"
        let name = claims?.name.map { " '\($0)'" } ?? ""
        let valid = claims?.expiresAt.map { " (token valid \(ConfigValues.formatDuration(max(0, ($0 - Date().timeIntervalSince1970).rounded()))))" } ?? ""
        let via = plan.isThrowawayGuest ? " as a guest" : " via instance '\(plan.instance.name)'"
        return (join, "Room '\(join.room.name)' on \(plan.instance.server)\(via): LiveKit at \(join.livekitHost), joining as \(who)\(name)\(valid).")
    }

    /// Several rooms (`join A B …`): every option applies to each room, except
    /// `--no-media` (which follows one room's signalling) and a room given twice.
    static func severalRoomsAllowed(_ inv: Invocation) throws {
        if inv[Options.noMedia] {
            throw CommandFailure(.usage, "--no-media follows one room: give one ROOM|LINK, or drop --no-media")
        }
        var seen = Set<String>()
        for target in inv.positionals where !seen.insert(target).inserted {
            throw CommandFailure(.usage, "'\(target)' is given twice: each room is joined once")
        }
    }

    /// Follows a signalling-only session until the room ends, `duration` passes or a signal
    /// arrives, printing events (as JSON lines with `json`, offsets from now).
    static func follow(_ session: RoomSession, duration: Double?, json: Bool, console: Console) async throws -> ExitCode {
        let room = session.room
        let watcher = SignalWatcher { _ in
            Task { await room.leave() }
        }
        defer { watcher.cancel() }
        let lines = try json ? TranscriptWriter(path: nil, startUnixNanos: Int64(Date().timeIntervalSince1970 * 1e9),
                                                startMonotonicNanos: MonotonicClock.nanos(), echo: console) : nil
        let printer = Task {
            var formatter = RoomEventFormatter()
            for await event in session.events {
                if let line = formatter.text(event), lines == nil { console.event(Self.stamp(Date()) + " " + line) }
                if let lines { TranscriptEvents.write(event, to: lines, formatter: formatter) }
            }
        }
        await session.connect()
        var timer: Task<Void, Never>?
        if let duration {
            timer = Task {
                try? await Task.sleep(for: .milliseconds(Int(duration * 1000)))
                if !Task.isCancelled { await room.leave() }
            }
        }
        _ = await room.waitUntilFinished()
        timer?.cancel()
        // The room has ended: `leave` only says why, in the one final line every command
        // prints; nil for a clean leave (a signal or --duration, docs/CLI.md).
        let failure = await session.leave()
        await printer.value
        if let failure { throw failure }
        return .success
    }

    static func stamp(_ d: Date) -> String {
        var t = time_t(d.timeIntervalSince1970)
        var tmv = tm()
        localtime_r(&t, &tmv)
        let ms = Int((d.timeIntervalSince1970 - floor(d.timeIntervalSince1970)) * 1000)
        return String(cFormat: "%02d:%02d:%02d.%03d", tmv.tm_hour, tmv.tm_min, tmv.tm_sec, ms)
    }
}

import Synchronization

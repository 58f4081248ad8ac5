import BedrudMedia
import BedrudProtocol
import FoundationEssentials

/// `bedrud-bot smoke ROOM|LINK`: the end-to-end test of a Bedrud deployment. One process,
/// two participants (publisher and listener, separate identities); each stage is timed and
/// decided by ``SmokeRun`` and carried out by ``SmokeShell`` (docs/SMOKE.md). The command reads
/// the options and writes the results.
enum SmokeCommand {
    static let spec = CommandSpec(
        "smoke", summary: "test a Bedrud deployment end to end (for CI)",
        discussion: """
            Joins ROOM (a room name or meeting link) twice, as a publisher and a listener with
            separate identities, and checks and times each stage: the API answers; auth; join
            tokens; signalling on both sides; ICE (the winning pair: host/srflx/relay, UDP/TCP);
            DTLS; publishing a test signal (1 kHz bursts, one per second after 1 s of
            silence); receiving and decoding it on the other side (latency of every burst,
            loss, jitter against thresholds); a chat message arriving intact; both leaving.

            Identities: for a room name or a link to a configured instance, the publisher is
            that instance's account (or its guest_name) and the listener a fresh guest; for a
            link to any other server both are guests (the room must allow guests). Bedrud
            keeps one refresh token per user: logging the same account in elsewhere ends the
            other session, so give a smoke test its own account, not a recording bot's.

            Prints a summary (✓/✗, time, measured value against threshold); --json prints one
            object instead; --junit FILE writes one testcase per stage. Exits 0 when every
            stage passed, else the code of the first failed stage (20–29, see below and
            docs/SMOKE.md).

            Examples:
              bedrud-bot smoke https://meet.example.com/m/smoke --junit smoke.xml
              bedrud-bot smoke ci-room --thresholds latency=300ms,loss=1%,jitter=20ms --json
              bedrud-bot smoke ci-room --turn-only --keep listener.wav
            """,
        arguments: [ArgumentSpec("ROOM|LINK", help: "room name or meeting link")],
        options: [
            Options.duration.spec,
            Options.thresholds.spec,
            Options.turnOnly.spec,
            Options.keep.spec,
            Options.json.spec,
            Options.junit.spec,
            Options.timeout.spec,
            Options.guestName.spec,
        ] + OptionGroups.linkTLS,
        action: run)

    /// Declared once: the spec lists them and the command reads them through these.
    enum Options {
        static let duration = ValueOption("duration", value: "DURATION",
                                          help: "Length of the test signal (default \(Int(defaultDuration))s: \(Int(defaultDuration) - 1) bursts; \(durationRangeText)).")
        /// The test signal: 1 s of silence, then one burst a second.
        static let defaultDuration: Double = 6
        static let durationRange: ClosedRange<Double> = 3...60
        static var durationRangeText: String { "\(Int(durationRange.lowerBound))s–\(Int(durationRange.upperBound))s" }
        static let thresholds = ValueOption("thresholds", value: "LIST", help: "\(SmokeThresholds.defaultsText) (the defaults); any subset.")
        static let turnOnly = Flag("turn-only", help: "Use relay (TURN) candidates only, to test the TURN server.")
        static let keep = ValueOption("keep", value: "FILE", help: "Keep the listener's decoded recording of the signal as a WAV file.")
        static let json = Flag("json", help: "Print the result as one JSON object on stdout.")
        static let junit = ValueOption("junit", value: "FILE", help: "Write a JUnit XML report: one testcase per stage.")
        static let timeout = ValueOption("timeout", value: "DURATION", help: "Limit for each network stage (default \(ConfigValues.formatDuration(defaultTimeout))).")
        static let defaultTimeout: Double = 20
        static let guestName = ValueOption("guest-name", value: "NAME", help: "Display-name prefix of the guests (default: \(defaultGuestName)).")
        static let defaultGuestName = "bedrud-smoke"
    }

    static func run(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        var thresholds = SmokeThresholds()
        let configured = ["latency": Settings.Smoke.maxLatency, "loss": Settings.Smoke.maxLoss, "jitter": Settings.Smoke.maxJitter]
        for (key, setting) in configured.sorted(by: { $0.key < $1.key }) {
            let value = try ctx.config.value(setting)
            do { try thresholds.apply("\(key)=\(value)") } catch { throw ConfigError("smoke.max_\(key): \(error.description)") }
        }
        if let t = inv[Options.thresholds] {
            do { try thresholds.apply(t) } catch { throw CommandFailure(.usage, error.description) }
        }
        let seconds = try inv.duration(Options.duration) ?? Options.defaultDuration
        guard Options.durationRange.contains(seconds) else { throw CommandFailure(.usage, "--duration must be \(Options.durationRangeText)") }
        let timeout = try inv.duration(Options.timeout) ?? Options.defaultTimeout
        guard timeout > 0 else { throw CommandFailure(.usage, "--timeout must be longer than 0") }
        let target = inv.positionals[0]
        let guest = inv[Options.guestName] ?? Options.defaultGuestName
        let plan = try JoinPlan.make(ctx, target: target)

        let shell = SmokeShell(ctx: ctx, plan: plan, guestPrefix: guest, thresholds: thresholds,
                               signal: SmokeSignal(seconds: seconds), timeout: timeout, turnOnly: inv[Options.turnOnly])
        let run = await shell.execute()

        if let keep = inv[Options.keep], let pcm = shell.keptPCM {
            do { try WAVFile.write(pcm, to: keep) } catch { inv.console.warning("could not write --keep \(keep): \(error)") }
        }
        if let junit = inv[Options.junit] {
            do { try SmokeReport.junit(run, target: target).write(toFile: junit, atomically: true, encoding: .utf8) } catch {
                inv.console.err("bedrud-bot: could not write --junit \(junit): \(error)")
            }
        }
        if inv[Options.json] {
            inv.console.out(SmokeReport.json(run, target: target, media: shell.media, icePair: shell.icePair, onsetsMs: shell.onsetsMs))
        } else {
            for line in SmokeReport.human(run, target: target) { inv.console.out(line) }
        }
        return run.exitCode
    }
}

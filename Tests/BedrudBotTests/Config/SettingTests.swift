import BedrudMedia
import BedrudProtocol
import Testing

@testable import BedrudBot

/// Typed settings and the one resolver: flag > environment > file > the table's default.
@Suite struct SettingTests {
    func config(file: String? = nil, environment: [String: String] = [:], flags: [String: String] = [:]) throws -> Configuration {
        var args = ParsedArguments()
        for (k, v) in flags { args.values[k] = [v] }
        var c = Configuration(environment: environment, flags: args)
        if let file {
            c.path = "config"
            try c.parse(file, path: "config")
        }
        return c
    }

    func message(_ body: () throws -> Any) -> String {
        do {
            _ = try body()
            return "(no error)"
        } catch {
            return "\(error)"
        }
    }

    /// Every typed setting's default is read from its row of the table and parses.
    @Test func defaultsComeFromTheTable() {
        typealias R = Settings.Record
        #expect(R.jitterWait.builtIn == 60)
        #expect(R.fileJitterWait.builtIn == 400)
        #expect(R.mixCoder.builtIn == .celt)
        #expect(R.mixBitrate.builtIn == 64000)
        #expect(R.mixComplexity.builtIn == 5)
        #expect(R.mixChannels.builtIn == 1)
        #expect(R.mix.builtIn == true)
        #expect(R.alignToSession.builtIn == false)
        #expect(R.aloneTimeout.builtIn == 60)
        #expect(R.maxOutage.builtIn == 600)
        #expect(R.fileMode.builtIn == 0o640 && R.dirMode.builtIn == 0o750)
        #expect(R.minFree.builtIn == 200 << 20)
        #expect(R.onFinishTimeout.builtIn == 600)
        #expect(R.split.builtIn == 0 && R.splitSize.builtIn == 0 && R.maxDuration.builtIn == 0)
        #expect(R.waitForRoom.builtIn == 0 && R.waitForParticipants.builtIn == 0)
        #expect(R.pathTemplate.builtIn == "{room}/{date}_{time}")
        #expect(Settings.Network.connectTimeout.builtIn == 10 && Settings.Network.readTimeout.builtIn == 30)
        #expect(Settings.Network.requestTimeout.builtIn == 60 && Settings.Network.maxResponseSize.builtIn == 16 << 20)
        #expect(Settings.Smoke.maxLatency.builtIn == "500ms" && Settings.Smoke.maxLoss.builtIn == "5%" && Settings.Smoke.maxJitter.builtIn == "30ms")
    }

    /// `join`'s options start from the same table: no second copy of a default.
    @Test func roomRunOptionsStartFromTheTable() {
        let o = RoomRunOptions()
        #expect(o.media.jitterWaitMillis == Settings.Record.jitterWait.builtIn)
        #expect(o.media.fileJitterWaitMillis == Settings.Record.fileJitterWait.builtIn)
        #expect(o.media.mixCoder == Settings.Record.mixCoder.builtIn && o.media.mixBitrate == 64000 && o.media.mixComplexity == 5)
        #expect(o.media.alignToSession == Settings.Record.alignToSession.builtIn)
        #expect(o.rules.aloneTimeout == 60 && o.maxOutage == 600 && o.rules.minFreeBytes == 200 << 20)
        #expect(o.rules.duration == nil && o.rules.split == nil && o.rules.splitBytes == 0 && o.rules.waitForParticipants == nil)
    }

    /// The lifecycle's rules start from the table too; the free-space interval the table's
    /// help states is the one the rules use.
    @Test func lifecycleRulesStartFromTheTable() throws {
        let r = SessionLifecycle.Rules()
        #expect(r.aloneTimeout == Settings.Record.aloneTimeout.builtIn && r.minFreeBytes == Settings.Record.minFree.builtIn)
        #expect(r.diskCheckInterval == 2)
        let minFree = try #require(SettingSpec.spec(section: "record", key: "min_free"))
        #expect(minFree.help.contains("every 2 s while recording"))
    }

    @Test func aFlagWinsOverTheEnvironmentWhichWinsOverTheFileWhichWinsOverTheDefault() throws {
        let s = Settings.Record.aloneTimeout
        #expect(try config().value(s, flag: JoinCommand.Options.aloneTimeout) == 60)
        #expect(try config(file: "[record]\nalone_timeout = 2m\n").value(s, flag: JoinCommand.Options.aloneTimeout) == 120)
        #expect(try config(file: "[record]\nalone_timeout = 2m\n", environment: ["BEDRUD_BOT_RECORD_ALONE_TIMEOUT": "3m"]).value(s, flag: JoinCommand.Options.aloneTimeout) == 180)
        #expect(try config(file: "[record]\nalone_timeout = 2m\n", environment: ["BEDRUD_BOT_RECORD_ALONE_TIMEOUT": "3m"],
                           flags: ["alone-timeout": "4m"]).value(s, flag: JoinCommand.Options.aloneTimeout) == 240)
        // Without the flag's name the flag is not read.
        #expect(try config(flags: ["alone-timeout": "4m"]).value(s) == 60)
        #expect(try config().valueIfSet(Settings.Record.onFinish) == nil)
        #expect(try config(flags: ["on-finish": "/bin/true"]).valueIfSet(Settings.Record.onFinish, flag: JoinCommand.Options.onFinish) == "/bin/true")
    }

    @Test func valuesAreTypedAsTheTableSays() throws {
        let c = try config(file: "[record]\njitter_wait = 0.1s\nmix_coder = VOICE\nmix_bitrate = 48k\nfile_mode = 600\nsplit_size = 1MiB\nalign = session\n")
        #expect(try c.value(Settings.Record.jitterWait) == 100)
        #expect(try c.value(Settings.Record.mixCoder) == .voice, "config check accepts any case, so join does too")
        #expect(try c.value(Settings.Record.mixBitrate) == 48000)
        #expect(try c.value(Settings.Record.fileMode) == 0o600)
        #expect(try c.value(Settings.Record.splitSize) == 1 << 20)
        #expect(try c.value(Settings.Record.alignToSession))
    }

    /// A wrong value that reached the resolver (here an environment never checked by
    /// `load`) is an error naming where it came from, never a silent default.
    @Test func aWrongValueIsAnErrorNamingItsOrigin() throws {
        let c = try config(environment: ["BEDRUD_BOT_RECORD_JITTER_WAIT": "2s", "BEDRUD_BOT_RECORD_MIX_COMPLEXITY": "11"])
        #expect(message { try c.value(Settings.Record.jitterWait) } == "env BEDRUD_BOT_RECORD_JITTER_WAIT: record.jitter_wait: expected a duration of at most 1s, got '2s'")
        #expect(message { try c.value(Settings.Record.mixComplexity) }
                == "env BEDRUD_BOT_RECORD_MIX_COMPLEXITY: record.mix_complexity: expected one of 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, got '11'")
        #expect(throws: ConfigError.self) { try c.value(Settings.Record.jitterWait) }
        #expect(Settings.Record.fileJitterWait.parse("1.5s") == nil)
        #expect(Settings.Record.fileJitterWait.parse("1s") == 1000)
    }

    /// A wrong flag is a usage error in the words the flags always used.
    @Test func aWrongFlagIsAUsageError() throws {
        typealias O = JoinCommand.Options
        func failure(_ flag: ValueOption, _ value: String, _ s: Setting<some Sendable>) -> CommandFailure? {
            do {
                _ = try config(flags: [flag.name: value]).value(s, flag: flag)
                return nil
            } catch {
                return error as? CommandFailure
            }
        }
        let d = failure(O.duration, "soon", Settings.Record.maxDuration)
        #expect(d?.code == .usage)
        #expect(d?.description == "--duration expects a duration like 30s, 10m or 1h30m, got 'soon'")
        #expect(failure(O.duration, "31d", Settings.Record.maxDuration)?.description == "--duration expects a duration of at most 30d, got '31d'")
        #expect(failure(O.splitSize, "lots", Settings.Record.splitSize)?.description == "--split-size expects a size like 100MiB or 2GB, got 'lots'")
        #expect(failure(O.align, "middle", Settings.Record.alignToSession)?.description == "--align expects join or session, got 'middle'")
        #expect(failure(O.align, "session", Settings.Record.alignToSession) == nil)
    }

    @Test func aCELTMixBelow48kGetsANote() {
        #expect(JoinCommand.mixBitrateNote(coder: .celt, bitrate: 32000)?.hasPrefix("record.mix_bitrate 32k is low for the CELT mix") == true)
        #expect(JoinCommand.mixBitrateNote(coder: .celt, bitrate: 48000) == nil)
        #expect(JoinCommand.mixBitrateNote(coder: .voice, bitrate: 32000) == nil)
    }
}

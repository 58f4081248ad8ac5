#if canImport(Glibc)
import Glibc
#endif
import BedrudMedia
import BedrudProtocol

/// One setting with its type: its row of ``SettingSpec/all`` (key, default, doc, bounds)
/// and how its checked text becomes a value. The row is the only place a default or a
/// range is written; ``Configuration/value(_:flag:)`` is the only way a command reads one.
public struct Setting<Value: Sendable>: Sendable {
    public let spec: SettingSpec
    /// Turns text that passed ``SettingSpec/problem(with:)`` into the value.
    let convert: @Sendable (String) -> Value?

    /// The row `section.key` of the table. A name not in the table is a programming
    /// mistake, caught by `SettingTests` before any release.
    init(_ section: String, _ key: String, _ convert: @escaping @Sendable (String) -> Value?) {
        guard let spec = SettingSpec.spec(section: section, key: key) else {
            preconditionFailure("\(section).\(key) is not a row of SettingSpec.all")
        }
        self.spec = spec
        self.convert = convert
    }

    /// The value of `text`, or nil when the table refuses it.
    public func parse(_ text: String) -> Value? {
        spec.problem(with: text) == nil ? convert(text) : nil
    }

    /// The table's default as a value. Only settings with a default are read this way;
    /// `SettingTests` parses every typed setting's default.
    public var builtIn: Value {
        guard let text = spec.defaultValue, let v = parse(text) else {
            preconditionFailure("\(spec.qualifiedName) has no default that parses")
        }
        return v
    }
}

extension Setting where Value == Double {
    /// A duration in seconds.
    static func seconds(_ section: String, _ key: String) -> Self { Self(section, key, ConfigValues.duration) }
}

extension Setting where Value == Int {
    /// A duration in whole milliseconds.
    static func milliseconds(_ section: String, _ key: String) -> Self {
        Self(section, key) { ConfigValues.duration($0).map { Int(($0 * 1000).rounded()) } }
    }
    /// A bit rate in bits per second.
    static func bitrate(_ section: String, _ key: String) -> Self { Self(section, key, ConfigValues.bitrate) }
    /// A whole number from a choice (`1`, `2`; `0`…`10`).
    static func number(_ section: String, _ key: String) -> Self { Self(section, key) { Int($0) } }
}

extension Setting where Value == Int64 {
    /// A size in bytes.
    static func bytes(_ section: String, _ key: String) -> Self { Self(section, key) { ConfigValues.size($0).map(Int64.init) } }
}

extension Setting where Value == Bool {
    static func yesNo(_ section: String, _ key: String) -> Self { Self(section, key, ConfigValues.bool) }
}

extension Setting where Value == String {
    static func text(_ section: String, _ key: String) -> Self { Self(section, key) { $0 } }
}

extension Setting where Value == mode_t {
    static func mode(_ section: String, _ key: String) -> Self { Self(section, key, SettingSpec.fileMode) }
}

/// The typed settings the commands read, by section. Each names its row of
/// ``SettingSpec/all``; the defaults, ranges and docs are there.
public enum Settings {
    public enum Network {
        public static let connectTimeout = Setting.seconds("network", "connect_timeout")
        public static let readTimeout = Setting.seconds("network", "read_timeout")
        public static let requestTimeout = Setting.seconds("network", "request_timeout")
        public static let maxResponseSize = Setting.bytes("network", "max_response_size")
        public static let rateLimitWait = Setting.seconds("network", "rate_limit_wait")
    }

    public enum Record {
        public static let outputDir = Setting.text("record", "output_dir")
        public static let pathTemplate = Setting.text("record", "path_template")
        public static let mix = Setting.yesNo("record", "mix")
        public static let mixChannels = Setting.number("record", "mix_channels")
        public static let mixCoder = Setting<MixCoder>("record", "mix_coder") { MixCoder(rawValue: $0.lowercased()) }
        public static let mixBitrate = Setting.bitrate("record", "mix_bitrate")
        public static let mixComplexity = Setting.number("record", "mix_complexity")
        public static let mixPassthrough = Setting.yesNo("record", "mix_passthrough")
        /// `session` lines every file up with the session's start; `join` (false) does not.
        public static let alignToSession = Setting<Bool>("record", "align") { $0.lowercased() == "session" }
        public static let split = Setting.seconds("record", "split")
        public static let splitSize = Setting.bytes("record", "split_size")
        public static let maxDuration = Setting.seconds("record", "max_duration")
        public static let aloneTimeout = Setting.seconds("record", "alone_timeout")
        public static let waitForParticipants = Setting.seconds("record", "wait_for_participants")
        public static let waitForRoom = Setting.seconds("record", "wait_for_room")
        public static let minFree = Setting.bytes("record", "min_free")
        public static let onFinish = Setting.text("record", "on_finish")
        public static let onFinishTimeout = Setting.seconds("record", "on_finish_timeout")
        public static let maxOutage = Setting.seconds("record", "max_outage")
        /// Seconds between free-space samples while recording (`record.min_free`). Not a key:
        /// a fixed rule that the table's help and `join --help` state.
        public static let diskCheckInterval: Double = 2
        public static let fileMode = Setting.mode("record", "file_mode")
        public static let dirMode = Setting.mode("record", "dir_mode")
        public static let botNames = Setting.text("record", "bot_names")
        public static let jitterWait = Setting.milliseconds("record", "jitter_wait")
        public static let fileJitterWait = Setting.milliseconds("record", "file_jitter_wait")
        /// The chat posted when recording starts; nil when set to `no` (or empty).
        public static let announce = Setting<String?>("record", "announce") { v in
            (v.isEmpty || ConfigValues.bool(v) == false) ? String?.none : v
        }
    }

    public enum Serve {
        public static let listen = Setting<ListenAddress>("serve", "listen") { ListenAddress($0) }
        public static let secretFile = Setting.text("serve", "secret_file")
        public static let rooms = Setting.text("serve", "rooms")
        public static let maxMeetings = Setting.number("serve", "max_meetings")
        public static let shard = Setting<ServeShard>("serve", "shard") { ServeShard($0) }
        public static let reconcileInterval = Setting.seconds("serve", "reconcile_interval")
    }

    public enum Smoke {
        public static let maxLatency = Setting.text("smoke", "max_latency")
        public static let maxLoss = Setting.text("smoke", "max_loss")
        public static let maxJitter = Setting.text("smoke", "max_jitter")
    }
}

extension SettingSpec {
    /// What a command-line flag for this setting expects when `value` is wrong, as
    /// `--NAME expects …, got '…'` reads; nil when the value is right.
    public func flagProblem(_ value: String) -> String? {
        guard let problem = problem(with: value) else { return nil }
        let got = ", got '\(TerminalText.quoted(value))'"
        switch kind {
        case .duration:
            if case .failure(.malformed) = ConfigValues.parseDuration(value) { return "expects a duration like 30s, 10m or 1h30m" + got }
            return "expects a duration of at most \(maximumText ?? "")" + got
        case .size:
            if case .failure(.malformed) = ConfigValues.parseSize(value) { return "expects a size like 100MiB or 2GB" + got }
            return "expects a size of at most \(maximumText ?? "")" + got
        case .bitrate:
            return "expects a bit rate between 6k and 510k, like 48k" + got
        case .choice(let options):
            let list = options.count > 1 ? options.dropLast().joined(separator: ", ") + " or " + options[options.count - 1] : options.joined()
            return "expects \(list)" + got
        default:
            return problem
        }
    }
}

extension Configuration {
    /// The effective value of `setting`: the option `flag` when given, else its
    /// environment variable, else the config file, else the table's default.
    ///
    /// A wrong flag is a usage error (`--NAME expects …`, exit 2); a wrong value from the
    /// environment or a file is a ``ConfigError`` naming where it came from (exit 3).
    public func value<T>(_ setting: Setting<T>, flag: ValueOption? = nil) throws -> T {
        try valueIfSet(setting, flag: flag) ?? setting.builtIn
    }

    /// ``value(_:flag:)`` for settings without a default: nil when nothing sets it.
    public func valueIfSet<T>(_ setting: Setting<T>, flag: ValueOption? = nil) throws -> T? {
        let spec = setting.spec
        guard let (text, origin) = resolve(spec.section, spec.key, flag: flag?.name) else { return nil }
        if case .flag(let name) = origin {
            if let p = spec.flagProblem(text) { throw CommandFailure(.usage, "--\(name) \(p)") }
        } else if let p = spec.problem(with: text) {
            throw ConfigError("\(origin): \(spec.qualifiedName): \(p)")
        }
        guard let v = setting.convert(text) else {
            throw ConfigError("\(origin): \(spec.qualifiedName): cannot read '\(TerminalText.quoted(text))'")
        }
        return v
    }
}

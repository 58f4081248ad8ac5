#if canImport(Glibc)
import Glibc
#endif
import BedrudMedia
import BedrudNet
import BedrudProtocol
import BedrudRuntime

/// One configuration key: where it lives, its type, default and documentation.
/// docs/CONFIG.md documents exactly these; a test keeps the two in step.
public struct SettingSpec: Sendable {
    public enum Kind: Sendable, Equatable {
        case string
        case url
        case path
        case duration
        case size
        case bool
        case fingerprints
        case choice([String])
        /// An Opus bit rate, `64k` or `64000`: 6k to 510k (libopus's range).
        case bitrate
        /// Octal permissions such as `0640`.
        case mode
        /// A whole number within the range.
        case count(ClosedRange<Int>)
        /// `K/N`: shard K of N (``ServeShard``).
        case shard
        /// `HOST:PORT` to listen on (``ListenAddress``).
        case listen
    }

    /// "" for top-level keys, `network`, `instance`, ...
    public var section: String
    public var key: String
    public var kind: Kind
    /// Default as written in a config file; nil when there is none.
    public var defaultValue: String?
    public var help: String
    public var example: String
    /// The largest value a duration or size setting accepts, as written in a config file
    /// (`10m`, `1GiB`); nil takes the kind's own (``defaultMaximumDuration``,
    /// ``ConfigValues/sizeCeiling``). docs/CONFIG.md, "Limits", lists them.
    public var maximum: String? = nil

    /// A duration setting without its own `maximum` accepts up to this: 30 days.
    public static let defaultMaximumDuration = "30d"

    /// The largest value in seconds (durations) or bytes (sizes); nil for other kinds.
    public var maximumValue: Double? {
        switch kind {
        case .duration: ConfigValues.duration(maximum ?? Self.defaultMaximumDuration)
        case .size: maximum.flatMap(ConfigValues.size).map(Double.init) ?? Double(ConfigValues.sizeCeiling)
        default: nil
        }
    }

    /// ``maximumValue`` as a config file writes it: `10m`, `1GiB`.
    public var maximumText: String? {
        switch kind {
        case .duration: maximum ?? Self.defaultMaximumDuration
        case .size: maximum ?? ConfigValues.formatSize(ConfigValues.sizeCeiling)
        default: nil
        }
    }

    /// `BEDRUD_BOT_<KEY>` for top-level and instance keys, `BEDRUD_BOT_<SECTION>_<KEY>` otherwise.
    public var environmentName: String {
        let s = (section.isEmpty || section == "instance") ? key : "\(section)_\(key)"
        return "BEDRUD_BOT_" + s.uppercased()
    }

    /// `network.connect_timeout`, `instance.url`, `log_level`.
    public var qualifiedName: String { section.isEmpty ? key : "\(section).\(key)" }

    /// The longest value accepted, in bytes: enough for any real URL, path or name, and
    /// short enough that a pasted file or a runaway variable is caught as a mistake.
    public var maxLength: Int {
        switch kind {
        case .url: 2048
        case .path: 4096  // PATH_MAX
        case .string: 1024
        case .fingerprints: 1024
        case .duration, .size, .bool, .choice, .mode, .bitrate, .count, .shard: 64
        case .listen: 300
        }
    }

    /// Checks a value's text; returns the reason it is wrong, or nil. Values are quoted
    /// with ``TerminalText/quoted(_:limit:)``: sanitised and cut short.
    public func problem(with value: String) -> String? {
        if value.utf8.count > maxLength {
            return "the value is \(value.utf8.count) bytes long; at most \(maxLength) are accepted (it starts '\(TerminalText.sanitize(String(value.prefix(40))))…')"
        }
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "the value contains control characters (\(TerminalText.quoted(value))); remove them"
        }
        switch kind {
        case .string, .path: return nil
        case .url:
            guard let u = WebURL(value), u.scheme == "http" || u.scheme == "https" else {
                return "expected an http:// or https:// URL, got '\(TerminalText.quoted(value))'"
            }
            return nil
        case .duration:
            guard case .success(let v) = ConfigValues.parseDuration(value), v <= maximumValue ?? ConfigValues.durationCeiling else {
                if case .failure(.malformed) = ConfigValues.parseDuration(value) {
                    return "expected a duration like 90s, 30m or 2h, got '\(TerminalText.quoted(value))'"
                }
                return "expected a duration of at most \(maximumText ?? ""), got '\(TerminalText.quoted(value))'"
            }
            return nil
        case .size:
            guard case .success(let v) = ConfigValues.parseSize(value), Double(v) <= maximumValue ?? Double(ConfigValues.sizeCeiling) else {
                if case .failure(.malformed) = ConfigValues.parseSize(value) {
                    return "expected a size like 512KiB or 16MiB, got '\(TerminalText.quoted(value))'"
                }
                return "expected a size of at most \(maximumText ?? ""), got '\(TerminalText.quoted(value))'"
            }
            return nil
        case .bool:
            return ConfigValues.bool(value) == nil ? "expected yes or no, got '\(TerminalText.quoted(value))'" : nil
        case .fingerprints:
            let items = ConfigValues.list(value)
            if items.isEmpty { return "expected a SHA-256 fingerprint like AB:CD:…, got nothing" }
            for i in items where CertificateFingerprint.parse(i) == nil {
                return "expected a SHA-256 fingerprint (64 hex digits, colons optional), got '\(TerminalText.quoted(i))'"
            }
            return nil
        case .bitrate:
            guard let v = ConfigValues.bitrate(value), Self.opusBitrates.contains(v) else {
                return "expected a bit rate between 6k and 510k, like 64k, got '\(TerminalText.quoted(value))'"
            }
            return nil
        case .mode:
            return Self.fileMode(value) == nil ? "expected octal permissions like 0640 or 0600, got '\(TerminalText.quoted(value))'" : nil
        case .choice(let options):
            return options.contains(value.lowercased()) ? nil : "expected one of \(options.joined(separator: ", ")), got '\(TerminalText.quoted(value))'"
        case .count(let range):
            guard let v = Int(value), range.contains(v) else {
                return "expected a whole number from \(range.lowerBound) to \(range.upperBound), got '\(TerminalText.quoted(value))'"
            }
            return nil
        case .shard:
            return ServeShard(value) == nil ? "expected a shard K/N with 0 <= K < N <= 1000, like 0/1 or 2/3, got '\(TerminalText.quoted(value))'" : nil
        case .listen:
            return ListenAddress(value) == nil ? "expected HOST:PORT to listen on, like 127.0.0.1:8095, 0.0.0.0:8095 or [::]:8095, got '\(TerminalText.quoted(value))'" : nil
        }
    }

    /// What libopus encodes, bits per second.
    public static let opusBitrates = 6000...510_000

    /// Octal permissions: `640`, `0640`, `0o640`; at most `0777`, and the owner must be
    /// able to read and write (or, for a folder, enter).
    public static func fileMode(_ text: String) -> mode_t? {
        var t = Substring(text.lowercased())
        if t.hasPrefix("0o") { t = t.dropFirst(2) }
        guard (3...4).contains(t.count), let v = UInt32(t, radix: 8), v <= 0o777, v & 0o600 == 0o600 else { return nil }
        return mode_t(v)
    }

    /// Every key bedrud-bot reads.
    /// The media pipeline's own defaults: the `record.*` settings that configure it take
    /// their defaults from it, so the value is written once (in ``MediaPipelineConfig``).
    private static let media = MediaPipelineConfig()

    public static let all: [SettingSpec] = [
        SettingSpec(section: "", key: "default_instance", kind: .string, defaultValue: nil,
                    help: "The [instance NAME] to use when no --instance is given. Set by 'bedrud-bot instance use'.", example: "work"),
        SettingSpec(section: "", key: "log_level", kind: .choice(LogLevel.allCases.map(\.name)), defaultValue: "info",
                    help: "How much to log on standard error.", example: "debug"),
        SettingSpec(section: "", key: "state_dir", kind: .path, defaultValue: nil,
                    help: "Where sessions (tokens) are kept, one 0600 file per instance in a 0700 folder. Default: $XDG_STATE_HOME/bedrud-bot, else ~/.local/state/bedrud-bot.",
                    example: "/var/lib/bedrud-bot"),

        SettingSpec(section: "network", key: "connect_timeout", kind: .duration, defaultValue: "10s",
                    help: "Longest wait to connect to a server (name lookup, TCP and TLS).", example: "5s", maximum: "5m"),
        SettingSpec(section: "network", key: "read_timeout", kind: .duration, defaultValue: "30s",
                    help: "Longest wait for the next byte of an answer.", example: "15s", maximum: "1h"),
        SettingSpec(section: "network", key: "request_timeout", kind: .duration, defaultValue: "60s",
                    help: "Longest time one REST request may take in all.", example: "2m", maximum: "1h"),
        SettingSpec(section: "network", key: "rate_limit_wait", kind: .duration, defaultValue: "2m",
                    help: "How long one call waits out the server's rate limit (HTTP 429, as Retry-After says, else backing off) before it fails with exit 12; 0 fails at once.",
                    example: "10m", maximum: "1h"),
        SettingSpec(section: "network", key: "max_response_size", kind: .size, defaultValue: "16MiB",
                    help: "Largest REST answer accepted.", example: "4MiB", maximum: "1GiB"),

        SettingSpec(section: "record", key: "output_dir", kind: .path, defaultValue: nil,
                    help: "Where recordings go; each session gets its own folder inside. Default: $STATE_DIRECTORY/recordings under systemd (StateDirectory=), else $XDG_DATA_HOME/bedrud-bot/recordings, else ~/.local/share/bedrud-bot/recordings.",
                    example: "/var/lib/bedrud-bot/recordings"),
        SettingSpec(section: "record", key: "path_template", kind: .string, defaultValue: "{room}/{date}_{time}",
                    help: "The session folder inside output_dir. Placeholders: {room}, {instance}, {date} (yyyy-mm-dd), {time} (HHMMSS), UTC.",
                    example: "{instance}/{room}/{date}/{time}"),
        SettingSpec(section: "record", key: "mix", kind: .bool, defaultValue: media.mix ? "yes" : "no",
                    help: "Also write room.opus, every speaker mixed (re-encoded with libopus).", example: "no"),
        SettingSpec(section: "record", key: "mix_channels", kind: .choice(["1", "2"]), defaultValue: "\(media.mixChannels)",
                    help: "1 for a mono mix; 2 for stereo with each speaker panned.", example: "2"),
        SettingSpec(section: "record", key: "mix_coder", kind: .choice(MixCoder.allCases.map(\.rawValue)), defaultValue: media.mixCoder.rawValue,
                    help: "libopus's coder for room.opus: celt (full band, keeps the waveform, half the CPU of voice) or voice (SILK/hybrid, the default before 2026-12-02 at 32k); see docs/CONFIG.md.",
                    example: "voice"),
        SettingSpec(section: "record", key: "mix_bitrate", kind: .bitrate, defaultValue: "\(media.mixBitrate / 1000)k",
                    help: "Bit rate of room.opus (per-participant files keep the original packets).", example: "48k"),
        SettingSpec(section: "record", key: "mix_complexity", kind: .choice((0...10).map(String.init)), defaultValue: "\(media.mixComplexity)",
                    help: "libopus complexity of the room.opus encoder, 0 (cheapest) to 10; see docs/CONFIG.md for what each costs and sounds like.", example: "5"),
        SettingSpec(section: "record", key: "mix_passthrough", kind: .bool, defaultValue: media.mixPassthrough ? "yes" : "no",
                    help: "While one person talks alone, write their own packets into a mono room.opus instead of encoding the mix (no CPU for the mix then; docs/BENCHMARKS.md, One voice passes through). no = always encode.",
                    example: "no"),
        SettingSpec(section: "record", key: "align", kind: .choice(["join", "session"]), defaultValue: media.alignToSession ? "session" : "join",
                    help: "Where each per-participant file starts: join = at the participant's first audio (its START_OFFSET_MS tag says when); session = at the session's start, padded with silence (about 3 KB a minute), so a late joiner lines up with everyone else in an audio editor. --align overrides it.",
                    example: "session"),
        SettingSpec(section: "record", key: "split", kind: .duration, defaultValue: "0",
                    help: "Rotate the recorded files every this long: each file continues in a numbered segment (Alice.opus, Alice.002.opus, …), every segment a valid Ogg Opus file; 0 means never. --split overrides it; SIGHUP rotates at once.",
                    example: "1h", maximum: "7d"),
        SettingSpec(section: "record", key: "split_size", kind: .size, defaultValue: "0",
                    help: "Rotate the recorded files when one of them reaches this size (checked every second); 0 means no limit. --split-size overrides it.",
                    example: "100MiB", maximum: "1024GiB"),
        SettingSpec(section: "record", key: "max_duration", kind: .duration, defaultValue: "0",
                    help: "Leave (and finish the files) after this long; 0 means no limit. --duration overrides it.", example: "90m", maximum: "30d"),
        SettingSpec(section: "record", key: "alone_timeout", kind: .duration, defaultValue: "60s",
                    help: "Leave when nobody else has been in the room for this long (after someone was there); 0 means never.",
                    example: "30s", maximum: "7d"),
        SettingSpec(section: "record", key: "wait_for_participants", kind: .duration, defaultValue: "0",
                    help: "Leave with exit code 14 when no person (bots do not count) came within this long of the session's start (joining included); 0 means wait. --wait-for-participants overrides it.",
                    example: "10m", maximum: "7d"),
        SettingSpec(section: "record", key: "wait_for_room", kind: .duration, defaultValue: "0",
                    help: "When the meeting has ended (Bedrud made the room inactive) or the room does not exist yet, ask the server again every few seconds (5 s, later 15 s and 30 s; longer when it answers 429) for this long until its owner starts it, then join; 0 means fail at once with exit code 5. For cron and timers that start before the host. --wait-for-room overrides it.",
                    example: "15m", maximum: "7d"),
        SettingSpec(section: "record", key: "min_free", kind: .size, defaultValue: "200MiB",
                    help: "Free space the recording disk must keep: checked before joining and every \(Int(Settings.Record.diskCheckInterval)) s while recording; below it the session stops cleanly with exit code 15. 0 turns the check off.",
                    example: "1GiB"),
        SettingSpec(section: "record", key: "on_finish", kind: .string, defaultValue: nil,
                    help: "A shell command run once the session folder is complete, with the folder as its last argument; BEDRUD_BOT_EXIT_CODE holds the session's exit code. Its exit code goes into summary.json.",
                    example: "/usr/local/bin/upload-recording"),
        SettingSpec(section: "record", key: "on_finish_timeout", kind: .duration, defaultValue: "10m",
                    help: "How long on_finish may run before it is stopped (SIGTERM, then SIGKILL 5 s later).", example: "30m", maximum: "1d"),
        SettingSpec(section: "record", key: "max_outage", kind: .duration, defaultValue: "10m",
                    help: "How long a lost connection is retried (resume, then rejoins with a fresh token) before the run ends; the files continue with an honest gap when it comes back. 0 gives up after the resume schedule (about 47 s). --max-outage overrides it.",
                    example: "30m", maximum: "7d"),
        SettingSpec(section: "record", key: "file_mode", kind: .mode, defaultValue: "0640",
                    help: "Permissions of recorded files (meetings are private: owner and group only by default).", example: "0600"),
        SettingSpec(section: "record", key: "dir_mode", kind: .mode, defaultValue: "0750",
                    help: "Permissions of the folders made for recordings.", example: "0700"),
        SettingSpec(section: "record", key: "bot_names", kind: .string, defaultValue: nil,
                    help: "Other bots to not count as people for alone_timeout: shell globs matched against identity and display name, comma-separated. Bots that mark themselves (every bedrud-bot does) are recognised without it.",
                    example: "\"recorder-*, Notetaker\""),
        SettingSpec(section: "record", key: "jitter_wait", kind: .duration, defaultValue: "\(media.jitterWaitMillis)ms",
                    help: "How long the live mix and speech detection wait for a missing packet before concealing it.", example: "100ms", maximum: "1s"),
        SettingSpec(section: "record", key: "file_jitter_wait", kind: .duration, defaultValue: "\(media.fileJitterWaitMillis)ms",
                    help: "How long each participant's file waits for a missing packet (a NACK retransmission) before it counts as lost; at most 1s, never shorter than jitter_wait.", example: "600ms", maximum: "1s"),

        SettingSpec(section: "record", key: "announce", kind: .string, defaultValue: "This meeting is being recorded.",
                    help: "A chat message the bot posts when it starts recording, so the people in the room know (Bedrud shows them nothing else); no turns it off.",
                    example: "\"Recording for the minutes.\""),

        SettingSpec(section: "serve", key: "listen", kind: .listen, defaultValue: "127.0.0.1:8095",
                    help: "serve: where the webhook endpoint, /healthz, /readyz and /metrics listen. --listen overrides it.", example: "0.0.0.0:8095"),
        SettingSpec(section: "serve", key: "secret_file", kind: .path, defaultValue: nil,
                    help: "serve: the file (mode 0600, first line) holding the webhook secret Bedrud signs with ('bedrud-bot webhooks add' writes it). Default: $CREDENTIALS_DIRECTORY/webhook-secret under systemd. Never a config value. --secret-file overrides it.",
                    example: "/etc/bedrud-bot/webhook-secret"),
        SettingSpec(section: "serve", key: "rooms", kind: .string, defaultValue: "*",
                    help: "serve: which rooms to record, shell globs matched against the room's name, comma-separated. --rooms overrides it.",
                    example: "\"standup, team-*\""),
        SettingSpec(section: "serve", key: "max_meetings", kind: .count(1...1000), defaultValue: "50",
                    help: "serve: the most meetings recorded at once; more wait for a free slot (the next reconcile picks them up).", example: "200"),
        SettingSpec(section: "serve", key: "shard", kind: .shard, defaultValue: "0/1",
                    help: "serve: K/N records only the rooms whose id hashes to K of N, so N replicas that all get every webhook record each meeting once. --shard overrides it.",
                    example: "1/3"),
        SettingSpec(section: "serve", key: "reconcile_interval", kind: .duration, defaultValue: "1m",
                    help: "serve: how often a superadmin account lists the active rooms and joins those it missed (webhooks are sent once and may be lost); 0 turns it off.",
                    example: "30s", maximum: "1h"),

        SettingSpec(section: "smoke", key: "max_latency", kind: .duration, defaultValue: "500ms",
                    help: "smoke: the worst burst latency allowed.", example: "300ms", maximum: "1m"),
        SettingSpec(section: "smoke", key: "max_loss", kind: .string, defaultValue: "5%",
                    help: "smoke: the packet loss allowed.", example: "1%"),
        SettingSpec(section: "smoke", key: "max_jitter", kind: .duration, defaultValue: "30ms",
                    help: "smoke: the interarrival jitter allowed.", example: "20ms", maximum: "10s"),

        SettingSpec(section: "instance", key: "url", kind: .url, defaultValue: nil,
                    help: "The Bedrud server's address (required).", example: "https://meet.example.com"),
        SettingSpec(section: "instance", key: "display_name", kind: .string, defaultValue: nil,
                    help: "A name to show for this server in 'instance list'.", example: "\"Work meetings\""),
        SettingSpec(section: "instance", key: "email", kind: .string, defaultValue: nil,
                    help: "Account to log in with, for 'login' without --email and for unattended runs.", example: "recorder@example.com"),
        SettingSpec(section: "instance", key: "password_file", kind: .path, defaultValue: nil,
                    help: "File holding the password (first line), mode 0600. Passwords are never stored by bedrud-bot; for unattended runs use this or BEDRUD_BOT_PASSWORD.",
                    example: "/etc/bedrud-bot/password"),
        SettingSpec(section: "instance", key: "guest_name", kind: .string, defaultValue: nil,
                    help: "Log in as a Bedrud guest with this display name when no email is set.", example: "\"Meeting recorder\""),
        SettingSpec(section: "instance", key: "ca_file", kind: .path, defaultValue: nil,
                    help: "PEM file of the CA (or self-signed certificate) to trust for this server instead of the system store.",
                    example: "/etc/bedrud/ca.pem"),
        SettingSpec(section: "instance", key: "pin_sha256", kind: .fingerprints, defaultValue: nil,
                    help: "Trust exactly the certificate(s) with these SHA-256 fingerprints (comma-separated); the error for an untrusted certificate prints its fingerprint.",
                    example: "AB:CD:…:EF"),
        SettingSpec(section: "instance", key: "tls_insecure", kind: .bool, defaultValue: "no",
                    help: "Skip TLS certificate verification for this server. Prints a warning on every run; use ca_file or pin_sha256 instead.",
                    example: "yes"),
    ]

    public static let sections: [String] = ["", "network", "record", "serve", "instance", "smoke"]

    public static func spec(section: String, key: String) -> SettingSpec? {
        all.first { $0.section == section && $0.key == key }
    }

    /// How help texts name a setting with its default: `record.alone_timeout, 60s`
    /// (`log_level, info` for a top-level key). The table's row is the only place the
    /// default is written; the help reads it here.
    public static func defaultText(_ section: String, _ key: String) -> String {
        guard let spec = spec(section: section, key: key), let value = spec.defaultValue else {
            preconditionFailure("\(section).\(key) is not a row of SettingSpec.all with a default")
        }
        return "\(spec.qualifiedName), \(value)"
    }

    /// Environment variables that are not config keys.
    public static let extraEnvironment: [(name: String, help: String)] = [
        ("BEDRUD_BOT_CONFIG", "Config file to read (like --config)."),
        ("BEDRUD_BOT_INSTANCE", "Instance to use (like --instance)."),
        ("BEDRUD_BOT_PASSWORD", "Password for the selected instance's email, for unattended runs. Never logged."),
    ]
}

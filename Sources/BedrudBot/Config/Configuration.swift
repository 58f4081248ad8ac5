import BedrudNet
import BedrudProtocol
import BedrudRuntime
import Dispatch
import FoundationEssentials
import Glibc

/// Where a setting's effective value came from, for `config show`.
public enum SettingOrigin: Sendable, Equatable, CustomStringConvertible {
    case builtIn
    case file(path: String, line: Int)
    case environment(String)
    case flag(String)

    public var description: String {
        switch self {
        case .builtIn: "default"
        case .file(let p, let l): "\(p):\(l)"
        case .environment(let n): "env \(n)"
        case .flag(let f): "flag --\(f)"
        }
    }
}

/// A configuration problem: `file:line: message`, or just a message.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public var file: String?
    public var line: Int?
    public var message: String

    public init(file: String? = nil, line: Int? = nil, _ message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        switch (file, line) {
        case let (f?, l?): "\(f):\(l): \(message)"
        case let (f?, nil): "\(f): \(message)"
        default: message
        }
    }
}

/// One `[instance NAME]` section (or the instance described by environment variables).
public struct InstanceConfig: Sendable {
    public var name: String
    /// Line of the section header, when it came from a file.
    public var line: Int?
    public var values: [String: (value: String, origin: SettingOrigin)] = [:]

    public func value(_ key: String) -> String? { values[key]?.value }
}

/// The effective settings: command-line flag > environment (`BEDRUD_BOT_*`) > config
/// file > built-in default.
public struct Configuration: Sendable {
    /// The file read, if any.
    public var path: String?
    public var fileText: String?
    public var document = ConfigSyntax.Document()
    public var environment: [String: String]
    public var flags: ParsedArguments
    /// Problems that do not stop a run: unknown keys (with suggestions), duplicates. At
    /// most ``warningLimit`` are kept; ``moreWarnings`` counts the rest.
    public var warnings: [ConfigError] = []
    /// Warnings beyond ``warningLimit``, counted and not kept.
    public var moreWarnings = 0
    /// How many warnings are kept and printed: a file of a million duplicate lines gets
    /// this many lines of warning and one that counts the rest.
    public static let warningLimit = 20

    mutating func warn(_ w: ConfigError) {
        if warnings.count < Self.warningLimit { warnings.append(w) } else { moreWarnings += 1 }
    }

    /// Every warning in all, kept or counted.
    public var warningCount: Int { warnings.count + moreWarnings }

    /// The warnings as printed: the kept ones, then `… and 2,999,999 more warnings`.
    public var warningLines: [String] {
        warnings.map(\.description) + (moreWarnings == 0 ? [] : ["… and \(Self.grouped(moreWarnings)) more warning\(moreWarnings == 1 ? "" : "s")"])
    }

    /// `2999999` as `2,999,999`.
    static func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(d)
        }
        return out
    }
    public var instances: [InstanceConfig] = []

    // MARK: - Loading

    /// Finds the config file: `--config`, else `BEDRUD_BOT_CONFIG`, else
    /// `$XDG_CONFIG_HOME/bedrud-bot/config` (or `~/.config/bedrud-bot/config`), else
    /// `/etc/bedrud-bot/config`. Returns nil when none exists.
    public static func locate(flags: ParsedArguments, environment: [String: String]) -> (path: String, explicit: Bool)? {
        if let p = flags[GlobalOptions.config] { return (p, true) }
        if let p = environment["BEDRUD_BOT_CONFIG"], !p.isEmpty { return (p, true) }
        for p in [userConfigPath(environment), "/etc/bedrud-bot/config"] where FileManager.default.fileExists(atPath: p) {
            return (p, false)
        }
        return nil
    }

    /// `$XDG_CONFIG_HOME/bedrud-bot/config`, or `~/.config/bedrud-bot/config`.
    public static func userConfigPath(_ environment: [String: String]) -> String {
        if let x = environment["XDG_CONFIG_HOME"], x.hasPrefix("/") { return x + "/bedrud-bot/config" }
        return home(environment) + "/.config/bedrud-bot/config"
    }

    static func home(_ environment: [String: String]) -> String {
        environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? getpwuid(getuid()).flatMap { $0.pointee.pw_dir.map { String(cString: $0) } } ?? "/"
    }

    /// Reads, parses and checks the configuration. Unknown keys become warnings;
    /// everything else wrong is a ``ConfigError`` naming the file and line.
    ///
    /// Only the default locations may be absent. A file named by `--config` or
    /// `BEDRUD_BOT_CONFIG` that cannot be read (missing, a dangling link, a loop, a folder)
    /// is an error naming it, except with `mayCreate` (`instance add`, which creates it).
    public static func load(flags: ParsedArguments, environment: [String: String], mayCreate: Bool = false) throws -> Configuration {
        var c = Configuration(environment: environment, flags: flags)
        if let (path, explicit) = locate(flags: flags, environment: environment) {
            var st = stat()
            if mayCreate && explicit && lstat(path, &st) != 0 && errno == ENOENT {
                // A named file that does not exist yet: the command creates it.
                c.path = path
            } else {
                let text = try readFile(path)
                c.path = path
                c.fileText = text
                try c.parse(text, path: path)
            }
        }
        try c.checkEnvironment()
        return c
    }

    /// The text of a config file: at most ``ConfigSyntax/maxFileBytes`` of UTF-8. Every
    /// failure is a ``ConfigError`` that names the file and says what is wrong with it.
    public static func readFile(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let e = errno
            var st = stat()
            switch e {
            case ENOENT where lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK:
                var buffer = [CChar](repeating: 0, count: 4097)
                let n = readlink(path, &buffer, 4096)
                let target = n > 0 ? " to '\(TerminalText.quoted(String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self), limit: 200))'" : ""
                throw ConfigError(file: path, "cannot read the config file: it is a symbolic link\(target), which does not exist")
            case ENOENT: throw ConfigError(file: path, "cannot read the config file: it does not exist")
            case ELOOP: throw ConfigError(file: path, "cannot read the config file: its symbolic links go round in a loop")
            case EACCES: throw ConfigError(file: path, "cannot read the config file: permission denied")
            default: throw ConfigError(file: path, "cannot read the config file: \(String(cString: strerror(e)))")
            }
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ConfigError(file: path, "cannot read the config file: \(String(cString: strerror(errno)))") }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            let what = (st.st_mode & S_IFMT) == S_IFDIR ? "a folder" : "not a regular file"
            throw ConfigError(file: path, "cannot read the config file: it is \(what)")
        }
        let limit = ConfigSyntax.maxFileBytes
        if Int(st.st_size) > limit {
            throw ConfigError(file: path, "the file is \(st.st_size) bytes; a config file may be at most \(ConfigValues.formatSize(limit)) (a real one is a few kilobytes)")
        }
        // Read to the end, but never more than the limit (the file may grow as we read).
        let bytes = try SecureFiles.readCapped(fd, limit: limit, path: path, what: "config file")
        if bytes.count > limit {
            throw ConfigError(file: path, "the file is more than \(ConfigValues.formatSize(limit)); a config file may be at most that (a real one is a few kilobytes)")
        }
        do {
            return try ConfigSyntax.decode(Array(bytes), file: path)
        } catch let e {
            throw ConfigError(file: e.file, line: e.line, e.message)
        }
    }

    /// Parses config text (also used by `config check` on any path).
    public mutating func parse(_ text: String, path: String) throws {
        do {
            document = try ConfigSyntax.parse(text, file: path, environment: environment)
        } catch let e {
            throw ConfigError(file: e.file, line: e.line, e.message)
        }
        try validate(path: path)
    }

    mutating func validate(path: String) throws {
        var seen: [String: Int] = [:]
        var byInstance: [String: InstanceConfig] = [:]
        var order: [String] = []
        for h in document.headers {
            if h.section == "instance", let n = h.name {
                if byInstance[n] != nil {
                    throw ConfigError(file: path, line: h.line, "instance '\(n)' is defined twice (first at line \(byInstance[n]!.line ?? 0))")
                }
                byInstance[n] = InstanceConfig(name: n, line: h.line)
                order.append(n)
            } else if !SettingSpec.sections.contains(h.section) {
                let hint = Suggest.closest(to: h.section, in: SettingSpec.sections.filter { !$0.isEmpty }).map { "; did you mean [\($0)]?" } ?? ""
                warn(ConfigError(file: path, line: h.line, "unknown section [\(TerminalText.quoted(h.section, limit: 40))]\(hint) (its keys are ignored)"))
            }
        }
        for e in document.entries {
            guard SettingSpec.sections.contains(e.section) else { continue }
            guard let spec = SettingSpec.spec(section: e.section, key: e.key) else {
                let candidates = SettingSpec.all.filter { $0.section == e.section }.map(\.key)
                var hint = Suggest.closest(to: e.key, in: candidates).map { "; did you mean '\($0)'?" } ?? ""
                if hint.isEmpty, let elsewhere = SettingSpec.all.first(where: { $0.key == e.key }) {
                    hint = "; it belongs in " + (elsewhere.section.isEmpty ? "the top part of the file, before any [section]" : elsewhere.section == "instance" ? "an [instance NAME] section" : "[\(elsewhere.section)]")
                }
                let whereText = e.section.isEmpty ? "" : e.section == "instance" ? " in [instance \(e.sectionName ?? "")]" : " in [\(e.section)]"
                warn(ConfigError(file: path, line: e.line, "unknown key '\(TerminalText.quoted(e.key, limit: 40))'\(whereText)\(hint)"))
                continue
            }
            if let problem = spec.problem(with: e.value) {
                throw ConfigError(file: path, line: e.line, "\(spec.qualifiedName): \(problem)")
            }
            let id = "\(e.section)|\(e.sectionName ?? "")|\(e.key)"
            if let first = seen[id] {
                warn(ConfigError(file: path, line: e.line, "'\(e.key)' is set again (first at line \(first)); the later value wins"))
            }
            seen[id] = e.line
            if e.section == "instance", let n = e.sectionName {
                byInstance[n]?.values[e.key] = (e.value, .file(path: path, line: e.line))
            }
        }
        for n in order {
            guard let inst = byInstance[n] else { continue }
            if inst.value("url") == nil {
                throw ConfigError(file: path, line: inst.line, "[instance \(n)] has no url; add a line like: url = https://meet.example.com")
            }
        }
        instances = order.compactMap { byInstance[$0] }
    }

    /// Checks `BEDRUD_BOT_*` values so a typo in the environment is caught just like one in the file.
    mutating func checkEnvironment() throws {
        let known = Set(SettingSpec.all.map(\.environmentName) + SettingSpec.extraEnvironment.map(\.name))
        for (name, value) in environment where name.hasPrefix("BEDRUD_BOT_") {
            if let spec = SettingSpec.all.first(where: { $0.environmentName == name }) {
                if let p = spec.problem(with: value) { throw ConfigError("\(name): \(p)") }
            } else if !known.contains(name) && name != "BEDRUD_BOT_BINARY" {
                let hint = Suggest.closest(to: name, in: Array(known)).map { "; did you mean \($0)?" } ?? ""
                warn(ConfigError("unknown environment variable \(TerminalText.quoted(name, limit: 60))\(hint)"))
            }
        }
    }

    // MARK: - Reading settings

    /// The effective value of a non-instance setting and where it came from.
    public func resolve(_ section: String, _ key: String, flag: String? = nil) -> (value: String, origin: SettingOrigin)? {
        guard let spec = SettingSpec.spec(section: section, key: key) else { return nil }
        if let flag, let v = flags.value(flag) { return (v, .flag(flag)) }
        if let v = environment[spec.environmentName], !v.isEmpty { return (v, .environment(spec.environmentName)) }
        if let e = document.entries.last(where: { $0.section == section && $0.key == key }), let path {
            return (e.value, .file(path: path, line: e.line))
        }
        if let d = defaultValue(spec) { return (d, .builtIn) }
        return nil
    }

    func defaultValue(_ spec: SettingSpec) -> String? {
        if spec.section.isEmpty && spec.key == "state_dir" { return Self.defaultStateDir(environment) }
        if spec.section == "record" && spec.key == "output_dir" { return Self.defaultOutputDir(environment) }
        return spec.defaultValue
    }

    /// `$STATE_DIRECTORY/recordings` under systemd (`StateDirectory=`), else
    /// `$XDG_DATA_HOME/bedrud-bot/recordings`, else `~/.local/share/bedrud-bot/recordings`:
    /// never relative to whatever the working directory happens to be.
    public static func defaultOutputDir(_ environment: [String: String]) -> String {
        if let s = environment["STATE_DIRECTORY"]?.split(separator: ":").first, s.hasPrefix("/") { return s + "/recordings" }
        if let x = environment["XDG_DATA_HOME"], x.hasPrefix("/") { return x + "/bedrud-bot/recordings" }
        return home(environment) + "/.local/share/bedrud-bot/recordings"
    }

    public static func defaultStateDir(_ environment: [String: String]) -> String {
        if let x = environment["XDG_STATE_HOME"], x.hasPrefix("/") { return x + "/bedrud-bot" }
        return home(environment) + "/.local/state/bedrud-bot"
    }

    public func string(_ section: String, _ key: String, flag: String? = nil) -> String? { resolve(section, key, flag: flag)?.value }

    public var logLevel: LogLevel {
        if flags[GlobalOptions.quiet] { return .error }
        if flags[GlobalOptions.verbose] { return .debug }
        return string("", "log_level", flag: GlobalOptions.logLevel.name).flatMap(LogLevel.init(name:)) ?? .info
    }

    public var stateDirectory: String { string("", "state_dir") ?? Self.defaultStateDir(environment) }

    /// HTTP options from `[network]` plus a TLS configuration.
    public func httpOptions(tls: TLSConfiguration) throws -> HTTPClientOptions {
        var o = HTTPClientOptions()
        o.connectTimeout = try value(Settings.Network.connectTimeout)
        o.readTimeout = try value(Settings.Network.readTimeout)
        o.requestTimeout = try value(Settings.Network.requestTimeout)
        o.maxResponseBytes = Int(try value(Settings.Network.maxResponseSize))
        o.userAgent = "bedrud-bot/\(BedrudBotVersion.string)"
        o.tls = tls
        return o
    }
}

import BedrudNet
import BedrudProtocol
import FoundationEssentials

/// `bedrud-bot config show|check`.
enum ConfigCommands {
    static let spec = CommandSpec(
        "config", summary: "show the effective settings or check a config file",
        subcommands: [show, check])

    static let show = CommandSpec(
        "show", summary: "print every effective setting and where it comes from",
        discussion: """
            Precedence: command-line flag > environment (BEDRUD_BOT_*) > config file > default. Secrets are masked.
            --json prints the same as one JSON document: every setting by its qualified name
            (log_level, record.output_dir) with its value and origin, and each instance's settings.
            """,
        options: [ShowOptions.json.spec],
        action: runShow)

    /// Declared once: the spec lists them and the command reads them through these.
    enum ShowOptions {
        static let json = Flag("json", help: "Print the settings and their origins as JSON.")
    }

    static let check = CommandSpec(
        "check", summary: "validate a config file (default: the one in use)",
        discussion: "Exits 0 when the file is valid (warnings, such as unknown keys, are printed), 3 when it is not.",
        arguments: [ArgumentSpec("FILE", optional: true, help: "the file to check")],
        action: runCheck)

    /// What `config show` prints, as values: one model, rendered as text or as JSON.
    struct Shown: Encodable {
        struct Origin: Encodable {
            /// `default`, `file`, `environment` or `flag`.
            var kind: String
            var file: String?
            var line: Int?
            /// The environment variable or the flag (without dashes).
            var name: String?

            init(_ o: SettingOrigin) {
                switch o {
                case .builtIn: kind = "default"
                case .file(let p, let l): (kind, file, line) = ("file", p, l)
                case .environment(let n): (kind, name) = ("environment", n)
                case .flag(let f): (kind, name) = ("flag", f)
                }
            }
        }
        struct Setting: Encodable {
            /// Nil when the key has no value and no default.
            @Nullable var value: String?
            /// Nil when the key has no value and no default.
            @Nullable var origin: Origin?
            enum CodingKeys: String, CodingKey { case value, origin }
        }
        struct Instance: Encodable {
            var name: String
            var selected: Bool
            var settings: [String: Setting]
        }
        @Nullable var configFile: String?
        var configFileExists: Bool
        /// Keyed by qualified name: `log_level`, `record.output_dir`.
        var settings: [String: Setting]
        var instances: [Instance]

        enum CodingKeys: String, CodingKey {
            case configFile = "config_file", configFileExists = "config_file_exists", settings, instances
        }
    }

    /// Every effective setting (secrets masked), for both renderings of `config show`.
    static func shown(_ c: Configuration) -> (Shown, textLines: [String]) {
        var lines: [String] = []
        var model = Shown(configFile: c.path, configFileExists: c.fileText != nil, settings: [:], instances: [])
        if let p = c.path {
            lines.append("# config file: \(p)\(c.fileText == nil ? " (does not exist yet)" : "")")
        } else {
            lines.append("# config file: none found (looked at \(Configuration.userConfigPath(c.environment)) and /etc/bedrud-bot/config)")
        }
        func line(_ key: String, _ value: String?, _ origin: SettingOrigin?) -> String {
            let v = value.map { ConfigEditor.quoteIfNeeded($0) } ?? "(unset)"
            return "\(key) = \(v)".padded(to: 46) + "# " + (origin?.description ?? "no default")
        }
        for spec in SettingSpec.all where spec.section.isEmpty {
            let r = c.resolve("", spec.key, flag: spec.key == "log_level" ? "log-level" : nil)
            lines.append(line(spec.key, r?.value, r?.origin))
            model.settings[spec.qualifiedName] = Shown.Setting(value: r?.value, origin: r.map { Shown.Origin($0.origin) })
        }
        for section in SettingSpec.sections where !section.isEmpty && section != "instance" {
            lines.append("\n[\(section)]")
            for spec in SettingSpec.all where spec.section == section {
                let r = c.resolve(section, spec.key)
                lines.append(line(spec.key, r?.value, r?.origin))
                model.settings[spec.qualifiedName] = Shown.Setting(value: r?.value, origin: r.map { Shown.Origin($0.origin) })
            }
        }
        let selected = c.selectedInstanceName
        var names = c.instances.map(\.name)
        if c.environment["BEDRUD_BOT_URL"] != nil, !names.contains(selected ?? "env") { names.append(selected ?? "env") }
        for name in names {
            guard let inst = try? c.instance(named: name) else { continue }
            lines.append("\n[instance \(name)]" + (name == selected ? "   # selected" : ""))
            var shownInstance = Shown.Instance(name: name, selected: name == selected, settings: [:])
            let values: [(String, String?)] = [
                ("url", inst.server), ("display_name", inst.displayName), ("email", inst.email),
                ("password_file", inst.passwordFile), ("guest_name", inst.guestName), ("ca_file", inst.tls.caFile),
                ("pin_sha256", inst.tls.pinnedSHA256.isEmpty ? nil : inst.tls.pinnedSHA256.map(CertificateFingerprint.format).joined(separator: ", ")),
                ("tls_insecure", inst.tls.insecure ? "yes" : "no"),
            ]
            for (k, v) in values where v != nil || k == "tls_insecure" {
                let origin = inst.origins[k] ?? .builtIn
                lines.append(line(k, v, origin))
                shownInstance.settings[k] = Shown.Setting(value: v, origin: Shown.Origin(origin))
            }
            if name == selected, let pw = c.environment["BEDRUD_BOT_PASSWORD"], !pw.isEmpty {
                lines.append(line("password", Redact.mask, .environment("BEDRUD_BOT_PASSWORD")))
                shownInstance.settings["password"] = Shown.Setting(value: Redact.mask, origin: Shown.Origin(.environment("BEDRUD_BOT_PASSWORD")))
            }
            model.instances.append(shownInstance)
        }
        return (model, lines)
    }

    static func runShow(_ inv: Invocation) async throws -> ExitCode {
        let ctx = try BotContext(inv)
        let (model, lines) = shown(ctx.config)
        if inv[ShowOptions.json] {
            try JSONOutput.print(model, to: inv.console)
        } else {
            for l in lines { inv.console.out(l) }
        }
        return .success
    }

    static func runCheck(_ inv: Invocation) async throws -> ExitCode {
        let path: String
        if let p = inv.positionals.first {
            path = p
        } else if let located = Configuration.locate(flags: inv.arguments, environment: inv.environment) {
            path = located.path
        } else {
            throw CommandFailure(.config, "no config file found (looked at \(Configuration.userConfigPath(inv.environment)) and /etc/bedrud-bot/config)")
        }
        let text = try Configuration.readFile(path)
        var c = Configuration(environment: inv.environment, flags: ParsedArguments())
        c.path = path
        try c.parse(text, path: path)
        var warnings = c.warningLines
        for i in c.instances {
            if let f = i.value("password_file") {
                do {
                    try SecureFiles.checkPasswordFile(f, credentialsDirectory: inv.environment["CREDENTIALS_DIRECTORY"])
                } catch {
                    warnings.append("[instance \(i.name)] \(error)")
                }
                if !FileManager.default.fileExists(atPath: f) {
                    warnings.append("[instance \(i.name)] password_file \(TerminalText.quoted(f, limit: 200)) does not exist")
                }
            }
            if let f = i.value("ca_file"), !FileManager.default.fileExists(atPath: f) {
                warnings.append("[instance \(i.name)] ca_file \(TerminalText.quoted(f, limit: 200)) does not exist")
            }
        }
        for w in warnings { inv.console.warning(w) }
        if let d = c.document.entries.last(where: { $0.section.isEmpty && $0.key == "default_instance" }), !c.instances.contains(where: { $0.name == d.value }) {
            let name = TerminalText.quoted(d.value, limit: 64)
            throw ConfigError(file: path, line: d.line, "default_instance names '\(name)', but there is no [instance \(name)]")
        }
        let count = c.warningCount + warnings.count - c.warningLines.count
        let defaultName = c.selectedInstanceName.map { ", default '\(TerminalText.quoted($0, limit: 64))'" } ?? ""
        inv.console.out("\(TerminalText.sanitize(path)): OK (\(c.instances.count) instance\(c.instances.count == 1 ? "" : "s")\(defaultName)\(count == 0 ? "" : ", \(Configuration.grouped(count)) warning\(count == 1 ? "" : "s")")).")
        return .success
    }
}

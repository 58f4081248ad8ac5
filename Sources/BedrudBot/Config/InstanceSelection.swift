import BedrudNet
import BedrudProtocol

/// `--instance NAME` (or `default_instance`) names no configured instance: exit 5
/// ("not found"), as docs/CLI.md says, not a broken configuration.
public struct InstanceNotFound: Error, CustomStringConvertible, Sendable {
    public let name: String
    public let hint: String
    public var description: String { "no instance named '\(TerminalText.quoted(name))'.\(hint)" }
}

/// A server to talk to, with everything needed to reach it and log in.
public struct ResolvedInstance: Sendable {
    public var name: String
    public var url: WebURL
    public var displayName: String?
    public var email: String?
    public var passwordFile: String?
    public var guestName: String?
    public var tls: TLSConfiguration
    /// True when no config section describes it (environment only, or a meeting link).
    public var isAdHoc: Bool
    public var origins: [String: SettingOrigin]

    /// `https://host[:port][/prefix]`.
    public var server: String { url.path == "/" ? url.origin : url.origin + url.path }
}

extension Configuration {
    /// The instance name in force: `--instance`, `BEDRUD_BOT_INSTANCE`, `default_instance`,
    /// or the only configured instance.
    public var selectedInstanceName: String? {
        if let n = flags[GlobalOptions.instance] { return n }
        if let n = environment["BEDRUD_BOT_INSTANCE"], !n.isEmpty { return n }
        if let n = string("", "default_instance") { return n }
        return instances.count == 1 ? instances[0].name : nil
    }

    /// Resolves the instance to use, applying environment and flag overrides.
    /// - Throws: ``ConfigError`` when none is configured or the named one does not exist.
    public func instance(named explicitName: String? = nil) throws -> ResolvedInstance {
        let name = explicitName ?? selectedInstanceName
        var base: InstanceConfig?
        if let name {
            base = instances.first { $0.name == name }
            if base == nil && !(name == "env" && environment["BEDRUD_BOT_URL"] != nil) {
                let known = instances.map(\.name)
                let hint = Suggest.closest(to: name, in: known).map { " Did you mean '\($0)'?" }
                    ?? (known.isEmpty ? " No instances are configured yet: add one with 'bedrud-bot instance add URL'." : " Configured: \(known.joined(separator: ", ")).")
                throw InstanceNotFound(name: name, hint: hint)
            }
        }
        var values = base?.values ?? [:]
        for key in ["url", "display_name", "email", "password_file", "guest_name", "ca_file", "pin_sha256", "tls_insecure"] {
            let envName = "BEDRUD_BOT_" + key.uppercased()
            if let v = environment[envName], !v.isEmpty { values[key] = (v, .environment(envName)) }
            let flag = key.replacingScalars("_", with: "-")
            if key != "url", let v = flags.value(flag) { values[key] = (v, .flag(flag)) }
            if key == "tls_insecure", flags.flag("tls-insecure") { values[key] = ("yes", .flag("tls-insecure")) }
        }
        guard let urlText = values["url"]?.value else {
            if instances.isEmpty {
                throw ConfigError("no Bedrud server configured. Add one with 'bedrud-bot instance add https://meet.example.com', or set BEDRUD_BOT_URL.")
            }
            throw ConfigError("several instances are configured (\(instances.map(\.name).joined(separator: ", "))) and none is the default. Pick one with --instance NAME or 'bedrud-bot instance use NAME'.")
        }
        guard let url = WebURL(urlText), url.scheme == "http" || url.scheme == "https" else {
            throw ConfigError("\(values["url"]!.origin): url: expected an http:// or https:// URL, got '\(TerminalText.quoted(urlText))'")
        }
        var tls = TLSConfiguration()
        tls.caFile = values["ca_file"]?.value
        if let pins = values["pin_sha256"]?.value {
            for p in ConfigValues.list(pins) {
                guard let fp = CertificateFingerprint.parse(p) else {
                    throw ConfigError("\(values["pin_sha256"]!.origin): pin_sha256: expected a SHA-256 fingerprint, got '\(TerminalText.quoted(p))'")
                }
                tls.pinnedSHA256.append(fp)
            }
        }
        if let v = values["tls_insecure"]?.value {
            guard let b = ConfigValues.bool(v) else { throw ConfigError("\(values["tls_insecure"]!.origin): tls_insecure: expected yes or no, got '\(TerminalText.quoted(v))'") }
            tls.insecure = b
        }
        var origins: [String: SettingOrigin] = [:]
        for (k, v) in values { origins[k] = v.origin }
        return ResolvedInstance(
            name: base?.name ?? name ?? "env", url: url, displayName: values["display_name"]?.value, email: values["email"]?.value,
            passwordFile: values["password_file"]?.value, guestName: values["guest_name"]?.value, tls: tls,
            isAdHoc: base == nil, origins: origins)
    }

    /// The configured instance whose URL has the same origin as `server`
    /// (scheme, host and port compared; trailing slashes and paths ignored).
    public func instance(matching server: WebURL) -> InstanceConfig? {
        instances.first { inst in
            guard let u = inst.value("url").flatMap(WebURL.init) else { return false }
            return u.isSameOrigin(as: server)
        }
    }
}

/// The program's version, printed by `--version` and sent as the User-Agent.
public enum BedrudBotVersion {
    public static let string = "0.1.0"
}

import FoundationEssentials

import BedrudCore
import BedrudNet
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials

/// What most commands need: the loaded configuration, the chosen instance and clients
/// for it. Created per command run.
public struct BotContext: Sendable {
    public let invocation: Invocation
    public let config: Configuration
    public var console: Console { invocation.console }

    /// Loads the configuration, prints its warnings, applies its log level.
    /// - Parameter mayCreateConfig: a `--config` file that does not exist is not an error
    ///   (`instance add` creates it); for every other command it is.
    public init(_ invocation: Invocation, mayCreateConfig: Bool = false) throws {
        self.invocation = invocation
        config = try invocation.configuration(mayCreate: mayCreateConfig)
        for w in config.warningLines { invocation.console.warning(w) }
        Logging.setLevel(config.logLevel)
    }

    public var credentialStore: FileCredentialStore { FileCredentialStore(stateDirectory: config.stateDirectory) }

    /// The instance to use (`--instance`, environment, default).
    public func instance(named name: String? = nil) throws -> ResolvedInstance {
        let inst = try config.instance(named: name)
        warnIfInsecure(inst)
        return inst
    }

    func warnIfInsecure(_ inst: ResolvedInstance) {
        if inst.tls.insecure && inst.url.isSecure {
            console.warning("TLS certificate verification is OFF for \(inst.server) (tls_insecure, \(inst.origins["tls_insecure"]?.description ?? "set")). Anyone on the network path could read your password and tokens. Prefer ca_file or pin_sha256.")
        }
    }

    public func httpClient(for inst: ResolvedInstance) throws -> HTTPClient {
        HTTPClient(options: try config.httpOptions(tls: inst.tls))
    }

    public func apiClient(for inst: ResolvedInstance) throws -> APIClient {
        let console = self.console
        let notice: @Sendable (APIClient.RateLimitNotice) -> Void = { n in
            let seconds = ConfigValues.formatDuration(max(1, n.seconds.rounded()))
            if n.first {
                console.warning("\(n.call): the server's rate limit refused it (HTTP 429); waiting \(seconds), then trying again "
                    + "(at most \(ConfigValues.formatDuration(n.limit)) in all, network.rate_limit_wait)")
            } else if console.stderrIsTerminal {
                console.note("Still rate limited: waiting \(seconds) more.")
            }
        }
        return APIClient(server: inst.url, http: try httpClient(for: inst), rateLimitWait: try config.value(Settings.Network.rateLimitWait),
                         onRateLimited: notice, wallClock: { Date().timeIntervalSince1970 })
    }

    /// The password for unattended login, in precedence order: `--password-file` /
    /// `BEDRUD_BOT_PASSWORD_FILE` / `password_file` (whichever the instance resolved to;
    /// flag over environment over file), else `BEDRUD_BOT_PASSWORD`. Nil if none is configured.
    public func passwordSource(for inst: ResolvedInstance) -> (@Sendable () throws -> String)? {
        let fileOrigin = inst.origins["password_file"]
        let envPassword = invocation.environment["BEDRUD_BOT_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        if let file = inst.passwordFile {
            // A password given directly in the environment beats one from the config file,
            // but not one from a flag or an explicit BEDRUD_BOT_PASSWORD_FILE.
            if let pw = envPassword, case .file? = fileOrigin { return { pw } }
            let credentials = invocation.environment["CREDENTIALS_DIRECTORY"]
            return { try SecureFiles.readPassword(file, credentialsDirectory: credentials) }
        }
        if let pw = envPassword { return { pw } }
        return nil
    }

    /// An auth manager for the instance, with unattended login when credentials are configured.
    ///
    /// When the instance names a password file, its permissions are checked here, before
    /// anything else, whether or not a stored session makes the password unnecessary: a
    /// file others can read is refused (exit 3) now, not at the next login of a schedule.
    public func authManager(for inst: ResolvedInstance, api: APIClient? = nil, store: (any CredentialStore)? = nil) throws -> AuthManager {
        if let file = inst.passwordFile {
            try SecureFiles.checkPasswordFile(file, credentialsDirectory: invocation.environment["CREDENTIALS_DIRECTORY"])
        }
        let client = try api ?? apiClient(for: inst)
        var fallback: LoginMethod?
        if let email = inst.email, let pw = passwordSource(for: inst) {
            fallback = .password(email: email, password: pw)
        } else if inst.email == nil, let guest = inst.guestName {
            fallback = .guest(name: guest)
        }
        return AuthManager(instanceKey: inst.name, api: client, store: store ?? credentialStore, fallbackLogin: fallback,
                           now: { Date().timeIntervalSince1970 })
    }
}

import BedrudNet
import BedrudProtocol

/// Options several commands share, declared once (like swift-argument-parser's
/// `@OptionGroup`): a command adds the group to its own options, so `--help`, the man page
/// and the completions of every command that has them read the same words.
public enum OptionGroups {
    /// How to trust the server of a meeting link that is not a configured instance
    /// (read by `JoinPlan.make`).
    public static let linkTLS: [OptionSpec] = [
        OptionSpec("ca-file", value: "FILE", help: "For a link to an unconfigured server: trust this PEM CA."),
        OptionSpec("pin-sha256", value: "FINGERPRINT", help: "For a link to an unconfigured server: trust this certificate."),
        OptionSpec("tls-insecure", help: "For a link to an unconfigured server: skip certificate checks."),
    ]

    /// Joining a meeting link's server as a guest: the guest's name and ``linkTLS``.
    public static let link: [OptionSpec] =
        [OptionSpec("guest-name", value: "NAME", help: "Display name when joining a link's server as a guest (default: bedrud-bot).")] + linkTLS

    /// Where `recordings` and `status` look for session folders (`record.output_dir`).
    public static let recordingsRoot: [OptionSpec] = [
        OptionSpec("output", short: "o", value: "DIR", help: "Where the recordings are (default: record.output_dir)."),
    ]

    /// The trust `--ca-file`, `--pin-sha256` and `--tls-insecure` ask for: ``linkTLS`` for a
    /// link's server, and `instance add` for a server being configured.
    static func tls(from inv: Invocation) throws -> TLSConfiguration {
        var tls = TLSConfiguration()
        tls.caFile = inv.value("ca-file")
        if let pin = inv.value("pin-sha256") {
            guard let fp = CertificateFingerprint.parse(pin) else {
                throw CommandFailure(.usage, "--pin-sha256 expects a SHA-256 fingerprint (64 hex digits, colons optional), got \(TerminalText.quoted(pin))")
            }
            tls.pinnedSHA256 = [fp]
        }
        tls.insecure = inv.flag("tls-insecure")
        return tls
    }
}

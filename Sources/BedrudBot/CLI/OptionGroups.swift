import BedrudNet
import BedrudProtocol

/// Options several commands share, declared once (like swift-argument-parser's
/// `@OptionGroup`): a command adds the group to its own options, so `--help`, the man page
/// and the completions of every command that has them read the same words, and reads them
/// through the same declarations.
public enum OptionGroups {
    public static let caFile = ValueOption("ca-file", value: "FILE", help: "For a link to an unconfigured server: trust this PEM CA.")
    public static let pinSHA256 = ValueOption("pin-sha256", value: "FINGERPRINT", help: "For a link to an unconfigured server: trust this certificate.")
    public static let tlsInsecure = Flag("tls-insecure", help: "For a link to an unconfigured server: skip certificate checks.")
    public static let guestName = ValueOption("guest-name", value: "NAME", help: "Display name when joining a link's server as a guest (default: \(defaultGuestName)).")
    static let defaultGuestName = "bedrud-bot"
    /// `--json` of the commands that otherwise print a table: `instance list`, `rooms list`
    /// and `webhooks list`.
    public static let tableJSON = Flag("json", help: "Print JSON instead of a table.")
    /// `recordings` and `status`: where the session folders are (`record.output_dir`).
    public static let output = ValueOption("output", short: "o", value: "DIR", help: "Where the recordings are (default: record.output_dir).")

    /// How to trust the server of a meeting link that is not a configured instance
    /// (read by `JoinPlan.make`).
    public static let linkTLS: [OptionSpec] = [caFile.spec, pinSHA256.spec, tlsInsecure.spec]

    /// Joining a meeting link's server as a guest: the guest's name and ``linkTLS``.
    public static let link: [OptionSpec] = [guestName.spec] + linkTLS

    /// Where `recordings` and `status` look for session folders (`record.output_dir`).
    public static let recordingsRoot: [OptionSpec] = [output.spec]

    /// The trust `--ca-file`, `--pin-sha256` and `--tls-insecure` ask for: ``linkTLS`` for a
    /// link's server, and `instance add` for a server being configured.
    static func tls(from inv: Invocation) throws -> TLSConfiguration {
        var tls = TLSConfiguration()
        tls.caFile = inv[caFile]
        if let pin = inv[pinSHA256] {
            guard let fp = CertificateFingerprint.parse(pin) else {
                throw CommandFailure(.usage, "--pin-sha256 expects a SHA-256 fingerprint (64 hex digits, colons optional), got \(TerminalText.quoted(pin))")
            }
            tls.pinnedSHA256 = [fp]
        }
        tls.insecure = inv[tlsInsecure]
        return tls
    }
}

/// The process exit codes, one per kind of failure, so that cron, systemd and CI can
/// tell what went wrong without parsing text. Listed in `--help` and docs/CLI.md.
public enum ExitCode: Int32, Sendable, CaseIterable {
    case success = 0
    /// An unexpected internal error (a bug: please report it).
    case failure = 1
    /// Bad command line: unknown command or option, missing argument.
    case usage = 2
    /// Bad or unreadable configuration, or unsafe permissions on a credential file.
    case config = 3
    /// Authentication failed: wrong credentials, expired session, not logged in.
    case auth = 4
    /// Not found: no such room, instance or route.
    case notFound = 5
    /// Forbidden: banned, room full or private, registration closed, not the owner.
    case forbidden = 6
    /// Network failure: unreachable, refused, timed out, name resolution.
    case network = 7
    /// TLS failure: untrusted certificate, pin mismatch, handshake error.
    case tls = 8
    /// The server failed (5xx) or answered something that is not Bedrud's API.
    case server = 9
    /// Removed from the room: kicked, banned, room deleted, or replaced by a duplicate login.
    case removed = 10
    /// A smoke-test assertion failed (no audio, wrong duration, ...).
    case assertion = 11
    /// The server refused the request as given: a name that is taken (409), input it
    /// rejects (400/422), too many requests (429).
    case rejected = 12
    /// The disk filled up while recording: the session stopped, finished what it could
    /// (files that could not be finished stay `*.part` for `repair`).
    case diskFull = 15
    /// A second SIGINT/SIGTERM ended the run at once, before its files were finished
    /// (`repair` finishes them). One signal is a clean stop and exits 0.
    case interrupted = 130

    public var meaning: String {
        switch self {
        case .success: "success"
        case .failure: "unexpected internal error"
        case .usage: "bad command line"
        case .config: "bad configuration or unsafe credential file permissions"
        case .auth: "authentication failed or not logged in"
        case .notFound: "room, instance or route not found"
        case .forbidden: "forbidden (banned, full, private, not allowed)"
        case .network: "network failure (unreachable, refused, timed out)"
        case .tls: "TLS failure (untrusted certificate, pin mismatch)"
        case .server: "server error or not a Bedrud server"
        case .removed: "removed from the room (kicked, room deleted, duplicate login)"
        case .assertion: "smoke-test assertion failed, or a recording failed verify/repair"
        case .rejected: "the server refused the request (name taken, invalid, rate limited)"
        case .diskFull: "the disk filled up while recording (stopped; unfinished files left for repair)"
        case .interrupted: "stopped at once by a second signal (files left for repair)"
        }
    }
}

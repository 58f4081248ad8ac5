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
    /// 11 is retired (it was "smoke-test assertion failed" and verify's bad file; smoke now
    /// has a code per stage, 20–29, and verify/repair have 13).
    /// The server refused the request as given: a name that is taken (409), input it
    /// rejects (400/422), too many requests (429).
    case rejected = 12
    /// `verify` found a file with problems, or `repair` could not make one valid.
    case fileProblems = 13
    /// `join --wait-for-participants`: nobody (no person; bots do not count) came in time.
    case nobodyCame = 14
    /// The recording disk ran low (below `record.min_free`) or a write to it failed: the
    /// session was stopped and its files finished while there was room.
    case diskLow = 15
    /// `join` of several rooms: some rooms failed and others did not, or they failed in
    /// different ways (each room's own code is in its summary). All failing alike exits
    /// with their shared code; all succeeding with 0.
    case roomsFailed = 16
    /// smoke: the API did not answer, or not as Bedrud (docs/SMOKE.md).
    case smokeAPI = 20
    /// smoke: a login (account or guest) failed.
    case smokeAuth = 21
    /// smoke: no such room, or the join token was refused (by Bedrud or by the media server).
    case smokeRoom = 22
    /// smoke: the LiveKit signalling WebSocket did not come up on both sides.
    case smokeSignalling = 23
    /// smoke: ICE found no working candidate pair (UDP blocked, TURN wrong).
    case smokeICE = 24
    /// smoke: the DTLS handshake failed (fingerprint mismatch, timeout).
    case smokeDTLS = 25
    /// smoke: the test signal was not published, or not received and decoded.
    case smokeMedia = 26
    /// smoke: media arrived, but latency, loss or jitter is above its threshold.
    case smokeQuality = 27
    /// smoke: the chat message did not arrive intact over the data channel.
    case smokeData = 28
    /// smoke: a participant did not leave cleanly.
    case smokeLeave = 29
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
        case .rejected: "the server refused the request (name taken, invalid, rate limited)"
        case .fileProblems: "verify found a file with problems, or repair could not make it valid"
        case .nobodyCame: "nobody came within --wait-for-participants"
        case .diskLow: "recording disk low or full, or a recording write failed (files finished)"
        case .roomsFailed: "join of several rooms: some rooms failed (each room's code is in its summary)"
        case .smokeAPI: "smoke: the API did not answer"
        case .smokeAuth: "smoke: login failed"
        case .smokeRoom: "smoke: no such room, or join token refused"
        case .smokeSignalling: "smoke: signalling WebSocket failed"
        case .smokeICE: "smoke: ICE failed (no candidate pair)"
        case .smokeDTLS: "smoke: DTLS handshake failed"
        case .smokeMedia: "smoke: test signal not published or not received"
        case .smokeQuality: "smoke: latency, loss or jitter above threshold"
        case .smokeData: "smoke: chat message did not arrive intact"
        case .smokeLeave: "smoke: did not leave cleanly"
        case .interrupted: "stopped at once by a second signal (files left for repair)"
        }
    }
}

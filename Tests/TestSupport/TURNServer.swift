import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// coturn on 127.0.0.1 for one test (installed by scripts/bootstrap), a ``ChildProcess``
/// that logs to its stdout: started on a free port (or a given one), ready once coturn
/// says its servers are up, killed by ``stop()`` or when the object goes.
public final class TURNServer: Sendable {
    /// How clients authenticate.
    public enum Auth: Sendable {
        /// The fixed long-term user ``TURNServer/username`` / ``TURNServer/password`` (`lt-cred-mech`).
        case fixedUser
        /// Time-limited credentials (`use-auth-secret`, the TURN REST API LiveKit uses): a
        /// username `<expiry unix time>:<name>` with password base64(HMAC-SHA1(secret,
        /// username)), refused once the expiry has passed (see ``credentials(secret:name:expiry:)``).
        case secret(String)
    }

    /// The user of ``Auth/fixedUser``.
    public static let username = "bedrud-test"
    /// The password of ``Auth/fixedUser`` (a test value, never a real secret).
    public static let password = "not-a-real-secret"

    public let process: ChildProcess
    public let port: UInt16

    /// - Parameters:
    ///   - port: a port to listen on (a restart on the same address); a free one when nil.
    public init(auth: Auth = .fixedUser, port fixedPort: UInt16? = nil) async throws {
        let exe = "/usr/bin/turnserver"
        guard FileManager.default.isExecutableFile(atPath: exe) else {
            throw TestSupportError("\(exe) is missing; run scripts/bootstrap (it installs coturn)")
        }
        port = try fixedPort ?? Self.freePort()
        let relayBase = Int.random(in: 20_000...28_000)
        let authArguments: [String]
        switch auth {
        case .fixedUser: authArguments = ["--user=\(Self.username):\(Self.password)", "--lt-cred-mech"]
        // --verbose: the per-user ALLOCATE lines that `allocated(for:)` reads.
        case .secret(let secret): authArguments = ["--use-auth-secret", "--static-auth-secret=\(secret)", "--verbose"]
        }
        process = try ChildProcess(URL(fileURLWithPath: exe), [
            "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
            "--min-port=\(relayBase)", "--max-port=\(relayBase + 200)", "--realm=bedrud.test"] + authArguments + [
            "--allow-loopback-peers", "--no-tls", "--no-dtls", "--no-cli", "--log-file=stdout", "--simple-log",
            "--pidfile=\(NSTemporaryDirectory())turn-\(port).pid", "--no-stun-backward-compatibility",
        ], mergeStderr: true)
        do {
            try await process.line(timeout: 20, "coturn listening on port \(port)") { $0.contains("Total General servers") }
        } catch {
            stop()
            throw error
        }
    }

    /// `turn:` URL of this server for `transport` (udp or tcp).
    public func url(transport: String = "udp") -> String { "turn:127.0.0.1:\(port)?transport=\(transport)" }

    /// Kills coturn at once (it takes its time over SIGTERM; this is a throwaway server)
    /// and reaps it. Blocks: in async code use ``stopped()``.
    public func stop() { process.stop(grace: 0) }

    /// ``stop()`` without blocking Swift's cooperative pool (it waits for the reap).
    public func stopped() async { _ = try? await offPool { [process] in process.stop(grace: 0) } }

    /// Whether coturn allocated a relay for `username` (needs ``Auth/secret(_:)``, which logs verbosely).
    public func allocated(for username: String) -> Bool {
        process.lines().contains { Self.isAllocation($0, for: username) && $0.contains("success") }
    }

    /// Whether `username` asked for an allocation at all, granted or not.
    public func triedAllocating(for username: String) -> Bool {
        process.lines().contains { Self.isAllocation($0, for: username) }
    }

    /// Waits up to `timeout` seconds for coturn to allocate a relay for `username`.
    public func waitForAllocation(for username: String, timeout: Double) async throws {
        try await process.line(timeout: timeout, "coturn allocating for \(username)") {
            Self.isAllocation($0, for: username) && $0.contains("success")
        }
    }

    private static func isAllocation(_ line: String, for username: String) -> Bool {
        line.contains("user <\(username)>: incoming packet ALLOCATE processed")
    }

    /// Time-limited credentials for ``Auth/secret(_:)``: `name`'s, valid until `expiry` (unix seconds).
    public static func credentials(secret: String, name: String, expiry: Int) async throws -> (username: String, password: String) {
        let username = "\(expiry):\(name)"
        let r = try await offPool { try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import base64, hashlib, hmac, sys
            print(base64.b64encode(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha1).digest()).decode())
            """, secret, username], timeout: 30) }
        let password = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard r.exitCode == 0, !password.isEmpty else { throw TestSupportError("python3 computing TURN credentials failed: \(r.stderr.suffix(500))") }
        return (username, password)
    }

    /// A port free for both UDP and TCP on 127.0.0.1 right now.
    public static func freePort() throws -> UInt16 {
        for _ in 0..<50 {
            let candidate = UInt16.random(in: 30_000...39_000)
            if isFree(candidate, SOCK_DGRAM) && isFree(candidate, SOCK_STREAM) { return candidate }
        }
        throw TestSupportError("no free port for coturn")
    }

    private static func isFree(_ port: UInt16, _ type: __socket_type) -> Bool {
        let fd = socket(AF_INET, Int32(type.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }
}

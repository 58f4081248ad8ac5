import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

/// coturn on 127.0.0.1 for one test (installed by scripts/bootstrap).
final class LocalTURNServer: @unchecked Sendable {
    // @unchecked: set once in init; `process` and `log` are thread-safe.
    private var process: ChildProcess?
    let port: UInt16
    let username = "bedrud-test"
    let password = "not-a-real-secret"
    let log = AsyncLog<String>()

    /// - Parameters:
    ///   - authSecret: time-limited credentials (`use-auth-secret`, TURN REST API): a
    ///     username `<expiry unix time>:<name>` with password base64(HMAC-SHA1(secret,
    ///     username)), refused once the expiry has passed; else the fixed user above.
    ///   - port: a port to listen on (a restart on the same address); a free one when nil.
    init(authSecret: String? = nil, port fixedPort: UInt16? = nil) async throws {
        let exe = "/usr/bin/turnserver"
        guard FileManager.default.isExecutableFile(atPath: exe) else {
            throw PeerProcessError(message: "\(exe) is missing; run scripts/bootstrap (it installs coturn)")
        }
        port = try fixedPort ?? Self.freePort()
        let relayBase = Int.random(in: 20_000...28_000)
        let log = self.log
        let auth = authSecret.map { ["--use-auth-secret", "--static-auth-secret=\($0)", "--verbose"] }
            ?? ["--user=\(username):\(password)", "--lt-cred-mech"]
        process = try ChildProcess(URL(fileURLWithPath: exe), [
            "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
            "--min-port=\(relayBase)", "--max-port=\(relayBase + 200)", "--realm=bedrud.test"] + auth + [
            "--allow-loopback-peers", "--no-tls", "--no-dtls", "--no-cli", "--log-file=stdout", "--simple-log",
            "--pidfile=\(NSTemporaryDirectory())turn-\(port).pid", "--no-stun-backward-compatibility",
        ], mergeStderr: true) { line in log.append(line) }
        let p = port
        do {
            _ = try await log.first(where: { $0.contains("Total General servers") }, timeout: 20, "coturn on port \(p)")
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// A port free for both UDP and TCP on 127.0.0.1 right now.
    static func freePort() throws -> UInt16 {
        for _ in 0..<50 {
            let candidate = UInt16.random(in: 30_000...39_000)
            if isFree(candidate, SOCK_DGRAM) && isFree(candidate, SOCK_STREAM) { return candidate }
        }
        throw PeerProcessError(message: "no free port for coturn")
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

    func stop() {
        // coturn takes its time over SIGTERM; this is a throwaway test server.
        process?.stop(grace: 0)
    }

    /// Time-limited credentials for `authSecret` (coturn's `use-auth-secret`), valid until `expiry`.
    static func credentials(secret: String, name: String, expiry: Int) throws -> (username: String, password: String) {
        let username = "\(expiry):\(name)"
        let r = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import base64, hashlib, hmac, sys
            print(base64.b64encode(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha1).digest()).decode())
            """, secret, username], timeout: 30)
        return (username, r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

func isRelayCandidate(_ e: PeerConnectionEvent) -> Bool {
    if case .localCandidate(let c) = e { c.candidate.contains("typ relay") } else { false }
}

@Suite("TURN relay (coturn on loopback)", .serialized)
struct TURNTests {
    @Test("Relay-only ICE through TURN connects and carries data", arguments: ["udp", "tcp"])
    func relayOnly(transport: String) async throws {
        let turn = try await LocalTURNServer()
        defer { turn.stop() }
        let server = ICEServer(urls: ["turn:127.0.0.1:\(turn.port)?transport=\(transport)"], username: turn.username, credential: turn.password)
        try await PeerPair.run(configure: { c in
            if c.name == "answerer" {
                c.ice.servers = [server]
                c.ice.relayOnly = true
            }
        }) { p in
            await p.offerer.createDataChannel(label: "_reliable")
            let answer = try await p.negotiate()
            try await p.answerer.waitUntilConnected(timeoutSeconds: 30)
            // The relay candidate is in the answer if it was gathered in time, else trickled.
            if !answer.contains("typ relay") {
                let relayed = try await p.answererEvents.first(where: { if case .localCandidate(let c) = $0 { c.candidate.contains("typ relay") } else { false } }, timeout: 20, "relay candidate")
                if case .localCandidate(let c) = relayed { #expect(!c.candidate.contains(turn.password)) }
            }
            #expect(!answer.contains(turn.password) && !answer.contains(" typ host"))
            let pair = await p.answerer.stats().selectedPair ?? ""
            #expect(pair.hasPrefix("127.0.0.1") && pair.contains("relay"), "selected pair \(pair)")
            _ = try await p.answererEvents.first(where: isOpened("_reliable"), timeout: 20)
            // The channel's creator may send once the answerer's DCEP ACK is back (under
            // load that comes well after the answerer saw the OPEN).
            _ = try await p.offererEvents.first(where: isOpened("_reliable"), timeout: 20, "DCEP ACK")
            #expect(await p.offerer.send([1, 2], label: "_reliable"))
            _ = try await p.answererEvents.first(where: isMessage("_reliable", [1, 2]), timeout: 20)
        }
    }
}


/// A resume's fresh TURN credentials (LiveKit >= 1.12: ReconnectResponse.ice_servers, 300 s
/// credentials): after the first ones expired and the relay server went away with the
/// allocation, an ICE restart connects again through a relay allocated with the fresh ones
/// on the server the resume names; without them (what the bot did before) it cannot.
@Suite("TURN credentials refreshed on resume (coturn use-auth-secret)", .serialized)
struct TURNCredentialRefreshTests {
    @Test("After expiry and a lost relay server, the resume's servers give a new relay and the ICE restart connects", arguments: [true, false])
    func relayAfterExpiry(applied: Bool) async throws {
        let secret = "bedrud-turn-test-secret"
        var turn = try await LocalTURNServer(authSecret: secret)
        var url = "turn:127.0.0.1:\(turn.port)?transport=udp"
        let expiry = Int(Date().timeIntervalSince1970) + 4
        let first = try LocalTURNServer.credentials(secret: secret, name: "bot", expiry: expiry)
        defer { turn.stop() }
        try await PeerPair.run(configure: { c in
            if c.name == "answerer" {
                c.ice.servers = [ICEServer(urls: [url], username: first.username, credential: first.password)]
                c.ice.relayOnly = true
            }
        }) { p in
            await p.offerer.createDataChannel(label: "_reliable")
            try await p.negotiate()
            try await p.answerer.waitUntilConnected(timeoutSeconds: 30)
            _ = try await p.offererEvents.first(where: isOpened("_reliable"), timeout: 20, "DCEP ACK")
            #expect((await p.answerer.stats().selectedPair ?? "").contains("relay"))

            // The credentials expire; then the relay server goes, with the allocation, and
            // another takes over (same secret, another port).
            try await waitUntilWallClock(passes: Double(expiry))
            turn.stop()
            turn = try await LocalTURNServer(authSecret: secret)
            url = "turn:127.0.0.1:\(turn.port)?transport=udp"
            let relaysBefore = p.answererEvents.count(where: isRelayCandidate)

            // The resume's servers: the new relay server, fresh credentials. The control
            // ignores them, as the bot did before.
            let next = try LocalTURNServer.credentials(secret: secret, name: "bot-resumed", expiry: Int(Date().timeIntervalSince1970) + 300)
            if applied {
                await p.answerer.updateICEServers([ICEServer(urls: [url], username: next.username, credential: next.password)])
            }
            // LiveKit restarts ICE after a resume: with new servers, a new agent gathers and allocates.
            try await p.negotiate(iceRestart: true)
            let user = "user <\(next.username)>: incoming packet ALLOCATE processed"
            guard applied else {
                // The old agent restarts on its dead relay: no new candidate, no path.
                _ = try await p.answererEvents.first(where: { $0 == .iceStateChanged(.failed) }, timeout: 90, "ICE failing without a relay")
                #expect(p.answererEvents.count(where: isRelayCandidate) == relaysBefore, "no new relay")
                #expect(!turn.log.all.contains { $0.contains(user) })
                return
            }
            _ = try await turn.log.first(where: { $0.contains(user) && $0.contains("success") }, timeout: 20, "coturn allocating for the fresh username")
            do {
                try await waitUntil("the new agent's relay candidate", timeout: 20) { p.answererEvents.count(where: isRelayCandidate) == relaysBefore + 1 }
            } catch {
                Issue.record("\(error): \(p.answererEvents.all.suffix(12))")
            }
            #expect(await p.offerer.send([4, 2], label: "_reliable"))
            _ = try await p.answererEvents.first(where: isMessage("_reliable", [4, 2]), timeout: 30, "data over the new relay")
            #expect((await p.answerer.stats().selectedPair ?? "").contains("relay"))
        }
    }
}

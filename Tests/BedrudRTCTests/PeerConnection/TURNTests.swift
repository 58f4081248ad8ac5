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

    init() async throws {
        let exe = "/usr/bin/turnserver"
        guard FileManager.default.isExecutableFile(atPath: exe) else {
            throw PeerProcessError(message: "\(exe) is missing; run scripts/bootstrap (it installs coturn)")
        }
        port = try Self.freePort()
        let relayBase = Int.random(in: 20_000...28_000)
        let log = self.log
        process = try ChildProcess(URL(fileURLWithPath: exe), [
            "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
            "--min-port=\(relayBase)", "--max-port=\(relayBase + 200)", "--user=\(username):\(password)", "--realm=bedrud.test",
            "--lt-cred-mech", "--allow-loopback-peers", "--no-tls", "--no-dtls", "--no-cli", "--log-file=stdout", "--simple-log",
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

import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

func isRelayCandidate(_ e: PeerConnectionEvent) -> Bool {
    if case .localCandidate(let c) = e { c.candidate.contains("typ relay") } else { false }
}

@Suite("TURN relay (coturn on loopback)", .serialized)
struct PeerConnectionTURNTests {
    @Test("Relay-only ICE through TURN connects and carries data", arguments: ["udp", "tcp"])
    func relayOnly(transport: String) async throws {
        let turn = try await TURNServer()
        defer { turn.stop() }
        let server = ICEServer(urls: [turn.url(transport: transport)], username: TURNServer.username, credential: TURNServer.password)
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
                if case .localCandidate(let c) = relayed { #expect(!c.candidate.contains(TURNServer.password)) }
            }
            #expect(!answer.contains(TURNServer.password) && !answer.contains(" typ host"))
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
        var turn = try await TURNServer(auth: .secret(secret))
        var url = turn.url()
        let expiry = Int(Date().timeIntervalSince1970) + 4
        let first = try await TURNServer.credentials(secret: secret, name: "bot", expiry: expiry)
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
            await turn.stopped()
            turn = try await TURNServer(auth: .secret(secret))
            url = turn.url()
            let relaysBefore = p.answererEvents.count(where: isRelayCandidate)

            // The resume's servers: the new relay server, fresh credentials. The control
            // ignores them, as the bot did before.
            let next = try await TURNServer.credentials(secret: secret, name: "bot-resumed", expiry: Int(Date().timeIntervalSince1970) + 300)
            if applied {
                await p.answerer.updateICEServers([ICEServer(urls: [url], username: next.username, credential: next.password)])
            }
            // LiveKit restarts ICE after a resume: with new servers, a new agent gathers and allocates.
            try await p.negotiate(iceRestart: true)
            guard applied else {
                // The old agent restarts on its dead relay: no new candidate, no path.
                _ = try await p.answererEvents.first(where: { $0 == .iceStateChanged(.failed) }, timeout: 90, "ICE failing without a relay")
                #expect(p.answererEvents.count(where: isRelayCandidate) == relaysBefore, "no new relay")
                #expect(!turn.triedAllocating(for: next.username))
                return
            }
            try await turn.waitForAllocation(for: next.username, timeout: 20)
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

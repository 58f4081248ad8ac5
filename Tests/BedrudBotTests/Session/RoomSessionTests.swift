@testable import BedrudBot
import BedrudCore
import BedrudMedia
import BedrudNet
import BedrudProtocol
import BedrudRuntime
import Foundation
import Testing
import TestSupport

/// ``RoomSession``: the final line every command prints, the session driven by each
/// command against a server that never lets it in, and a new command written as one use
/// of it (a real tone through the real session to the devserver).
extension FakeRoomTransport: SessionTransport {}

@Suite struct RoomSessionTests {
    // MARK: - The final line

    @Test func aFirstJoinThatNeverGotInSaysCouldNotJoin() {
        let line = RoomSession.finalLine(.network(.timeout), everConnected: false, connectError: "connect to 127.0.0.1:9 timed out",
                                         transportError: nil, serverProblem: nil)
        #expect(line == "could not join the room (timed out): connect to 127.0.0.1:9 timed out")
    }

    @Test func aLostConnectionSaysCouldNotBeReEstablished() {
        let line = RoomSession.finalLine(.network(.timeout), everConnected: true, connectError: "connect to 127.0.0.1:9 timed out",
                                         transportError: nil, serverProblem: nil)
        #expect(line == "the connection could not be re-established (last attempt: timed out): connect to 127.0.0.1:9 timed out")
    }

    @Test func bedrudsRefusalIsTheWholeLine() {
        #expect(RoomSession.finalLine(.roomEnded, everConnected: true, connectError: "the meeting is over", transportError: nil, serverProblem: nil)
                == "the meeting is over")
        #expect(RoomSession.finalLine(.forbidden, everConnected: true, connectError: nil, transportError: nil, serverProblem: nil)
                == RoomEventFormatter.explain(.forbidden))
    }

    @Test func theLifecyclesWordsReplaceTheExplanationWhereItStoppedTheRun() {
        #expect(RoomSession.finalLine(.left, everConnected: true, connectError: nil, transportError: nil, serverProblem: nil) == "left the room")
        #expect(RoomSession.finalLine(.left, everConnected: true, connectError: "stale", transportError: nil, serverProblem: nil,
                                      otherwise: "the duration passed") == "the duration passed")
        #expect(RoomSession.finalLine(.kicked, everConnected: true, connectError: "stale", transportError: nil, serverProblem: nil)
                == RoomEventFormatter.explain(.kicked))
        #expect(RoomSession.finalLine(.notAllowed, everConnected: false, connectError: "401 token expired", transportError: nil, serverProblem: nil)
                == RoomEventFormatter.explain(.notAllowed) + ": 401 token expired")
    }

    // MARK: - Waiting on events, on a fake transport

    /// A plan whose Bedrud is never asked (nothing answers at 127.0.0.1:1).
    static func offlinePlan() -> JoinPlan {
        let inst = ResolvedInstance(name: "offline", url: WebURL("http://127.0.0.1:1")!, displayName: nil, email: nil, passwordFile: nil,
                                    guestName: nil, tls: TLSConfiguration(), isAdHoc: true, origins: [:])
        let auth = AuthManager(instanceKey: "offline", api: APIClient(server: inst.url, http: HTTPClient()), store: MemoryCredentialStore(),
                               now: { Date().timeIntervalSince1970 })
        return JoinPlan(instance: inst, roomName: "hostile", auth: auth, isThrowawayGuest: true)
    }

    /// A LiveKit that says `join` and nothing more (it never publishes a track), and a
    /// fake WebRTC layer: the session joins, a publish gives up when its time is up, a
    /// stopped session gives up at once, and leaving is clean.
    @Test func waitsForTheJoinAndGivesUpAPublishOnTimeOrWhenStopped() async throws {
        let server = try HostileSignalServer(onJoin: .init(frames: [HostileSignalServer.frame(HostileSignalServer.join())], holdSeconds: 30))
        defer { server.stop() }
        let fake = FakeRoomTransport()
        let join = JoinRoomResponse(room: Room(id: "r1", name: "hostile"), token: "not-a-jwt", livekitHost: server.livekitHost)
        let session = RoomSession(plan: Self.offlinePlan(), join: join, transport: fake)
        await session.connect()
        let me = await session.waitUntilJoined(timeout: 20)
        #expect(me?.identity == "bot" && me?.name == "Recorder")
        // The transport is created on the room's WebRTC queue, after the join is reported.
        try await waitUntil("the transport is created", timeout: 10) { fake.calls.first == .create }
        #expect(await session.waitForDataChannel(timeout: 1))
        #expect(await session.sendData([1, 2, 3]))
        #expect(fake.sent == [[1, 2, 3]])

        func publish(timeout: Double) async -> (notPublished: Bool, seconds: Double) {
            let t0 = MonotonicClock.nanos()
            var notPublished = false
            do {
                _ = try await session.publishAudio(name: "tone", stereo: false, dtx: false, ring: PacketRing(capacity: 8), timeout: timeout)
            } catch {
                if case .notPublished = error { notPublished = true }
            }
            return (notPublished, Double(MonotonicClock.nanos() - t0) / 1e9)
        }
        // The upper bounds only tell "gave up" from "waited for the other end": a loaded
        // machine (both flood tests beside this one) took 9.6 s for the 1 s timeout.
        let timedOut = await publish(timeout: 1)
        #expect(timedOut.notPublished && timedOut.seconds >= 0.9 && timedOut.seconds < 20, "\(timedOut)")
        session.stopWaiting()
        let stopped = await publish(timeout: 60)
        #expect(stopped.notPublished && stopped.seconds < 20, "\(stopped)")
        #expect(!fake.calls.contains { if case .publishAudio = $0 { true } else { false } })

        #expect(await session.leave() == nil)
        #expect(fake.calls.contains(.shutdown))
    }

    /// `join --no-media`'s session: its room has no WebRTC transport, so it is connected at
    /// the join (it would wait for a peer connection, and fail, if the session's stand-in were
    /// handed to it); no data channel is waited for, nothing is sent, and leaving is clean.
    @Test func aSignallingOnlySessionIsConnectedAtTheJoinWithoutATransport() async throws {
        let server = try HostileSignalServer(onJoin: .init(frames: [HostileSignalServer.frame(HostileSignalServer.join())], holdSeconds: 30))
        defer { server.stop() }
        let join = JoinRoomResponse(room: Room(id: "r1", name: "hostile"), token: "not-a-jwt", livekitHost: server.livekitHost)
        let session = RoomSession(signallingOnly: Self.offlinePlan(), join: join)
        await session.connect()
        #expect(await session.waitUntilJoined(timeout: 20)?.identity == "bot")
        try await waitUntil("the room is connected", timeout: 10) { await session.room.current.everConnected }
        let t0 = MonotonicClock.nanos()
        #expect(await !session.waitForDataChannel(timeout: 20))
        #expect(Double(MonotonicClock.nanos() - t0) / 1e9 < 2)
        #expect(await !session.sendData([1, 2, 3]))
        #expect(await session.leave() == nil)
        #expect(session.transport.lastError == nil)
    }

    // MARK: - Every command, one line

    /// join, play and say against a media server whose DTLS certificate never matches its
    /// SDP (the devserver's `badFingerprint`): the first join never gets in, and each says
    /// "could not join" (play and say said "could not be re-established"), exit 7.
    /// smoke's sides are checked at its signalling stage against refused upgrades (which
    /// the server answers as a refused join): the line there is the session's too.
    @Test func everyCommandSaysCouldNotJoinForASessionThatNeverJoined() async throws {
        let server = try await DevServer.start(["--seed-room", "shut"])
        let user = try CLIUser()
        let link = server.baseURL + "/m/shut"
        _ = try server.dev("POST", "/_dev/config", json: ["badFingerprint": true])
        for args in [["join", link], ["play", link, "--tone", "440", "--timeout", "60s"], ["say", link, "hello", "--timeout", "60s"]] {
            let r = try await user.expect(7, args, timeout: 120)
            let last = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
            #expect(last.hasPrefix("bedrud-bot: error: could not join the room (media connection (ICE/TURN) failed): DTLS peer certificate does not match"),
                    "\(args[0]): \(r.stderr)")
        }
        _ = try server.dev("POST", "/_dev/config", json: ["badFingerprint": false, "refuseUpgrades": true])
        let r = try await user.expect(23, ["smoke", link, "--timeout", "10s", "--duration", "3s"], timeout: 90)
        #expect(r.stdout.contains("could not join: the media server refused the join request as given (HTTP 400)"), "\(r.stdout)")
        #expect(!r.stdout.contains("re-established"), "\(r.stdout)")
    }

    // MARK: - A new command is one use of the session

    /// What a command that joins a room and publishes a 440 Hz tone for a second needs:
    /// the session, a ring, the paced producer. Under 60 lines, no polling, no socket of
    /// its own. Returns the published track's sid.
    static func joinAndPlayTone(_ plan: JoinPlan) async throws -> String {
        let join = try await plan.requestToken()
        let session = RoomSession(plan: plan, join: join, timeout: 20, publishData: true)
        await session.connect()
        guard await session.waitForDataChannel(timeout: 20) else {
            throw await session.leave() ?? CommandFailure(.network, "the publisher connection did not come up")
        }
        let ring = PacketRing(capacity: 64)
        let source = try PlaySource(.tone(hz: 440), loop: false)
        let track: RoomSession.PublishedAudio
        do {
            track = try await session.publishAudio(name: "tone", stereo: false, dtx: false, ring: ring, timeout: 20)
        } catch {
            _ = await session.leave()
            throw CommandFailure(.forbidden, "not published: \(error)")
        }
        await PlayProducer(source: source, ring: ring, limitSamples: UInt64(source.leadIn) + 48_000).run(startNanos: track.startNanos)
        try await Task.sleep(for: .milliseconds(300))  // the last packets leave the pacer's socket
        if let failure = await session.leave() { throw failure }
        return track.sid
    }

    @Test func aCommandThatPublishesAToneIsOneSessionUse() async throws {
        let server = try await DevServer.start(["--seed-room", "tone"])
        let inst = ResolvedInstance(name: "dev", url: WebURL(server.baseURL)!, displayName: nil, email: nil, passwordFile: nil,
                                    guestName: "Tone", tls: TLSConfiguration(), isAdHoc: true, origins: [:])
        let auth = AuthManager(instanceKey: "dev", api: APIClient(server: inst.url, http: HTTPClient()), store: MemoryCredentialStore(),
                               fallbackLogin: .guest(name: "Tone"), now: { Date().timeIntervalSince1970 })
        let sid = try await Self.joinAndPlayTone(JoinPlan(instance: inst, roomName: "tone", auth: auth, isThrowawayGuest: true))
        let log = try #require(try server.dev("GET", "/_dev/rooms/tone/packets/\(sid)") as? [String: Any])
        let packets = log["packets"] as? [[String: Any]] ?? []
        // One second of 20 ms frames after the lead-in: the server got (nearly) all of them.
        #expect(packets.count >= 45, "the server logged \(packets.count) packets")
        let source = try String(contentsOf: Repo.root.appendingPathComponent("Tests/BedrudBotTests/Session/RoomSessionTests.swift"), encoding: .utf8)
        let body = source.components(separatedBy: "static func joinAndPlayTone")[1].components(separatedBy: "\n    }\n")[0]
        #expect(body.split(separator: "\n").count < 60)
    }
}

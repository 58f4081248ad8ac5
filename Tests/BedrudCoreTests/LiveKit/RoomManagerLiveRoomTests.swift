import BedrudCore
import BedrudNet
import BedrudProtocol
import BedrudRTC
import BedrudRuntime
import Foundation
import Synchronization
import Testing
import TestSupport

/// A RoomManager with real WebRTC against the devserver's scripted rooms: the packets
/// aiortc sent arrive, data channels carry chat and moderation, late joiners are
/// answered, and RTCP goes back to the server. Serialized: each test runs a live room.
@Suite(.serialized) struct RoomManagerLiveRoomTests {
    /// Drains every ring on a thread of its own and counts packets per SSRC.
    final class CountingRouter: TrackRouter, @unchecked Sendable {
        // @unchecked: rings/counts are guarded by `lock`; the drain thread only reads the ring list under it.
        let lock = Mutex<(rings: [UInt32: PacketRing], counts: [UInt32: Int], trackSids: [UInt32: String], srs: Int)>(([:], [:], [:], 0))
        let running = Atomic<Bool>(true)

        init() {
            let t = Thread { [self] in
                while running.load(ordering: .relaxed) {
                    let rings = lock.withLock { $0.rings }
                    for (ssrc, ring) in rings {
                        var n = 0, sr = 0
                        while ring.pop({ h, _ in if h.kind == .rtp { n += 1 } else { sr += 1 } }) {}
                        if n > 0 || sr > 0 { lock.withLock { $0.counts[ssrc, default: 0] += n; $0.srs += sr } }
                    }
                    usleep(5000)
                }
            }
            t.start()
        }

        deinit { running.store(false, ordering: .relaxed) }

        func route(added: [RemoteTrack], removed: [RemoteTrack]) -> [UInt32: PacketRing] {
            var out: [UInt32: PacketRing] = [:]
            for t in added where t.kind == "audio" {
                let r = PacketRing(capacity: 256)
                out[t.ssrc] = r
                lock.withLock { $0.rings[t.ssrc] = r; $0.trackSids[t.ssrc] = t.trackSID ?? "" }
            }
            return out
        }

        func count(trackSid: String) -> Int {
            lock.withLock { s in s.trackSids.filter { $0.value == trackSid }.map { s.counts[$0.key] ?? 0 }.reduce(0, +) }
        }
    }

    /// Collects room events; waits for one with a deadline.
    actor EventLog {
        var events: [RoomEvent] = []
        func add(_ e: RoomEvent) { events.append(e) }
        func first(where p: @Sendable (RoomEvent) -> Bool) -> RoomEvent? { events.first(where: p) }
    }

    struct Live {
        let server: DevServer
        let room: RoomManager
        let transport: WebRTCTransport
        let router: CountingRouter
        let log: EventLog
        let collector: Task<Void, Never>

        func waitFor(_ what: String, timeout: Double = 30, _ p: @escaping @Sendable (RoomEvent) -> Bool) async throws -> RoomEvent {
            do {
                return try await TestSupport.waitFor("event '\(what)'", timeout: timeout) { await log.first(where: p) }
            } catch {
                throw TestSupportError("\(error); got \(await log.events.count) events; server log: \(server.log.suffix(1500))")
            }
        }

        func stop() async {
            await room.leave()
            await collector.value
            await transport.shutdown()
        }
    }

    static func start(_ scenario: String, room roomName: String) async throws -> Live {
        try await start(file: Repo.root.appendingPathComponent("samples/scenarios/\(scenario).scenario").path, room: roomName)
    }

    /// A scenario written by the test itself.
    static func start(text: String, room: String) async throws -> Live {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString).scenario")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return try await start(file: url.path, room: room)
    }

    static func start(file: String, room roomName: String) async throws -> Live {
        let server = try await DevServer.start(["--scenario", file])
        let api = APIClient(server: WebURL(server.baseURL)!, http: HTTPClient())
        let auth = AuthManager(instanceKey: "t", api: api, store: MemoryCredentialStore(), fallbackLogin: .guest(name: "test-bot"),
                               now: { Date().timeIntervalSince1970 })
        let rooms = RoomAPI(auth: auth)
        guard case .joined(let join) = try await rooms.join(roomName: roomName) else { throw TestSupportError("'\(roomName)' has ended") }
        let router = CountingRouter()
        let transport = WebRTCTransport(router: router, localAddresses: ["127.0.0.1"])
        let room = RoomManager(livekitHost: join.livekitHost, tls: .system, clientVersion: "test", transport: transport,
                               tokenProvider: { try await rooms.refreshToken(roomName: roomName) })
        let log = EventLog()
        let collector = Task { for await e in room.events { await log.add(e) } }
        await room.connect(token: join.token)
        return Live(server: server, room: room, transport: transport, router: router, log: log, collector: collector)
    }

    /// The devserver's view of one subscription of our bot.
    struct SubStat: Sendable, CustomStringConvertible {
        var track: String
        var sent: Int
        var receiverReports: Int
        var nacks: Int
        var description: String { "\(track): sent \(sent), RRs \(receiverReports), NACKs \(nacks)" }
    }

    /// The devserver's view of what it sent to (and received from) our bot.
    static func subscriberStats(_ server: DevServer, room: String) throws -> [SubStat] {
        let state = try server.dev("GET", "/_dev/state") as? [String: Any]
        let rooms = state?["rooms"] as? [[String: Any]] ?? []
        let r = rooms.first { ($0["name"] as? String) == room }
        let participants = r?["participants"] as? [[String: Any]] ?? []
        let bot = participants.first { ($0["client"] as? Bool) == true }
        let subs = bot?["subscriptions"] as? [[String: Any]] ?? []
        return subs.map {
            SubStat(track: $0["track"] as? String ?? "", sent: $0["packetsSent"] as? Int ?? 0,
                    receiverReports: $0["rtcp_receiver_reports"] as? Int ?? 0, nacks: $0["nacks"] as? Int ?? 0)
        }
    }

    /// The devserver's view of our bot's video subscriptions: (track, paused, payload bytes sent).
    static func videoSubscriptions(_ server: DevServer, room: String) throws -> [(track: String, paused: Bool, bytes: Int)] {
        let state = try server.dev("GET", "/_dev/state") as? [String: Any]
        let rooms = state?["rooms"] as? [[String: Any]] ?? []
        let r = rooms.first { ($0["name"] as? String) == room }
        let participants = r?["participants"] as? [[String: Any]] ?? []
        let bot = participants.first { ($0["client"] as? Bool) == true }
        let subs = bot?["subscriptions"] as? [[String: Any]] ?? []
        return subs.filter { ($0["codec"] as? String ?? "").hasPrefix("video/") }.map {
            ($0["track"] as? String ?? "", $0["paused"] as? Bool ?? false, $0["payloadBytesSent"] as? Int ?? -1)
        }
    }

    @Test func camerasAreTurnedOffAtTheServerAndAudioGoesOn() async throws {
        // One camera from the start, one published while we are in the room. The server
        // sends video to a subscriber that answers `inactive` (as pion does) unless it
        // disabled the track: we must get none of it, and no rejoin.
        let live = try await Self.start(text: """
            room cams public
            start first-join
            at 0s join alice name=Alice
            at 0s camera alice
            at 0s join bob name=Bob
            at 0.5s tone alice 440Hz 60s
            at 0.5s tone bob 660Hz 60s
            at 3s camera bob
            at 60s leave alice
            at 60s leave bob
            """, room: "cams")
        _ = try await live.waitFor("connected") { if case .connected = $0 { true } else { false } }
        try await waitUntil("both cameras in our subscriber connection", timeout: 40, every: 0.2) {
            (try? Self.videoSubscriptions(live.server, room: "cams").count) == 2
        }
        // Six more seconds of audio on both tracks after bob's camera came.
        let audioNow = live.router.lock.withLock { s in s.trackSids.keys.map { (ssrc: $0, count: s.counts[$0] ?? 0) } }
        #expect(audioNow.count == 2, "two audio tracks routed")
        try await waitUntil("6 s more audio on both tracks", timeout: 60, every: 0.1) {
            live.router.lock.withLock { s in audioNow.allSatisfy { (s.counts[$0.ssrc] ?? 0) >= $0.count + 300 } }
        }
        let videos = try await offPool { try Self.videoSubscriptions(live.server, room: "cams") }
        #expect(videos.count == 2 && videos.allSatisfy { $0.paused && $0.bytes == 0 }, "\(videos)")
        let events = await live.log.events
        #expect(!events.contains { if case .reconnecting = $0 { true } else { false } }, "no reconnect: \(events)")
        let refused = try await offPool { () -> Int? in
            let state = try live.server.dev("GET", "/_dev/state") as? [String: Any]
            let bot = ((state?["rooms"] as? [[String: Any]])?.first?["participants"] as? [[String: Any]])?.first { ($0["client"] as? Bool) == true }
            return (bot?["stats"] as? [String: Any])?["answers_pion_refused"] as? Int
        }
        #expect(refused == nil, "every answer passes pion's rule")
        await live.stop()
    }

    @Test func dataTrackChannelIsAcceptedAndItsMessagesIgnored() async throws {
        let live = try await Self.start(text: """
            room dtrack public
            start first-join
            at 0s join alice name=Alice
            at 0.5s tone alice 440Hz 60s
            at 60s leave alice
            """, room: "dtrack")
        let joined = try await live.waitFor("joined") { if case .roomJoined = $0 { true } else { false } }
        guard case .roomJoined(_, let me) = joined else { return }
        _ = try await live.waitFor("connected") { if case .connected = $0 { true } else { false } }
        // A message shaped like a chat DataPacket: on `_data_track` it must not become one.
        let chatLike = LiveKit.DataPacket.with {
            $0.participantIdentity = "alice"
            $0.value = .user(.with { $0.topic = "chat"; $0.payload = Array(#"{"type":"chat","message":"not chat"}"#.utf8) })
        }.protobufBytes()
        let path = "/_dev/rooms/dtrack/data-track/\(me.identity)"
        try await waitUntil("the server's _data_track channel open", timeout: 20, every: 0.2) {
            (try? await offPool { (try live.server.devBytes(path, body: chatLike)["ok"] as? Bool) == true }) == true
        }
        for junk in [[UInt8](repeating: 0xFF, count: 1200), [0x00]] {
            let answer = try await offPool { String(describing: try live.server.devBytes(path, body: junk)) }
            #expect(answer.contains("ok"), "\(answer)")
        }
        try await waitUntil("three ignored messages", timeout: 10, every: 0.05) { live.transport.ignoredDataMessages == 3 }
        // The room goes on: a real chat arrives on `_reliable`.
        _ = try await offPool { () -> Bool in _ = try live.server.dev("POST", "/_dev/rooms/dtrack/chat", json: ["from": "alice", "message": "real chat"]); return true }
        let chat = try await live.waitFor("chat") { if case .chatReceived = $0 { true } else { false } }
        if case .chatReceived(let c) = chat { #expect(c.text == "real chat") }
        let events = await live.log.events
        #expect(events.filter { if case .chatReceived = $0 { true } else { false } }.count == 1, "\(events)")
        #expect(!events.contains { if case .reconnecting = $0 { true } else { false } })
        #expect(live.transport.ignoredDataMessages == 3)
        await live.stop()
    }

    @Test func receivesEveryPacketAiortcSent() async throws {
        // Two talkers that stay for a minute, so the comparison never races their leaving.
        let live = try await Self.start(text: """
            room counting public
            start first-join
            at 0s join alice name=Alice
            at 0s join bob name=Bob
            at 0.5s tone alice 440Hz 60s
            at 0.5s tone bob 660Hz 60s
            at 60s leave alice
            at 60s leave bob
            """, room: "counting")
        _ = try await live.waitFor("connected") { if case .connected = $0 { true } else { false } }
        // Until both tracks have delivered 300 packets (6 s of audio) to our rings.
        try await waitUntil("300 packets on each of two tracks", timeout: 60, every: 0.1) {
            live.router.lock.withLock { s in s.trackSids.count == 2 && s.trackSids.keys.allSatisfy { (s.counts[$0] ?? 0) >= 300 } }
        }
        // Our counts first, then the server's: what we counted was sent before it answers.
        let ours = live.router.lock.withLock { s in Dictionary(uniqueKeysWithValues: s.trackSids.map { ($0.value, s.counts[$0.key] ?? 0) }) }
        let subs = try await offPool { try Self.subscriberStats(live.server, room: "counting") }
        #expect(subs.count == 2, "\(subs)")
        for s in subs {
            let sid = s.track
            let sent = s.sent
            let received = ours[sid] ?? 0
            #expect(sent >= 300, "\(s)")
            // Loopback, no faults: nothing we counted before asking was unsent, and every
            // packet the server had sent by its answer reaches us (however slow the answer
            // was on a loaded machine); `packetsLost == 0` below rules out later packets
            // standing in for lost ones.
            #expect(received <= sent, "track \(sid): server sent \(sent), we had received \(received) before asking")
            await #expect(throws: Never.self, "track \(sid): server sent \(sent), we received \(live.router.count(trackSid: sid))") {
                try await waitUntil("track \(sid) reaches \(sent) packets", timeout: 10) { live.router.count(trackSid: sid) >= sent }
            }
            #expect(s.receiverReports > 3, "the server saw our receiver reports: \(s)")
        }
        let stats = try #require(await live.transport.stats())
        #expect(stats.srtpProfile != nil)
        #expect(stats.tracks.allSatisfy { $0.packetsLost == 0 })
        #expect(live.router.lock.withLock { $0.srs } > 0, "sender reports reach the rings")
        await live.stop()
    }

    @Test func lateJoinerChatAndModeration() async throws {
        let live = try await Self.start("late-joiner", room: "late-joiner")
        let joined = try await live.waitFor("late joiner", timeout: 40) { if case .participantJoined(let p) = $0 { p.identity == "late" } else { false } }
        _ = joined
        let chat = try await live.waitFor("chat from late", timeout: 40) { if case .chatReceived = $0 { true } else { false } }
        if case .chatReceived(let c) = chat {
            #expect(c.senderIdentity == "late" && c.text == "sorry I am late" && c.senderName == "Late Joiner")
        }
        let spotlight = try await live.waitFor("spotlight", timeout: 40) { if case .systemMessage(let m, _) = $0 { m.event.name == "spotlight" } else { false } }
        if case .systemMessage(let m, _) = spotlight { #expect(m.target == "late" && m.actor == "host") }
        _ = try await live.waitFor("muted", timeout: 40) { if case .trackMuted(_, let who) = $0 { who == "late" } else { false } }
        // The late joiner's track came in a re-offer; its packets arrive.
        let state = await live.room.current
        let lateTrack = try #require(state.remoteParticipants["late"]?.tracks.first?.sid)
        try? await waitUntil("50 packets of the late joiner's track", timeout: 20, every: 0.2) { live.router.count(trackSid: lateTrack) >= 50 }
        #expect(live.router.count(trackSid: lateTrack) >= 50)
        await live.stop()
    }

    @Test func lossyNetworkProducesNACKsTheServerSees() async throws {
        let live = try await Self.start("lossy-network", room: "lossy")
        _ = try await live.waitFor("connected") { if case .connected = $0 { true } else { false } }
        // Until the server has counted our NACKs and receiver reports (its /_dev/state).
        let subs = try await waitFor("NACKs and 3 receiver reports at the server", timeout: 60, every: 0.5) { () -> [SubStat]? in
            let subs = try await offPool { try Self.subscriberStats(live.server, room: "lossy") }
            return subs.map(\.nacks).reduce(0, +) > 0 && subs.map(\.receiverReports).reduce(0, +) > 2 ? subs : nil
        }
        #expect(subs.map(\.nacks).reduce(0, +) > 0, "\(subs)")
        let stats = try #require(await live.transport.stats())
        #expect(stats.tracks.contains { $0.nackedPackets > 0 })
        await live.stop()
    }

    @Test func resumeAfterAShortDropKeepsTheSession() async throws {
        let live = try await Self.start("kicked-bot", room: "kicked-bot")
        let joined = try await live.waitFor("joined") { if case .roomJoined = $0 { true } else { false } }
        guard case .roomJoined(_, let local) = joined else { return }
        _ = try await live.waitFor("reconnecting", timeout: 20) { if case .reconnecting = $0 { true } else { false } }
        let back = try await live.waitFor("reconnected", timeout: 30) { if case .reconnected = $0 { true } else { false } }
        #expect(back == .reconnected(.resumed), "a 4 s outage is resumed, not rejoined")
        #expect(await live.room.current.localParticipant?.sid == local.sid, "same participant SID after the resume")
        let end = try await live.waitFor("kicked", timeout: 30) { if case .disconnected = $0 { true } else { false } }
        let events = await live.log.events
        #expect(end == .disconnected(.kicked), "events: \(events); server log: \(live.server.log.suffix(4000))")
        await live.stop()
    }
}

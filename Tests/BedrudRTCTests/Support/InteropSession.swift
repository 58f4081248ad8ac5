import BedrudProtocol
import BedrudRuntime
import COpus
import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

/// A ``PeerConnection`` wired to an aiortc peer: local candidates go to the peer, events
/// are recorded for the test to wait on.
final class InteropSession: @unchecked Sendable {
    // @unchecked: `rings` is only touched by the test's own task; everything else is immutable or thread-safe.
    let peer: RTCPeerProcess
    let loop: GLibLoop
    let pc: PeerConnection
    let events = AsyncLog<PeerConnectionEvent>()
    private var forwarder: Task<Void, Never>?
    var rings: [UInt32: PacketRing] = [:]

    static func loopbackConfiguration(name: String = "test") -> PeerConnectionConfiguration {
        var cfg = PeerConnectionConfiguration()
        cfg.ice.localAddresses = ["127.0.0.1"]
        cfg.ice.tcp = false
        cfg.ice.pacingMs = 5
        cfg.connectTimeoutSeconds = 30
        cfg.name = name
        return cfg
    }

    init(configuration: PeerConnectionConfiguration = InteropSession.loopbackConfiguration(), launch: () throws -> RTCPeerProcess = { try RTCPeerProcess() }) async throws {
        peer = try launch()
        _ = try await peer.next("ready", timeout: 60)
        loop = GLibLoop(name: "test-ice")
        pc = try PeerConnection(configuration: configuration, loop: loop)
        let events = self.events, peer = self.peer, stream = pc.events
        forwarder = Task {
            for await e in stream {
                events.append(e)
                if case .localCandidate(let c) = e {
                    try? peer.send(["cmd": "candidate", "candidate": c.candidate, "sdpMid": c.sdpMid ?? "0", "sdpMLineIndex": c.sdpMLineIndex ?? 0])
                }
            }
            events.close()
        }
    }

    /// Offer from the peer → tracks → rings attached → answer to the peer.
    @discardableResult
    func negotiate(_ offerCommand: [String: Any], ringCapacity: Int = 4096) async throws -> (tracks: [RemoteTrack], answer: String) {
        let offer = try await peer.request(offerCommand, reply: "offer")
        let sdp = try #require(offer["sdp"] as? String)
        let tracks = try await pc.setRemoteOffer(sdp).tracks
        for t in tracks where rings[t.ssrc] == nil {
            let ring = PacketRing(capacity: ringCapacity, maxPayload: 1500)
            rings[t.ssrc] = ring
            #expect(await pc.attach(ring, ssrc: t.ssrc))
        }
        let answer = try await pc.createAnswer()
        // Every answer must be one LiveKit's pion takes (see PionAnswerRule).
        let problems = PionAnswerRule.violations(text: answer)
        #expect(problems.isEmpty, "pion would refuse this answer: \(problems)")
        _ = try await peer.request(["cmd": "answer", "sdp": answer], reply: "answer_applied")
        return (tracks, answer)
    }

    /// Waits until our received count for every SSRC in `sent` reaches it (at most `timeout`
    /// seconds), then returns our counts, which the caller compares with `sent`.
    func waitForCounts(_ sent: [UInt32: Int], timeout: Double = 15) async -> [UInt32: UInt64] {
        let pc = self.pc
        try? await waitUntil("every sent packet received", timeout: timeout) {
            let s = await pc.stats()
            return sent.allSatisfy { ssrc, n in s.tracks.first { $0.ssrc == ssrc }?.packetsReceived ?? 0 >= UInt64(n) }
        }
        let s = await pc.stats()
        var out: [UInt32: UInt64] = [:]
        for t in s.tracks { out[t.ssrc] = t.packetsReceived }
        return out
    }

    /// Drains `ring` (the test is its only consumer): RTP payloads and sender-report count.
    func drain(_ ring: PacketRing) -> (payloads: [[UInt8]], sequenceNumbers: [UInt16], senderReports: Int) {
        var payloads: [[UInt8]] = []
        var seqs: [UInt16] = []
        var srs = 0
        while ring.pop({ h, p in
            if h.kind == .senderReport {
                srs += 1
            } else {
                payloads.append(Array(p))
                seqs.append(h.sequenceNumber)
            }
        }) {}
        return (payloads, seqs, srs)
    }

    /// Runs `body` with a fresh session and always shuts it down (peer process, loop) afterwards.
    static func run(configuration: PeerConnectionConfiguration = loopbackConfiguration(), launch: () throws -> RTCPeerProcess = { try RTCPeerProcess() }, _ body: (InteropSession) async throws -> Void) async throws {
        let s = try await InteropSession(configuration: configuration, launch: launch)
        do {
            try await body(s)
        } catch {
            await s.shutdown()
            throw error
        }
        await s.shutdown()
    }

    func shutdown() async {
        await pc.close()
        _ = await forwarder?.value
        peer.terminate()
        loop.shutdown()
    }
}

extension PeerMessage {
    /// `{"<ssrc>": n}` → `[ssrc: n]`.
    func counts(_ key: String) -> [UInt32: Int] {
        var out: [UInt32: Int] = [:]
        for (k, v) in (json[key] as? [String: Any]) ?? [:] {
            if let s = UInt32(k), let n = (v as? NSNumber)?.intValue { out[s] = n }
        }
        return out
    }

    func int(_ key: String) -> Int { (json[key] as? NSNumber)?.intValue ?? 0 }
}

/// Decodes Opus payloads (48 kHz stereo) and estimates the tone frequency of the left
/// channel from zero crossings, skipping the first `skipPackets` (encoder warm-up).
func estimateToneFrequency(_ payloads: [[UInt8]], skipPackets: Int = 10) -> Double? {
    var err: Int32 = 0
    guard let dec = opus_decoder_create(48000, 2, &err), err == OPUS_OK else { return nil }
    defer { opus_decoder_destroy(dec) }
    var pcm = [Int16](repeating: 0, count: 5760 * 2)
    var left: [Int16] = []
    for (i, p) in payloads.enumerated() {
        let n = p.withUnsafeBufferPointer { b in pcm.withUnsafeMutableBufferPointer { opus_decode(dec, b.baseAddress, Int32(b.count), $0.baseAddress!, 5760, 0) } }
        guard n > 0 else { return nil }
        if i >= skipPackets { for k in 0..<Int(n) { left.append(pcm[2 * k]) } }
    }
    guard left.count > 4800 else { return nil }
    var crossings = 0
    for k in 1..<left.count where (left[k - 1] < 0) != (left[k] < 0) { crossings += 1 }
    return Double(crossings) / 2 / (Double(left.count) / 48000)
}

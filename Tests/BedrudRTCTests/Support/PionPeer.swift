import BedrudProtocol
import BedrudRuntime
import COpus
import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

/// The pion conformance peer (`scripts/pion-peer`, Go on Debian's pion: LiveKit's own
/// WebRTC stack) as the SFU side of an ``InteropSession``. It speaks the same JSON-line
/// protocol as `scripts/rtc_peer.py`, plus `answer_rejected` with pion's error text,
/// `remove_track`, `ice_restart` and `media` (Opus frames to send).
enum PionPeer {
    static let binary = repositoryRoot.appendingPathComponent(".build/pion-peer/bin/pion-peer")
    private static let buildScript = repositoryRoot.appendingPathComponent("scripts/pion-peer/build")
    private static let state = BuildState()

    /// Runs `scripts/pion-peer/build` once per test process (a no-op when the binary is
    /// current, seconds when not), off the cooperative pool.
    static func ensureBuilt() async throws {
        if let error = try await state.outcome() { throw error }
    }

    /// Starts the peer; ``ensureBuilt()`` must have succeeded.
    static func launch() throws -> RTCPeerProcess {
        try RTCPeerProcess(executable: binary, arguments: [])
    }

    /// An ``InteropSession`` against a fresh pion peer, always shut down afterwards.
    static func run(configuration: PeerConnectionConfiguration = InteropSession.loopbackConfiguration(), _ body: (InteropSession) async throws -> Void) async throws {
        try await ensureBuilt()
        try await InteropSession.run(configuration: configuration, launch: launch, body)
    }

    private actor BuildState {
        private var result: PeerProcessError??
        func outcome() async throws -> PeerProcessError? {
            if let result { return result }
            let script = PionPeer.buildScript
            let r = try await offPool { try Subprocess.run(script, [], timeout: 300) }
            let error: PeerProcessError? = r.exitCode == 0 && !r.timedOut
                ? nil
                : PeerProcessError(message: "scripts/pion-peer/build failed (exit \(r.exitCode)\(r.timedOut ? ", timed out" : "")); run scripts/bootstrap. \(r.stderr.suffix(1500))")
            result = .some(error)
            return error
        }
    }
}

/// What pion said about an answer.
enum PionVerdict: Equatable {
    case applied
    case rejected(String)
}

extension InteropSession {
    /// One offer/answer round with the pion peer: `command` makes pion offer, we apply the
    /// offer, attach rings, answer, and pion applies the answer with its own
    /// `SetRemoteDescription`. A refusal is a test failure carrying pion's error text.
    @discardableResult
    func negotiateWithPion(_ command: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) async throws -> (tracks: [RemoteTrack], offer: String, answer: String) {
        let (tracks, offer, answer, verdict) = try await offerAndAnswer(command)
        if case .rejected(let why) = verdict {
            Issue.record("pion refused our answer: \(why)\n--- answer ---\n\(answer)", sourceLocation: sourceLocation)
            throw PeerProcessError(message: "pion refused our answer: \(why)")
        }
        return (tracks, offer, answer)
    }

    /// The round of ``negotiateWithPion(_:sourceLocation:)`` with `edit` applied to our
    /// answer before pion sees it, returning pion's verdict.
    func offerAndAnswer(_ command: [String: Any], edit: (String) -> String = { $0 }) async throws -> (tracks: [RemoteTrack], offer: String, answer: String, verdict: PionVerdict) {
        let offerMessage = try await peer.requestFailingFast(command, reply: "offer")
        let offer = try #require(offerMessage["sdp"] as? String)
        let tracks = try await pc.setRemoteOffer(offer).tracks
        for t in tracks where rings[t.ssrc] == nil {
            let ring = PacketRing(capacity: 4096, maxPayload: 1500)
            rings[t.ssrc] = ring
            #expect(await pc.attach(ring, ssrc: t.ssrc))
        }
        let answer = edit(try await pc.createAnswer())
        let seen = peer.messages.count { $0.event == "answer_applied" || $0.event == "answer_rejected" }
        try peer.send(["cmd": "answer", "sdp": answer])
        let skip = SkipCounter(seen)
        let reply: PeerMessage
        do {
            reply = try await peer.messages.first(where: { ($0.event == "answer_applied" || $0.event == "answer_rejected") && skip.take() }, timeout: 30, "pion's verdict on our answer")
        } catch {
            throw PeerProcessError(message: "\(error); peer stderr tail: \(peer.stderrTail)")
        }
        let verdict: PionVerdict = reply.event == "answer_applied" ? .applied : .rejected(reply["error"] as? String ?? "(no error text)")
        return (tracks, offer, answer, verdict)
    }
}

extension RTCPeerProcess {
    /// Like ``request(_:reply:timeout:)``, but an `error` event the peer sends after the
    /// command fails the wait at once with the peer's message.
    func requestFailingFast(_ obj: [String: Any], reply event: String, timeout: Double = 30) async throws -> PeerMessage {
        let seenReplies = messages.count { $0.event == event }
        let seenErrors = messages.count { $0.event == "error" }
        try send(obj)
        let replies = SkipCounter(seenReplies), errors = SkipCounter(seenErrors)
        let m: PeerMessage
        do {
            m = try await messages.first(where: { ($0.event == event && replies.take()) || ($0.event == "error" && errors.take()) }, timeout: timeout, "peer event \(event)")
        } catch {
            throw PeerProcessError(message: "\(error); peer stderr tail: \(stderrTail)")
        }
        if m.event == "error" { throw PeerProcessError(message: "peer: \(m["message"] as? String ?? "?") (after \(obj["cmd"] ?? "?"))") }
        return m
    }
}

/// Lets the first `n` matches pass by (replies to earlier requests).
final class SkipCounter: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var left: Int
    init(_ n: Int) { left = n }
    func take() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if left > 0 {
            left -= 1
            return false
        }
        return true
    }
}

/// `count` Opus frames of 20 ms (48 kHz stereo, both channels the same tone at `frequency`),
/// encoded with libopus, as hex for the peer's `media` command. Whole periods per loop
/// (1 s at 440 Hz = 50 frames) keep the looped tone continuous.
func opusToneFrames(frequency: Double, count: Int = 50) throws -> [String] {
    var err: Int32 = 0
    guard let enc = opus_encoder_create(48000, 2, OPUS_APPLICATION_AUDIO, &err), err == OPUS_OK else {
        throw PeerProcessError(message: "opus_encoder_create failed: \(err)")
    }
    defer { opus_encoder_destroy(enc) }
    var pcm = [Int16](repeating: 0, count: 960 * 2)
    var out = [UInt8](repeating: 0, count: 1500)
    var frames: [String] = []
    for f in 0..<count {
        for i in 0..<960 {
            let t = Double(f * 960 + i) / 48000
            let v = Int16(0.3 * 32767 * sin(2 * .pi * frequency * t))
            pcm[2 * i] = v
            pcm[2 * i + 1] = v
        }
        let n = opus_encode(enc, pcm, 960, &out, Int32(out.count))
        guard n > 0 else { throw PeerProcessError(message: "opus_encode failed: \(n)") }
        frames.append(out[0..<Int(n)].map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined())
    }
    return frames
}

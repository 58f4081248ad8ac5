#if canImport(Glibc)
import Glibc
#endif
import BedrudNet
import BedrudProtocol
import Foundation
import Synchronization

/// A LiveKit signalling server that misbehaves on purpose, on 127.0.0.1: it upgrades the
/// WebSocket properly and then sends what its script says — a join followed by an offer
/// the client cannot answer, bytes that are not protobuf, candidates that are garbage,
/// or a resume that is accepted and dropped a moment later. Everything the client sends
/// is read and ignored. A join (`/rtc` without `reconnect=1`) gets `onJoin`, a resume
/// gets `onResume`.
public final class HostileSignalServer: @unchecked Sendable {
    // @unchecked: the scripts are immutable values; ScriptedServer owns the threads.
    /// What to send on one connection, in order; then hold it open for `holdSeconds`
    /// (reading and dropping what the client sends) and close.
    public struct Script: Sendable {
        public var frames: [[UInt8]]
        public var holdSeconds: Double
        public init(frames: [[UInt8]], holdSeconds: Double = 20) {
            self.frames = frames
            self.holdSeconds = holdSeconds
        }
    }

    private let server: ScriptedServer
    private final class UpgradeLog: Sendable {
        let entries = Mutex<[(at: Date, resume: Bool)]>([])
    }
    private let log: UpgradeLog

    /// The `livekitHost` a RoomManager is given (`http://127.0.0.1:PORT`).
    public var livekitHost: String { server.baseURL }
    /// WebSocket upgrades answered so far (joins and resumes).
    public var connectionCount: Int { server.connectionCount }

    /// When each upgrade request arrived, and whether it was a resume, in order.
    public var upgrades: [(at: Date, resume: Bool)] { log.entries.withLock { $0 } }

    public init(onJoin: Script, onResume: Script? = nil) throws {
        let log = UpgradeLog()
        self.log = log
        server = try ScriptedServer { c in
            guard let request = c.readRequest() else { return }
            let isResume = request.head.split(separator: "\r\n").first?.contains("reconnect=1") ?? false
            log.entries.withLock { $0.append((Date(), isResume)) }
            let script = isResume ? (onResume ?? onJoin) : onJoin
            let key = request.head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) } ?? ""
            c.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(WebSocketClient.acceptValue(for: key))\r\n\r\n")
            for frame in script.frames { c.write(frame) }
            c.hang(seconds: script.holdSeconds)
        }
    }

    public func stop() { server.stop() }

    // MARK: - Frames

    /// One binary WebSocket frame (unmasked, as a server sends it).
    public static func frame(_ payload: [UInt8]) -> [UInt8] { WebSocketFrame(opcode: .binary, payload: payload).encode(maskKey: nil) }

    public static func frame(_ message: LiveKit.SignalResponse.Message) -> [UInt8] { frame(LiveKit.SignalResponse(message).protobufBytes()) }

    /// A join as LiveKit 1.10 sends it to a subscriber-primary client, with no keepalive
    /// (ping interval 0) so that only the script decides what happens.
    public static func join(sid: String = "PA_bot", pingInterval: Int32 = 0, pingTimeout: Int32 = 0,
                            others: [LiveKit.ParticipantInfo] = []) -> LiveKit.SignalResponse.Message {
        .join(LiveKit.JoinResponse.with {
            $0.room = .with { $0.name = "hostile"; $0.sid = "RM_hostile" }
            $0.participant = .with { $0.identity = "bot"; $0.sid = sid; $0.name = "Recorder"; $0.state = .joined }
            $0.otherParticipants = others
            $0.subscriberPrimary = true
            $0.pingInterval = pingInterval
            $0.pingTimeout = pingTimeout
            $0.serverInfo = .with { $0.protocol = 16; $0.version = "1.10.1" }
            $0.clientConfiguration = .with { $0.resumeConnection = .enabled }
        })
    }

    /// A `reconnect` answer to a resume.
    public static var reconnect: LiveKit.SignalResponse.Message { .reconnect(LiveKit.ReconnectResponse()) }

    /// A subscriber offer with this SDP (any text, any size).
    public static func offer(_ sdp: String, id: UInt32 = 1) -> LiveKit.SignalResponse.Message {
        .offer(LiveKit.SessionDescription(type: "offer", sdp: sdp, id: id))
    }

    /// A trickled candidate for the subscriber connection, `candidateInit` as given.
    public static func trickle(_ candidateInit: String) -> LiveKit.SignalResponse.Message {
        .trickle(LiveKit.TrickleRequest(candidateInit: candidateInit, target: .subscriber))
    }

    /// A subscriber offer a WebRTC client can answer: one receive-only Opus m-line and a
    /// data channel, ICE credentials and a fingerprint, and one host candidate at
    /// `candidatePort` on 127.0.0.1 where nothing answers (so ICE never connects).
    /// `mutate` edits its lines first (drop the fingerprint, add junk).
    public static func answerableOffer(candidatePort: Int = 9, mutate: (inout [String]) -> Void = { _ in }) -> String {
        var lines = [
            "v=0", "o=- 4004946731 4004946731 IN IP4 0.0.0.0", "s=-", "t=0 0", "a=group:BUNDLE 0 1", "a=msid-semantic:WMS *",
            "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=sendonly", "a=mid:0",
            "a=msid:PA_alice TR_alice", "a=rtcp:9 IN IP4 0.0.0.0", "a=rtcp-mux", "a=ssrc:1111 cname:alice",
            "a=rtpmap:111 opus/48000/2", "a=fmtp:111 minptime=10;useinbandfec=1",
            "a=candidate:1 1 udp 2130706431 127.0.0.1 \(candidatePort) typ host",
            "a=ice-ufrag:hOst", "a=ice-pwd:HostileHostileHostile12",
            "a=fingerprint:sha-256 AF:35:E0:65:BA:E3:43:B7:2C:8C:7C:5A:C2:B8:E8:7A:EA:E4:C9:AF:5B:B6:73:EC:2D:63:8E:F2:B5:AF:D9:1A",
            "a=setup:actpass",
            "m=application 9 UDP/DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:1", "a=sctp-port:5000",
            "a=ice-ufrag:hOst", "a=ice-pwd:HostileHostileHostile12",
            "a=fingerprint:sha-256 AF:35:E0:65:BA:E3:43:B7:2C:8C:7C:5A:C2:B8:E8:7A:EA:E4:C9:AF:5B:B6:73:EC:2D:63:8E:F2:B5:AF:D9:1A",
            "a=setup:actpass",
        ]
        mutate(&lines)
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

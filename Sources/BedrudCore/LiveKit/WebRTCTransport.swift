import BedrudProtocol
import BedrudRTC
import FoundationEssentials
import Synchronization

/// Decides which remote tracks to receive and where their packets go.
public protocol TrackRouter: Sendable {
    /// Called after every applied server offer, before the answer is sent, with the tracks
    /// the offer added and removed. Returns a ring for each added SSRC that should be
    /// received; packets of SSRCs without a ring are counted and dropped.
    func route(added: [RemoteTrack], removed: [RemoteTrack]) async -> [UInt32: PacketRing]
}

/// The WebRTC layer behind ``RoomManager``: LiveKit's SUBSCRIBER peer connection on a
/// GLib loop thread (``PeerConnection``). The server offers, we answer; RTP for each
/// routed SSRC goes into the ring the ``TrackRouter`` gives, and data-channel messages
/// come back as ``TransportEvent``s. A receive-only bot needs no publisher connection.
///
/// Called serially by the RoomManager's transport queue.
public final class WebRTCTransport: RoomTransport, @unchecked Sendable {
    // @unchecked: `state` is behind a mutex; `loop` and the configuration are immutable.
    public let loop: GLibLoop
    private let router: (any TrackRouter)?
    private let baseConfiguration: PeerConnectionConfiguration
    private let state = Mutex<State>(State())
    private let logger = Logger("webrtc")

    private struct State {
        var subscriber: PeerConnection?
        var pump: Task<Void, Never>?
        var tracks: Set<RemoteTrack> = []
        var lastError: String?
    }

    /// - Parameters:
    ///   - localAddresses: host-candidate addresses; `["127.0.0.1"]` for a media server on
    ///     loopback (libnice skips loopback by itself otherwise), empty for every interface.
    public init(router: (any TrackRouter)?, localAddresses: [String] = [], connectTimeoutSeconds: Double = 30) {
        self.router = router
        loop = GLibLoop(name: "bedrud-webrtc")
        var c = PeerConnectionConfiguration()
        c.ice.localAddresses = localAddresses
        c.connectTimeoutSeconds = connectTimeoutSeconds
        c.name = "subscriber"
        baseConfiguration = c
    }

    /// Why the connection failed last, in one sentence (e.g. a fingerprint mismatch).
    public var lastError: String? { state.withLock { $0.lastError } }

    /// Statistics of the subscriber connection: per-track packets, loss, jitter, rate.
    public func stats() async -> PeerConnectionStats? {
        guard let pc = state.withLock({ $0.subscriber }) else { return nil }
        return await pc.stats()
    }

    // MARK: - RoomTransport

    public func create(_ configuration: TransportConfiguration, events: @escaping @Sendable (TransportEvent) -> Void) async throws {
        await close()
        var c = baseConfiguration
        c.ice.servers = configuration.iceServers.map { ICEServer(urls: $0.urls, username: $0.username, credential: $0.credential) }
        c.ice.relayOnly = configuration.forceRelay
        let pc = try PeerConnection(configuration: c, loop: loop)
        let logger = self.logger
        let pump = Task { [weak self] in
            for await event in pc.events {
                switch event {
                case .localCandidate(let c):
                    events(.localCandidate(c, .subscriber))
                case .connected(let profile):
                    logger.info("media connected (SRTP \(profile.map { "\($0)" } ?? "none"))")
                    events(.stateChanged(.subscriber, .connected))
                case .iceStateChanged(let s):
                    switch s {
                    case .disconnected: events(.stateChanged(.subscriber, .disconnected))
                    case .checking: events(.stateChanged(.subscriber, .connecting))
                    default: break
                    }
                case .failed(let error):
                    self?.noteError(error.description)
                    logger.warning("media connection failed: \(error.description)")
                    events(.stateChanged(.subscriber, .failed))
                case .selectedCandidatePair(let pair):
                    logger.debug("ICE pair: \(pair)")
                case .dataChannelOpened(let info):
                    events(.dataChannelOpened(LiveKit.DataChannelInfo.with { $0.label = info.label; $0.id = UInt32(info.id); $0.target = .subscriber }))
                case .dataChannelMessage(let m):
                    if m.label == "_reliable" || m.label == "_lossy" {
                        events(.dataReceived(m.data, reliable: m.label == "_reliable"))
                    }
                case .unknownSSRC(let ssrc, let pt):
                    logger.debug("packets for unannounced SSRC \(ssrc) (PT \(pt)) dropped")
                case .closed:
                    events(.stateChanged(.subscriber, .closed))
                case .tracksChanged, .localCandidatesComplete, .dtlsStateChanged, .remoteBye, .dataChannelClosed, .stats:
                    break
                }
            }
        }
        state.withLock {
            $0.subscriber = pc
            $0.pump = pump
            $0.tracks = []
        }
    }

    private func noteError(_ text: String) { state.withLock { $0.lastError = text } }

    public func applyRemoteOffer(_ offer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) async throws -> String {
        guard target == .subscriber, let pc = state.withLock({ $0.subscriber }) else {
            throw TransportError("an offer for the \(target) connection, which this receive-only client does not open")
        }
        let now: [RemoteTrack]
        do {
            now = try await pc.setRemoteOffer(offer.sdp)
        } catch {
            noteError(error.description)
            throw TransportError(error.description)
        }
        let current = Set(now)
        let (added, removed) = state.withLock { s -> ([RemoteTrack], [RemoteTrack]) in
            let a = now.filter { !s.tracks.contains($0) }
            let r = s.tracks.filter { !current.contains($0) }
            s.tracks = current
            return (a, Array(r))
        }
        if let router, !(added.isEmpty && removed.isEmpty) {
            let rings = await router.route(added: added, removed: removed)
            for (ssrc, ring) in rings { _ = await pc.attach(ring, ssrc: ssrc) }
        }
        do {
            return try await pc.createAnswer()
        } catch {
            noteError(error.description)
            throw TransportError(error.description)
        }
    }

    public func applyRemoteAnswer(_ answer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) async throws {
        throw TransportError("an answer for the \(target) connection, which this receive-only client never offered")
    }

    public func addRemoteCandidate(_ candidate: ICECandidateInit, target: LiveKit.SignalTarget) async {
        guard target == .subscriber, let pc = state.withLock({ $0.subscriber }) else { return }
        do { try await pc.addRemoteCandidate(candidate) } catch { logger.debug("remote candidate ignored: \(error)") }
    }

    public func updateICEServers(_ servers: [LiveKit.ICEServer]) async {
        // The subscriber connection keeps its TURN allocation; new servers apply to the
        // next connection (a full rejoin creates it with the fresh list).
    }

    public func restartICE(_ target: LiveKit.SignalTarget) async {
        // Only a publisher connection restarts ICE itself; the server restarts the subscriber's.
    }

    public func close() async {
        let (pc, pump) = state.withLock { s -> (PeerConnection?, Task<Void, Never>?) in
            let out = (s.subscriber, s.pump)
            s.subscriber = nil
            s.pump = nil
            s.tracks = []
            return out
        }
        if let pc { await pc.close() }
        pump?.cancel()
    }

    /// Closes everything and stops the loop thread. Call once, at the end.
    public func shutdown() async {
        await close()
        loop.shutdown()
    }
}

/// A failure of the WebRTC layer, as one sentence.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

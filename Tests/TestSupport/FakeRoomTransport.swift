import BedrudCore
import BedrudProtocol
import BedrudRuntime
import Synchronization

/// A ``RoomTransport`` without sockets or media, for testing what drives it (the
/// ``RoomManager``, a room session) on its own: `create` reports the primary connection
/// connected at once, every offer gets `answerSDP`, data "sends" are kept, and the publishing
/// calls a room session makes succeed at once. What was asked of it is recorded.
public final class FakeRoomTransport: RoomTransport, Sendable {
    /// What the fake was asked to do, in order.
    public enum Call: Sendable, Equatable {
        case create, offer(String), answer, candidate, iceServers, restartICE, close, shutdown
        case publishAudio(cid: String), muted(mid: String, Bool)
    }

    private struct State: Sendable {
        var calls: [Call] = []
        var sent: [[UInt8]] = []
        var events: (@Sendable (TransportEvent) -> Void)?
        var channelOpen = false
        var iceServerUpdates: [[LiveKit.ICEServer]] = []
    }
    private let state = Mutex(State())
    public let answerSDP: String
    /// Whether `create` opens the publisher's data channels (a publishing session).
    public let opensDataChannels: Bool

    public init(answerSDP: String = "v=0\r\n", opensDataChannels: Bool = true) {
        self.answerSDP = answerSDP
        self.opensDataChannels = opensDataChannels
    }

    public var calls: [Call] { state.withLock { $0.calls } }
    /// The servers of each ``updateICEServers(_:)`` call (a resume's), in order.
    public var iceServerUpdates: [[LiveKit.ICEServer]] { state.withLock { $0.iceServerUpdates } }
    /// Data packets "sent", in order.
    public var sent: [[UInt8]] { state.withLock { $0.sent } }

    /// Reports `event` as the transport would (to the room that created it).
    public func report(_ event: TransportEvent) {
        state.withLock { $0.events }?(event)
    }

    private func record(_ c: Call) { state.withLock { $0.calls.append(c) } }

    // MARK: - RoomTransport

    public func create(_ configuration: TransportConfiguration, events: @escaping @Sendable (TransportEvent) -> Void) async throws {
        state.withLock {
            $0.calls.append(.create)
            $0.events = events
            $0.channelOpen = opensDataChannels
        }
        events(.stateChanged(configuration.subscriberPrimary ? .subscriber : .publisher, .connected))
    }

    public func applyRemoteOffer(_ offer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) async throws -> String {
        record(.offer(offer.sdp))
        return answerSDP
    }

    public func applyRemoteAnswer(_ answer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) async throws { record(.answer) }
    public func addRemoteCandidate(_ candidate: ICECandidateInit, target: LiveKit.SignalTarget) async { record(.candidate) }
    public func updateICEServers(_ servers: [LiveKit.ICEServer]) async {
        state.withLock {
            $0.calls.append(.iceServers)
            $0.iceServerUpdates.append(servers)
        }
    }
    public func restartICE(_ target: LiveKit.SignalTarget) async { record(.restartICE) }

    public func sendData(_ bytes: [UInt8], reliable: Bool) async -> Bool {
        state.withLock { s in
            guard s.channelOpen else { return false }
            s.sent.append(bytes)
            return true
        }
    }

    public func close() async {
        state.withLock {
            $0.calls.append(.close)
            $0.events = nil
            $0.channelOpen = false
        }
    }

    // MARK: - What a room session asks besides

    public var lastError: String? { nil }
    public func waitForDataChannel(_ label: String, timeoutSeconds: Double) async -> Bool { state.withLock { $0.channelOpen } }
    public func cancelDataChannelWaits() {}
    public func publishAudio(cid: String, stereo: Bool, dtx: Bool, ring: PacketRing, timeoutSeconds: Double) async throws -> (mid: String, startNanos: UInt64) {
        record(.publishAudio(cid: cid))
        return ("0", MonotonicClock.nanos())
    }
    public func waitUntilDataSent(timeoutSeconds: Double) async -> Bool { true }
    public func setAudioMuted(mid: String, muted: Bool) async { record(.muted(mid: mid, muted)) }
    public func waitUntilAudioDrained(mid: String, timeoutSeconds: Double) async -> Bool { true }
    public func shutdown() async { record(.shutdown) }
}

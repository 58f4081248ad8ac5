import BedrudProtocol

/// What the WebRTC layer reports back to the room.
public enum TransportEvent: Sendable {
    case stateChanged(LiveKit.SignalTarget, TransportState)
    case localCandidate(ICECandidateInit, LiveKit.SignalTarget)
    case dataChannelOpened(LiveKit.DataChannelInfo)
    case dataReceived([UInt8], reliable: Bool)
    /// Our PUBLISHER offer (SDP), to send to the server.
    case offerCreated(String)
}

/// The narrow interface between ``RoomManager`` and the peer connections, so the room
/// logic can run (and be tested) without media, and the media side knows nothing of
/// signalling. Called serially by the RoomManager actor.
public protocol RoomTransport: AnyObject, Sendable {
    /// Creates the peer connections for a (re)joined session. Events go to `events`
    /// until ``close()``.
    func create(_ configuration: TransportConfiguration, events: @escaping @Sendable (TransportEvent) -> Void) async throws
    /// Applies a server offer (every one, re-offers included) and returns the answer SDP.
    func applyRemoteOffer(_ offer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) async throws -> String
    func applyRemoteAnswer(_ answer: LiveKit.SessionDescription, target: LiveKit.SignalTarget) async throws
    func addRemoteCandidate(_ candidate: ICECandidateInit, target: LiveKit.SignalTarget) async
    func updateICEServers(_ servers: [LiveKit.ICEServer]) async
    func restartICE(_ target: LiveKit.SignalTarget) async
    /// Sends one serialized `DataPacket` on the PUBLISHER's `_reliable` or `_lossy` channel;
    /// false when it is not open. Receive-only transports keep the default (false).
    func sendData(_ bytes: [UInt8], reliable: Bool) async -> Bool
    /// Closes every peer connection; no events afterwards.
    func close() async
}

extension RoomTransport {
    public func sendData(_ bytes: [UInt8], reliable: Bool) async -> Bool { false }
}

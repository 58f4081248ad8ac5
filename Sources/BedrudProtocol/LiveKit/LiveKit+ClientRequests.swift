// Builders for the requests a client sends, so callers (the room state machine, the
// publisher) never assemble envelopes by hand. Each is checked byte for byte against
// the official package (LiveKitEncodingTests).

extension LiveKit.SignalRequest {
    /// Our answer to server offer `offerID` (echo it; 0 for legacy servers).
    public static func answer(sdp: String, offerID: UInt32) -> Self {
        Self(.answer(LiveKit.SessionDescription(type: "answer", sdp: sdp, id: offerID)))
    }

    /// Our offer for the PUBLISHER PC.
    public static func offer(sdp: String, id: UInt32) -> Self {
        Self(.offer(LiveKit.SessionDescription(type: "offer", sdp: sdp, id: id)))
    }

    /// One local ICE candidate for our PC `target`.
    public static func trickle(_ candidate: ICECandidateInit, target: LiveKit.SignalTarget) -> Self {
        Self(.trickle(LiveKit.TrickleRequest(candidateInit: candidate.json, target: target)))
    }

    /// A graceful leave (`CLIENT_INITIATED`, action DISCONNECT).
    public static func leave(reason: LiveKit.DisconnectReason = .clientInitiated) -> Self {
        Self(.leave(LiveKit.LeaveRequest(reason: reason, action: .disconnect)))
    }

    /// Legacy ping: our clock in ms.
    public static func ping(timestampMs: Int64) -> Self {
        Self(.ping(timestampMs))
    }

    /// Current ping: our clock in ms and the last RTT we measured (0 if none).
    public static func pingReq(timestampMs: Int64, rttMs: Int64) -> Self {
        Self(.pingReq(LiveKit.Ping(timestamp: timestampMs, rtt: rttMs)))
    }

    /// Mute or unmute one of our own published tracks.
    public static func mute(trackSid: String, muted: Bool) -> Self {
        Self(.mute(LiveKit.MuteTrackRequest(sid: trackSid, muted: muted)))
    }

    /// Subscribe to or unsubscribe from remote tracks.
    public static func subscription(trackSids: [String], subscribe: Bool) -> Self {
        Self(.subscription(LiveKit.UpdateSubscription(trackSids: trackSids, subscribe: subscribe)))
    }

    public static func syncState(_ state: LiveKit.SyncState) -> Self {
        Self(.syncState(state))
    }

    public static func simulate(_ scenario: LiveKit.SimulateScenario.Scenario) -> Self {
        Self(.simulate(LiveKit.SimulateScenario(scenario)))
    }

    /// Whether the request may be sent while the signal connection is resuming. Like
    /// the JS SDK, negotiation and leave bypass the queue that holds other requests
    /// until a resume completes (livekit-protocol.md §5.2 step 5).
    public var bypassesResumeQueue: Bool {
        switch message {
        case .offer, .answer, .trickle, .leave, .syncState, .simulate, .ping, .pingReq: true
        default: false
        }
    }
}

import BedrudProtocol
import Testing
@testable import BedrudCore

/// Server answers the bot cannot work with must end in a clear error, never a silent
/// wait: a publisher-primary join (single-PC `/rtc/v1`, or a token that may not
/// subscribe), and requests the server refuses with `request_response`.
@Suite struct RoomStateServerModeTests {
    static func join(subscriberPrimary: Bool, canSubscribe: Bool? = nil) -> LiveKit.JoinResponse {
        var join = Fixture.join()
        join.subscriberPrimary = subscriberPrimary
        if let canSubscribe { join.participant?.permission = .with { $0.canSubscribe = canSubscribe; $0.canPublish = true } }
        return join
    }

    @Test func publisherPrimaryJoinEndsAtOnceWithTheReason() {
        var t = RoomTranscript()
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        let actions = t.server(.join(Self.join(subscriberPrimary: false)))
        // Polite leave, no transports, no roomJoined, no transport timer left running.
        #expect(actions.effects == [.send(.leave()), .closeSignal, .emit(.disconnected(.subscriberNotPrimary(canSubscribe: true)))])
        #expect(t.state.connectionState == .disconnected(.subscriberNotPrimary(canSubscribe: true)))
        #expect(t.state.timers.isEmpty)
        #expect(t.state.remoteParticipants.isEmpty)
    }

    @Test func aTokenThatMayNotSubscribeIsNamedAsSuch() {
        var t = RoomTranscript()
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        let actions = t.server(.join(Self.join(subscriberPrimary: false, canSubscribe: false)))
        #expect(actions.events == [.disconnected(.subscriberNotPrimary(canSubscribe: false))])
        #expect(RoomDisconnectReason.subscriberNotPrimary(canSubscribe: false).description == "cannot subscribe")
        #expect(RoomDisconnectReason.subscriberNotPrimary(canSubscribe: true).description == "subscriber not primary")
    }

    @Test func aFullRejoinIntoPublisherPrimaryEndsToo() {
        var t = RoomTranscript()
        t.joinRoom()
        t.server(Fixture.leave(.unknownReason, action: .reconnect, canReconnect: true))
        #expect(t.fireDueTimers().effects == [.fetchJoinToken])
        t.feed(.joinTokenReceived("tok-2"))
        t.feed(.signalConnected)
        let actions = t.server(.join(Self.join(subscriberPrimary: false)))
        #expect(actions.events.last == .disconnected(.subscriberNotPrimary(canSubscribe: true)))
        #expect(!actions.contains { if case .createTransports = $0 { true } else { false } })
    }

    @Test func signallingOnlyClientsDoNotCare() {
        var t = RoomTranscript { $0.waitForTransport = false }
        t.feed(.connect(token: "tok"))
        t.feed(.signalConnected)
        let joined = t.server(.join(Self.join(subscriberPrimary: false)))
        #expect(joined.events.last == .connected)
    }

    @Test func refusedRequestsAreSurfacedAndOKOnesAreNot() {
        var t = RoomTranscript()
        t.joinRoom()
        let addTrack = LiveKit.AddTrackRequest.with { $0.cid = "TR_local_mic"; $0.name = "mic" }
        let refused = t.server(.requestResponse(.with {
            $0.requestID = 7
            $0.reason = .notAllowed
            $0.message = "does not have permission to publish"
            $0.request = .addTrack(addTrack)
        }))
        guard case .requestRefused(let r)? = refused.events.first, refused.events.count == 1 else {
            Issue.record("expected one requestRefused, got \(refused.events)")
            return
        }
        #expect(r.requestID == 7 && r.kind == .addTrack && r.reason == .notAllowed && r.trackCid == "TR_local_mic")
        #expect(r.message == "does not have permission to publish")
        #expect(t.state.connectionState == .connected, "a refused request does not end the room")

        for reason: LiveKit.RequestResponse.Reason in [.ok, .queued] {
            #expect(t.server(.requestResponse(.with { $0.requestID = 8; $0.reason = reason })).events.isEmpty)
        }
        let mute = t.server(.requestResponse(.with { $0.requestID = 9; $0.reason = .notFound; $0.request = .mute(.with { $0.sid = "TR_x" }) }))
        let kinds: [RefusedRequest.Kind?] = mute.events.map { if case .requestRefused(let r) = $0 { r.kind } else { nil } }
        #expect(kinds == [.mute])
    }
}

import BedrudProtocol
import Foundation
import Testing
import TestSupport
@testable import BedrudCore

/// Random input sequences: RoomState must never crash, and a few invariants must hold
/// after every step. Seeds are printed; replay one with BEDRUD_FUZZ_SEED=<seed>.
@Suite struct RoomStateFuzzTests {

    static let seeds: [UInt64] = {
        if let text = ProcessInfo.processInfo.environment["BEDRUD_FUZZ_SEED"], let seed = UInt64(text) { return [seed] }
        let fresh = UInt64.random(in: 1...UInt64.max)
        print("[fuzz] RoomState seeds 11, 12, 13, \(fresh) (replay one with BEDRUD_FUZZ_SEED=<seed>)")
        return [11, 12, 13, fresh]
    }()

    @Test(arguments: seeds)
    func randomInputSequencesKeepTheInvariants(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        var t = RoomTranscript { $0.maxQueuedRequests = 16 }
        var reconnecting = false
        for step in 0..<4000 {
            // Mostly small steps, sometimes long silences that let timers expire.
            t.advance(to: t.now + (Int.random(in: 0..<20, using: &rng) == 0
                ? Int64.random(in: 0...20_000, using: &rng) : Int64.random(in: 0...200, using: &rng)))
            // Mostly what the protocol would deliver next, so that deep states are reached.
            let input = Int.random(in: 0..<10, using: &rng) < 6
                ? Self.likelyInput(&rng, t.state) : Self.randomInput(&rng, t.state)
            let wasDisconnected: Bool
            if case .disconnected = t.state.connectionState { wasDisconnected = true } else { wasDisconnected = false }
            let actions: [RoomAction]
            if Int.random(in: 0..<4, using: &rng) == 0 {
                actions = t.fireDueTimers()
            } else {
                actions = t.feed(input)
            }
            let context = "seed \(seed) step \(step) input \(input)"

            for request in actions.opened {
                if case .resume(let sid, _) = request.mode, sid.isEmpty || sid != t.state.localParticipant?.sid {
                    Issue.record("\(context): resume without our current SID")
                }
            }
            for case .startTimer(_, let deadline, _) in actions where deadline.milliseconds < t.now {
                Issue.record("\(context): timer in the past")
            }
            if wasDisconnected, !isConnect(input) {
                for action in actions {
                    switch action {
                    case .openSignal, .send, .createTransports, .fetchJoinToken:
                        Issue.record("\(context): acted after disconnect: \(action)")
                    default: break
                    }
                }
            }
            switch t.state.connectionState {
            case .disconnected:
                if !t.state.timers.isEmpty { Issue.record("\(context): timers left after disconnect") }
            case .connected:
                if t.state.signal != .ready { Issue.record("\(context): connected without a ready signal") }
            default: break
            }
            for event in actions.events {
                switch event {
                case .reconnecting: reconnecting = true
                case .reconnected:
                    if !reconnecting { Issue.record("\(context): reconnected without reconnecting") }
                    reconnecting = false
                case .disconnected, .roomJoined: if case .disconnected = event { reconnecting = false }
                default: break
                }
            }
            if Set(t.state.participantOrder) != Set(t.state.remoteParticipants.keys)
                || t.state.participantOrder.count != t.state.remoteParticipants.count {
                Issue.record("\(context): participant order out of sync")
            }
            if let me = t.state.localParticipant, t.state.remoteParticipants[me.identity] != nil {
                Issue.record("\(context): we are listed as a remote participant")
            }
            if t.state.queue.count > 16 { Issue.record("\(context): queue unbounded") }
        }
    }

    private func isConnect(_ input: RoomInput) -> Bool {
        if case .connect = input { true } else { false }
    }

    // MARK: - Input generator

    static let identities = ["alice", "bob", "carol", "bot"]

    static func randomInput(_ rng: inout SeededGenerator, _ state: RoomState) -> RoomInput {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<3: return .connect(token: "tok-\(Int.random(in: 0..<3, using: &rng))")
        case 3..<5: return .leave
        case 5..<8: return .sendRequest(.mute(trackSid: "TR_x", muted: Bool.random(using: &rng)))
        case 8..<14: return .signalConnected
        case 14..<17:
            let failures: [SignalConnectFailure] = [.unauthorized(status: 401), .roomNotFound, .rejected(status: 503), .rejected(status: 400), .unreachable(.refused), .unreachable(.timeout)]
            return .signalConnectFailed(failures[Int.random(in: 0..<failures.count, using: &rng)])
        case 17..<45: return .signalMessage(randomMessage(&rng))
        case 45..<50:
            let count = Int.random(in: 0..<40, using: &rng)
            return .signalData((0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) })
        case 50..<54: return .signalClosed
        case 54..<57: return .joinTokenReceived("fresh-\(Int.random(in: 0..<3, using: &rng))")
        case 57..<59: return .joinTokenFailed(permanent: Int.random(in: 0..<5, using: &rng) == 0)
        case 59..<68:
            let states: [TransportState] = [.new, .connecting, .connected, .connected, .disconnected, .failed, .closed]
            return .transportStateChanged(Bool.random(using: &rng) ? .subscriber : .publisher,
                                          states[Int.random(in: 0..<states.count, using: &rng)])
        case 68..<72: return .answerCreated(sdp: "a", offerID: UInt32.random(in: 0...4, using: &rng))
        case 72..<74: return .offerCreated(sdp: "o")
        case 74..<75: return .negotiationFailed(.subscriber)
        case 75..<78: return .localCandidate(ICECandidateInit(candidate: "candidate:1"), .subscriber)
        case 78..<80: return .dataChannelOpened(.init(label: "_reliable", id: 1, target: .subscriber))
        case 80..<88:
            let sid = "PA_\(identities[Int.random(in: 0..<identities.count, using: &rng)])"
            if Bool.random(using: &rng) {
                return .dataReceived(Fixture.dataPacket(from: sid, sequence: UInt32.random(in: 0...5, using: &rng),
                                                        topic: Bool.random(using: &rng) ? "chat" : "system",
                                                        payload: #"{"type":"chat","message":"m","event":"kick"}"#),
                                     reliable: Bool.random(using: &rng))
            }
            let count = Int.random(in: 0..<30, using: &rng)
            return .dataReceived((0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }, reliable: true)
        default:
            return .timerFired(RoomTimer.allCases[Int.random(in: 0..<RoomTimer.allCases.count, using: &rng)])
        }
    }

    /// The input a well-behaved peer would most likely produce next.
    static func likelyInput(_ rng: inout SeededGenerator, _ state: RoomState) -> RoomInput {
        switch state.connectionState {
        case .idle, .disconnected:
            return .connect(token: "tok")
        default: break
        }
        switch state.signal {
        case .opening: return .signalConnected
        case .open:
            if case .resuming = state.phase, Int.random(in: 0..<4, using: &rng) > 0 {
                return .signalMessage(LiveKit.SignalResponse(.reconnect(.init())))
            }
            return .signalMessage(LiveKit.SignalResponse(.join(Fixture.join(
                me: Fixture.participant("bot", sid: "PA_bot\(Int.random(in: 0..<3, using: &rng))"),
                others: (0..<Int.random(in: 0...3, using: &rng)).map { _ in randomParticipant(&rng) }))))
        case .closed, .ready: break
        }
        switch state.currentStep {
        case .fetchingToken: return .joinTokenReceived("fresh")
        case .awaitingTransport: return .transportStateChanged(.subscriber, .connected)
        case .waiting: return .timerFired(.retry)
        default: break
        }
        switch Int.random(in: 0..<12, using: &rng) {
        case 0: return .signalClosed
        case 1: return .transportStateChanged(.subscriber, .failed)
        case 2: return .answerCreated(sdp: "a", offerID: UInt32.random(in: 0...4, using: &rng))
        case 3: return .dataReceived(Fixture.dataPacket(from: "PA_alice0", sequence: UInt32.random(in: 0...9, using: &rng),
                                                        topic: "chat", payload: #"{"type":"chat","message":"m"}"#), reliable: true)
        default: return .signalMessage(randomMessage(&rng))
        }
    }

    static func randomParticipant(_ rng: inout SeededGenerator) -> LiveKit.ParticipantInfo {
        let identity = identities[Int.random(in: 0..<identities.count, using: &rng)]
        let states: [LiveKit.ParticipantInfo.State] = [.joining, .joined, .active, .active, .disconnected, .unrecognized(9)]
        let trackCount = Int.random(in: 0...2, using: &rng)
        return Fixture.participant(
            identity, sid: "PA_\(identity)\(Int.random(in: 0..<3, using: &rng))",
            version: UInt32.random(in: 0...4, using: &rng), state: states[Int.random(in: 0..<states.count, using: &rng)],
            tracks: (0..<trackCount).map { i in
                Fixture.track("TR_\(identity)_\(i)_\(Int.random(in: 0..<2, using: &rng))", muted: Bool.random(using: &rng))
            },
            joinedAtMs: Int64.random(in: 0...3, using: &rng) * 1000)
    }

    static func randomMessage(_ rng: inout SeededGenerator) -> LiveKit.SignalResponse {
        let message: LiveKit.SignalResponse.Message
        switch Int.random(in: 0..<16, using: &rng) {
        case 0:
            message = .join(Fixture.join(me: randomParticipant(&rng),
                                         others: (0..<Int.random(in: 0...3, using: &rng)).map { _ in randomParticipant(&rng) },
                                         protocol: [10, 13, 17][Int.random(in: 0..<3, using: &rng)],
                                         resume: Bool.random(using: &rng) ? .enabled : .disabled))
        case 1: message = .update(.with { $0.participants = (0..<Int.random(in: 1...3, using: &rng)).map { _ in randomParticipant(&rng) } })
        case 2:
            let reasons: [LiveKit.DisconnectReason] = [.participantRemoved, .stateMismatch, .roomDeleted, .connectionTimeout, .unknownReason]
            let actions: [LiveKit.LeaveRequest.Action] = [.disconnect, .resume, .reconnect, .unrecognized(5)]
            var leave = LiveKit.LeaveRequest(reason: reasons[Int.random(in: 0..<reasons.count, using: &rng)],
                                             action: actions[Int.random(in: 0..<actions.count, using: &rng)])
            leave.canReconnect = Bool.random(using: &rng)
            message = .leave(leave)
        case 3: message = .reconnect(.with { $0.iceServers = [.with { $0.urls = ["stun:x"] }] })
        case 4: message = .offer(LiveKit.SessionDescription(type: "offer", sdp: "v=0", id: UInt32.random(in: 0...4, using: &rng)))
        case 5: message = .speakersChanged(.with {
            $0.speakers = [.with {
                $0.sid = "PA_\(identities[Int.random(in: 0..<identities.count, using: &rng)])\(Int.random(in: 0..<3, using: &rng))"
                $0.level = Float.random(in: -1...2, using: &rng)
                $0.active = Bool.random(using: &rng)
            }]
        })
        case 6: message = .refreshToken("refreshed")
        case 7: message = .pongResp(.with { $0.lastPingTimestamp = Int64.random(in: -5...100_000, using: &rng) })
        case 8: message = .roomUpdate(.with { $0.room = .with { $0.sid = "RM_\(Int.random(in: 0..<2, using: &rng))" } })
        case 9: message = .trickle(LiveKit.TrickleRequest(candidateInit: Bool.random(using: &rng) ? #"{"candidate":"c"}"# : "{", target: .subscriber))
        case 10: message = .connectionQuality(.with { $0.updates = [.with { $0.participantSid = "PA_alice0"; $0.quality = .lost }] })
        case 11: message = .roomMoved(.with {
            $0.participant = randomParticipant(&rng)
            $0.otherParticipants = [randomParticipant(&rng)]
            $0.token = "moved"
        })
        case 12: message = .streamStateUpdate(.with { $0.streamStates = [.with { $0.trackSid = "TR_alice_0_0"; $0.state = .paused }] })
        case 13: message = .trackPublished(.with { $0.cid = "c"; $0.track = Fixture.track("TR_mine") })
        case 14: message = .unknown(27)
        default: message = .mute(LiveKit.MuteTrackRequest(sid: "TR_mine", muted: true))
        }
        return LiveKit.SignalResponse(message)
    }
}

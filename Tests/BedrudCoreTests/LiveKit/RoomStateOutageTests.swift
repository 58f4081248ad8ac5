import BedrudProtocol
import Testing
@testable import BedrudCore

/// Long outages: resume attempts, then full rejoins with a fresh token and
/// a capped backoff until `maxOutageMs`, and a final reason that names what the last
/// attempt ran into. Driven on the fake clock: every pending timer is fired at its
/// deadline (the owner's jitter is not part of the deadline).
@Suite struct RoomStateOutageTests {
    /// How the world answers one attempt.
    enum Answer {
        /// The upgrade fails at once (refused, DNS, TLS, HTTP status).
        case fail(SignalConnectFailure)
        /// Nothing answers: the handshake timer ends the attempt.
        case silence
        /// Signalling works, but the media connection fails.
        case iceFails
        /// Everything works.
        case works
    }

    struct Run {
        var t: RoomTranscript
        /// (time, "resume" | "join") of every signal opened during the outage.
        var opens: [(Int64, String)] = []
        var tokenFetches = 0
        var events: [RoomEvent] = []
        var jitters: [Int64] = []
        /// Bedrud's API is down as long as the signal fails (same server).
        var bedrudDown: (Int64) -> Bool = { _ in false }

        /// Feeds `actions`' consequences until the state waits for a timer.
        mutating func perform(_ actions: [RoomAction], answer: (Int64) -> Answer) {
            var queue = actions
            while !queue.isEmpty {
                let action = queue.removeFirst()
                switch action {
                case .emit(let e): events.append(e)
                case .startTimer(.retry, _, let jitter): jitters.append(jitter)
                case .fetchJoinToken:
                    tokenFetches += 1
                    queue += t.feed(bedrudDown(t.now) ? .joinTokenFailed(permanent: false) : .joinTokenReceived("fresh-\(tokenFetches)"))
                case .openSignal(let request):
                    let resume: Bool
                    if case .resume = request.mode { resume = true } else { resume = false }
                    opens.append((t.now, resume ? "resume" : "join"))
                    switch answer(t.now) {
                    case .fail(let f): queue += t.feed(.signalConnectFailed(f))
                    case .silence: break
                    case .iceFails, .works:
                        let works = { if case .works = answer(t.now) { true } else { false } }()
                        queue += t.feed(.signalConnected)
                        if resume {
                            queue += t.server(.reconnect(.init()))
                        } else {
                            queue += t.server(.join(Fixture.join(me: Fixture.participant("bot", sid: "PA_bot\(opens.count)"))))
                        }
                        queue += t.feed(.transportStateChanged(.subscriber, works ? .connected : .failed))
                    }
                default: break
                }
            }
        }

        /// Fires timers in deadline order until connected or disconnected (or `limit`).
        mutating func ride(limit: Int64 = 3_600_000, answer: (Int64) -> Answer) {
            while t.now < limit {
                switch t.state.connectionState {
                case .connected, .disconnected: return
                default: break
                }
                guard let next = t.state.timers.values.min() else { return }
                t.advance(to: max(t.now, next.milliseconds))
                perform(t.fireDueTimers(), answer: answer)
            }
        }
    }

    /// Joined, then the signal dies at 10 s (the drop).
    /// Or the media connection fails at 8.5 s, and after the 1.5 s grace the resume starts at 10 s.
    static func dropped(byTransport: Bool = false, _ configure: (inout RoomState.Configuration) -> Void = { _ in }) -> Run {
        var run = Run(t: RoomTranscript(configure))
        run.t.joinRoom()
        if byTransport {
            run.t.advance(to: 8_500)
            run.t.feed(.transportStateChanged(.subscriber, .failed))
            run.t.advance(to: 10_000)
            run.perform(run.t.feed(.timerFired(.transportGrace)), answer: { _ in .works })
            #expect(run.events == [.reconnecting(.resume)])
        } else {
            run.t.advance(to: 10_000)
            run.perform(run.t.feed(.signalClosed), answer: { _ in .works })
        }
        return run
    }

    @Test func aDropOf150sResumesThenRejoinsWithAFreshToken() {
        var run = Self.dropped()
        run.bedrudDown = { $0 < 160_000 }
        run.ride { now in now < 160_000 ? .fail(.unreachable(.refused)) : .works }

        // The JS SDK's ten resumes, then full rejoins every 14 s, then at most 15 s.
        let offsets = run.opens.map { $0.0 - 10_000 }
        #expect(offsets == [0, 300, 1_500, 4_200, 9_000, 16_000, 23_000, 30_000, 37_000, 44_000,
                            58_000, 73_000, 88_000, 103_000, 118_000, 133_000, 148_000, 163_000])
        #expect(run.opens.map(\.1) == Array(repeating: "resume", count: 10) + Array(repeating: "join", count: 8))
        #expect(run.jitters.count == 18 && run.jitters.prefix(2) == [0, 0] && run.jitters.dropFirst(2).allSatisfy { $0 == 1_000 })
        #expect(run.tokenFetches == 8, "every rejoin asks Bedrud for a fresh token")
        #expect(run.events.filter(Self.isConnectionEvent) == [.reconnecting(.resume), .reconnecting(.full), .reconnected(.rejoined)])
        #expect(run.t.state.connectionState == .connected)
        #expect(run.t.state.timers[.outage] == nil && run.t.state.timers[.retry] == nil)
        // One outage (summary.json's `reconnects`), however it ended, and its 18 attempts.
        #expect(run.t.state.stats.outages == 1)
        #expect(run.t.state.stats.reconnectAttempts == 18)
    }

    @Test func anOutageLongerThanMaxOutageEndsWithTheLastCause() {
        var run = Self.dropped { $0.maxOutageMs = 120_000 }
        run.bedrudDown = { _ in true }
        run.ride { _ in .fail(.unreachable(.refused)) }
        #expect(run.events.last == .disconnected(.network(.refused)))
        #expect(run.t.now == 130_000, "gives up exactly max_outage after the loss")
        #expect(run.t.state.timers.isEmpty)
        #expect(run.opens.last.map { $0.0 } == 128_000, "attempts go on until the deadline")
    }

    @Test func backoffIsCappedAndTheCapNeverShortensTheTable() {
        var state = RoomState()
        #expect((1...14).map { state.retryDelayMs(attempt: $0) }
                == [0, 300, 1_200, 2_700, 4_800, 7_000, 7_000, 7_000, 7_000, 7_000, 14_000, 15_000, 15_000, 15_000])
        var c = RoomState.Configuration()
        c.rejoinBackoffMaxMs = 60_000
        state = RoomState(configuration: c)
        #expect((11...14).map { state.retryDelayMs(attempt: $0) } == [14_000, 28_000, 56_000, 60_000])
        c.rejoinBackoffMaxMs = 1_000
        state = RoomState(configuration: c)
        #expect(state.retryDelayMs(attempt: 20) == 7_000)
    }

    /// The final reason says what the last attempt ran into, whatever lost the connection.
    @Test(arguments: [
        (Answer.fail(.unreachable(.refused)), NetworkCause.refused),
        (.fail(.unreachable(.dns)), .dns),
        (.fail(.unreachable(.tls)), .tls),
        (.fail(.rejected(status: 502)), .rejected(status: 502)),
        (.silence, .timeout),
        (.iceFails, .ice),
    ])
    func finalCauseIsTheLastAttempts(answer: Answer, cause: NetworkCause) {
        let ice = { if case .iceFails = answer { true } else { false } }()
        var run = Self.dropped(byTransport: ice) { $0.maxOutageMs = 90_000 }
        run.ride { _ in answer }
        #expect(run.events.last == .disconnected(.network(cause)))
        #expect(run.t.now == 100_000)
        #expect(run.t.state.timers.isEmpty)
        if case .silence = answer {
            #expect(run.opens.count == 5, "each attempt waits out the 15 s handshake timeout")
        } else {
            #expect(run.opens.map(\.1).contains("join"), "rejoins follow the resumes")
        }
    }

    @Test func aCauseLearnedEarlierIsReplacedByTheLastAttempts() {
        // Refused for a minute (server down), then the host stops answering at all.
        var run = Self.dropped { $0.maxOutageMs = 120_000 }
        run.ride { now in now < 70_000 ? .fail(.unreachable(.refused)) : .silence }
        #expect(run.events.last == .disconnected(.network(.timeout)))
    }

    @Test func noOutageBudgetGivesUpAfterTheTable() {
        var run = Self.dropped { $0.maxOutageMs = 0 }
        run.ride { _ in .fail(.unreachable(.dns)) }
        #expect(run.opens.count == 10 && run.opens.allSatisfy { $0.1 == "resume" })
        #expect(run.events.last == .disconnected(.network(.dns)))
    }

    @Test func aResumeAnsweredWithAClientErrorRejoinsAtOnce() {
        // A restarted server does not know our session: it answers the resume with 4xx.
        var r = Self.dropped()
        r.ride(limit: 10_400) { _ in .fail(.rejected(status: 400)) }
        #expect(r.opens.map(\.1).prefix(2) == ["resume", "join"])
    }

    @Test func aSuccessfulReconnectCancelsTheOutageDeadline() {
        var run = Self.dropped()
        #expect(run.t.state.timers[.outage] == .ms(610_000))
        run.ride { now in now < 5_000 + 10_000 ? .fail(.unreachable(.refused)) : .works }
        #expect(run.events.filter(Self.isConnectionEvent) == [.reconnecting(.resume), .reconnected(.resumed)])
        #expect(run.t.state.timers[.outage] == nil)
        // A second loss gets a budget of its own.
        run.t.advance(to: 700_000)
        run.perform(run.t.feed(.signalClosed), answer: { _ in .works })
        #expect(run.t.state.timers[.outage] == .ms(1_300_000))
    }

    static func isConnectionEvent(_ e: RoomEvent) -> Bool {
        switch e {
        case .reconnecting, .reconnected, .disconnected, .connected: true
        default: false
        }
    }
}

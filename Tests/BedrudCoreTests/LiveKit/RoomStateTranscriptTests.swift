import BedrudProtocol
import Testing
@testable import BedrudCore

/// Drives a RoomState like the RoomManager would, keeping a fake clock, so tests read
/// like protocol transcripts: input → actions and events.
struct RoomTranscript {
    var state: RoomState
    var now: Int64 = 1_000

    init(_ configure: (inout RoomState.Configuration) -> Void = { _ in }) {
        var configuration = RoomState.Configuration()
        configure(&configuration)
        state = RoomState(configuration: configuration)
    }

    @discardableResult
    mutating func feed(_ input: RoomInput) -> [RoomAction] {
        state.handle(input, at: .ms(now))
    }

    @discardableResult
    mutating func server(_ message: LiveKit.SignalResponse.Message) -> [RoomAction] {
        // Through the byte path, as the WebSocket delivers it.
        feed(.signalData(LiveKit.SignalResponse(message).protobufBytes()))
    }

    mutating func advance(to ms: Int64) { now = ms }

    /// Fires every pending timer whose deadline has passed (in deadline order, ties in
    /// `RoomTimer.allCases` order so runs are deterministic), returning all actions.
    @discardableResult
    mutating func fireDueTimers() -> [RoomAction] {
        var all: [RoomAction] = []
        let rank = { (t: RoomTimer) in RoomTimer.allCases.firstIndex(of: t) ?? 0 }
        while let (timer, _) = state.timers.filter({ $0.value.milliseconds <= now })
            .min(by: { $0.value != $1.value ? $0.value < $1.value : rank($0.key) < rank($1.key) }) {
            all += feed(.timerFired(timer))
        }
        return all
    }

    /// connect → upgrade → join (protocol 17 unless said otherwise) → primary PC connected.
    @discardableResult
    mutating func joinRoom(_ join: LiveKit.JoinResponse = Fixture.join(), token: String = "tok-1") -> [RoomAction] {
        var all = feed(.connect(token: token))
        all += feed(.signalConnected)
        all += server(.join(join))
        all += feed(.transportStateChanged(.subscriber, .connected))
        return all
    }
}

extension Array where Element == RoomAction {
    var events: [RoomEvent] {
        compactMap { if case .emit(let e) = $0 { e } else { nil } }
    }

    var sent: [LiveKit.SignalRequest.Message] {
        compactMap { if case .send(let r) = $0 { r.message } else { nil } }
    }

    var opened: [SignalConnectRequest] {
        compactMap { if case .openSignal(let r) = $0 { r } else { nil } }
    }

    var startedTimers: [RoomTimer: RoomInstant] {
        var out: [RoomTimer: RoomInstant] = [:]
        for case .startTimer(let t, let deadline, _) in self { out[t] = deadline }
        return out
    }

    func contains(_ action: RoomAction) -> Bool { contains { $0 == action } }

    /// Actions with timer bookkeeping left out (for transcripts that care about effects).
    var effects: [RoomAction] {
        filter {
            switch $0 {
            case .startTimer, .cancelTimer: false
            default: true
            }
        }
    }
}

@Suite struct RoomStateTranscriptTests {
    @Test func tokensNeverReachActionDescriptions() {
        var t = RoomTranscript()
        let actions = t.feed(.connect(token: "eyJ.secret.token"))
        #expect(actions.opened.first?.token == "eyJ.secret.token")
        #expect(!String(describing: actions).contains("secret"))
        #expect(!String(reflecting: actions).contains("secret"))
        #expect(!String(describing: RoomInput.connect(token: "eyJ.secret.token")).contains("secret"))
        #expect(!String(describing: RoomInput.joinTokenReceived("eyJ.secret.token")).contains("secret"))
        t.feed(.signalConnected)
        t.server(.refreshToken("eyJ.other.secret"))
        #expect(!String(describing: t.state).contains("secret") && !String(reflecting: t.state).contains("secret"))
    }

    @Test func oddConfigurationsDoNotTrap() {
        var t = RoomTranscript { $0.reconnectDelaysMs = []; $0.maxQueuedRequests = 0; $0.joinAttempts = 0 }
        t.joinRoom()
        #expect(t.feed(.sendRequest(.mute(trackSid: "TR", muted: true))).sent.count == 1)
        #expect(t.feed(.signalClosed).events == [.disconnected(.network(.signalLost))])
        t = RoomTranscript { $0.reconnectDelaysMs = []; $0.maxQueuedRequests = 0 }
        t.feed(.connect(token: "tok"))
        #expect(t.feed(.sendRequest(.mute(trackSid: "TR", muted: true))).isEmpty)
        #expect(t.state.stats.droppedRequests == 1)
        // A clock that jumps backwards is tolerated.
        t.joinRoom()
        t.advance(to: -5_000_000_000_000)
        t.feed(.timerFired(.pingTimeout))
    }
}

/// Builders for server messages.
enum Fixture {
    static func track(
        _ sid: String, kind: LiveKit.TrackType = .audio, source: LiveKit.TrackSource = .microphone,
        muted: Bool = false, mime: String = "audio/opus", stereo: Bool = false
    ) -> LiveKit.TrackInfo {
        LiveKit.TrackInfo.with {
            $0.sid = sid
            $0.type = kind
            $0.source = source
            $0.muted = muted
            $0.mimeType = mime
            if stereo { $0.audioFeatures = [.stereo] }
        }
    }

    static func participant(
        _ identity: String, sid: String, name: String? = nil, version: UInt32 = 1,
        state: LiveKit.ParticipantInfo.State = .active, tracks: [LiveKit.TrackInfo] = [],
        metadata: String = #"{"accesses":["user"]}"#, joinedAtMs: Int64 = 1_767_225_600_000,
        disconnectReason: LiveKit.DisconnectReason = .unknownReason
    ) -> LiveKit.ParticipantInfo {
        LiveKit.ParticipantInfo.with {
            $0.identity = identity
            $0.sid = sid
            $0.name = name ?? identity.capitalized
            $0.version = version
            $0.state = state
            $0.tracks = tracks
            $0.metadata = metadata
            $0.joinedAtMs = joinedAtMs
            $0.disconnectReason = disconnectReason
        }
    }

    static let bot = participant("bot", sid: "PA_bot", name: "Recorder", state: .joined)
    static let alice = participant("alice", sid: "PA_alice", tracks: [track("TR_alice_mic", stereo: true)])
    static let bob = participant("bob", sid: "PA_bob", tracks: [track("TR_bob_mic"), track("TR_bob_cam", kind: .video, source: .camera, muted: true, mime: "video/VP8")])

    static func join(
        me: LiveKit.ParticipantInfo = bot, others: [LiveKit.ParticipantInfo] = [alice, bob],
        protocol: Int32 = 17, roomSid: String = "", resume: LiveKit.ClientConfigSetting = .enabled
    ) -> LiveKit.JoinResponse {
        LiveKit.JoinResponse.with {
            $0.room = .with { $0.name = "standup"; $0.sid = roomSid; $0.numParticipants = 3 }
            $0.participant = me
            $0.otherParticipants = others
            $0.iceServers = [.with { $0.urls = ["stun:127.0.0.1:3478"] }]
            $0.subscriberPrimary = true
            $0.pingInterval = 5
            $0.pingTimeout = 15
            $0.serverInfo = .with { $0.protocol = `protocol`; $0.version = "1.10.1" }
            $0.clientConfiguration = .with { $0.resumeConnection = resume }
        }
    }

    static func update(_ participants: LiveKit.ParticipantInfo...) -> LiveKit.SignalResponse.Message {
        .update(.with { $0.participants = participants })
    }

    static func leave(
        _ reason: LiveKit.DisconnectReason, action: LiveKit.LeaveRequest.Action = .disconnect, canReconnect: Bool = false
    ) -> LiveKit.SignalResponse.Message {
        var leave = LiveKit.LeaveRequest(reason: reason, action: action)
        leave.canReconnect = canReconnect
        return .leave(leave)
    }

    static func speakers(_ list: (String, Float, Bool)...) -> LiveKit.SignalResponse.Message {
        .speakersChanged(.with {
            $0.speakers = list.map { s in LiveKit.SpeakerInfo.with { $0.sid = s.0; $0.level = s.1; $0.active = s.2 } }
        })
    }

    static func offer(id: UInt32, sdp: String = "v=0\r\n") -> LiveKit.SignalResponse.Message {
        .offer(LiveKit.SessionDescription(type: "offer", sdp: sdp, id: id))
    }

    static func dataPacket(
        from sid: String, identity: String = "", sequence: UInt32 = 0, topic: String? = nil, payload: String
    ) -> [UInt8] {
        LiveKit.DataPacket.with {
            $0.participantSid = sid
            $0.participantIdentity = identity
            $0.sequence = sequence
            $0.value = .user(.with { $0.topic = topic; $0.payload = Array(payload.utf8) })
        }.protobufBytes()
    }
}

@Suite struct RoomStateRequestRefusalTests {
    @Test func aRefusedAddTrackIsAnEventNotSilence() throws {
        var t = RoomTranscript()
        t.joinRoom()
        var r = LiveKit.RequestResponse()
        r.requestID = 7
        r.reason = .notAllowed
        r.message = "does not have permission to publish"
        r.request = .addTrack(.microphone(cid: "TR_x", name: "tone", stereo: false, dtx: false))
        var ok = LiveKit.RequestResponse()
        ok.requestID = 8
        let refused = t.server(.requestResponse(r))
        #expect(refused == [.emit(.requestRefused(RefusedRequest(r)))])
        #expect(t.server(.requestResponse(ok)).isEmpty)
    }
}

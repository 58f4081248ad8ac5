@testable import BedrudBot
import BedrudCore
import BedrudMedia
import BedrudProtocol
@testable import BedrudRTC
import Testing

/// Transcripts of room events in, pipeline controls out.
@Suite struct RoomMediaBridgeTests {
    static let alice = MeetingParticipant(identity: "u-alice", sid: "PA_a", name: "Alice")
    static let recorder = MeetingParticipant(identity: "u-rec", sid: "PA_r", name: "Other Recorder")
    static let mic = MeetingTrack(sid: "TR_1", kind: .audio, source: .microphone, muted: true, mimeType: "audio/opus")
    static let camera = MeetingTrack(sid: "TR_2", kind: .video, source: .camera, muted: true, mimeType: "video/vp8")

    /// The controls as short text (MediaControl carries rings and is not Equatable).
    static func text(_ controls: [MediaControl]) -> [String] {
        controls.map { c in
            switch c {
            case .participantLeft(let id): "left \(id)"
            case .participantReconnecting(let id): "reconnecting \(id)"
            case .participantPresent(let id): "present \(id)"
            case .setMuted(let id, let muted): "\(muted ? "mute" : "unmute") \(id)"
            case .addTrack(let spec, _): "add \(spec.trackSid)"
            case .removeTrack(let sid): "remove \(sid)"
            case .rotate: "rotate"
            }
        }
    }

    /// Feeds `events` in order and returns the controls of each.
    static func run(_ bridge: inout RoomMediaBridge, _ events: [RoomEvent]) -> [[String]] {
        events.map { text(bridge.handle($0)) }
    }

    @Test func aRecordedBotMatchedByBotNamesGetsItsOutageGap() {
        var bridge = RoomMediaBridge(bots: BotRecognition(namePatterns: ["*Recorder*"]))
        let out = Self.run(&bridge, [
            .participantJoined(Self.alice), .participantJoined(Self.recorder),
            .reconnecting(.resume), .reconnected(.resumed),
        ])
        #expect(out == [[], [], ["reconnecting u-alice", "reconnecting u-rec"], ["present u-alice", "present u-rec"]])
        // The bot is present for the media but no company for the alone timeout.
        #expect(bridge.people == ["u-alice"])
        #expect(bridge.everyonePresent == ["u-alice", "u-rec"])
    }

    @Test func aParticipantWhoLeftDuringTheOutageIsNotToldPresent() {
        var bridge = RoomMediaBridge()
        let out = Self.run(&bridge, [
            .participantJoined(Self.alice), .participantJoined(Self.recorder), .reconnecting(.full),
            .participantLeft(Self.alice, reason: .absentAfterRejoin), .reconnected(.rejoined),
        ])
        #expect(out == [[], [], ["reconnecting u-alice", "reconnecting u-rec"], ["left u-alice"], ["present u-rec"]])
    }

    @Test func audioMutesReachThePipelineAndVideoMutesDoNot() {
        var bridge = RoomMediaBridge()
        let out = Self.run(&bridge, [
            .participantJoined(Self.alice),
            .trackMuted(Self.mic, participant: "u-alice"), .trackMuted(Self.camera, participant: "u-alice"),
            .trackUnmuted(Self.mic, participant: "u-alice"),
        ])
        #expect(out == [[], ["mute u-alice"], [], ["unmute u-alice"]])
    }

    @Test func aBotThatMarksItselfAfterJoiningStaysPresentButIsNoCompany() {
        var bridge = RoomMediaBridge()
        var marked = Self.recorder
        marked.attributes[BotRecognition.attributeKey] = "1.0"
        _ = Self.run(&bridge, [.participantJoined(Self.recorder)])
        #expect(bridge.people == ["u-rec"])
        _ = Self.run(&bridge, [.participantUpdated(marked, changes: .attributes)])
        #expect(bridge.people == [])
        #expect(Self.run(&bridge, [.reconnecting(.resume)]) == [["reconnecting u-rec"]])
    }

    @Test func anUpdateNeverMakesABotAPersonAgainButANewSessionIsJudgedAfresh() {
        var bridge = RoomMediaBridge()
        var marked = Self.recorder
        marked.attributes[BotRecognition.attributeKey] = "1.0"
        _ = Self.run(&bridge, [.participantJoined(marked), .participantUpdated(Self.recorder, changes: .attributes)])
        #expect(bridge.people == [])
        _ = Self.run(&bridge, [.participantRejoined(Self.recorder, previousSid: "PA_r")])
        #expect(bridge.people == ["u-rec"])
    }

    @Test func anUpdateForSomeoneNotPresentDoesNotAddThem() {
        var bridge = RoomMediaBridge()
        #expect(Self.run(&bridge, [.participantUpdated(Self.alice, changes: .name), .reconnecting(.resume)]) == [[], []])
        #expect(bridge.name(of: "u-alice") == "Alice")
    }

    @Test func aProfileChangeRenamesOnlyWhenSentByThatParticipant() {
        var bridge = RoomMediaBridge()
        _ = Self.run(&bridge, [
            .participantJoined(Self.alice),
            .presenceReceived(.profileChanged(identity: "u-alice", name: "Mallory", avatarURL: ""), sender: "u-other"),
        ])
        #expect(bridge.name(of: "u-alice") == "Alice")
        _ = Self.run(&bridge, [.presenceReceived(.profileChanged(identity: "u-alice", name: "Alice B", avatarURL: ""), sender: "u-alice")])
        #expect(bridge.name(of: "u-alice") == "Alice B")
        #expect(bridge.name(of: "u-nobody") == "")
    }

    // MARK: - Whose a track is

    static func track(ssrc: UInt32, participant: String?, track: String?) -> RemoteTrack {
        RemoteTrack(ssrc: ssrc, mid: "0", kind: "audio", streamID: nil, trackID: nil, participantSID: participant, trackSID: track,
                    payloadType: 111, clockRate: 48_000, stereo: false, nack: true)
    }

    @Test func aTrackIsNamedByItsOwnerAndFilteredByIdentityOrName() {
        let alice = TrackOwner(identity: "u-alice", name: "Alice")
        let (known, recorded) = RoomMediaBridge.route(Self.track(ssrc: 1, participant: "PA_a", track: "TR_1"), owner: alice, filter: ParticipantFilter())
        #expect(known.trackSid == "TR_1" && known.participantIdentity == "u-alice" && known.participantName == "Alice" && recorded)
        // Unknown to the room: the PA_ sid, else the SSRC, stands in for the identity.
        let unknown = RoomMediaBridge.route(Self.track(ssrc: 3, participant: "PA_x", track: nil), owner: nil, filter: ParticipantFilter())
        #expect(unknown.spec.trackSid == "ssrc-3" && unknown.spec.participantIdentity == "PA_x" && unknown.spec.participantName == "")
        #expect(RoomMediaBridge.route(Self.track(ssrc: 4, participant: nil, track: nil), owner: nil, filter: ParticipantFilter()).spec.participantIdentity == "ssrc-4")
        // --exclude by name, --include by identity (an unknown owner is matched by its stand-in).
        #expect(!RoomMediaBridge.route(Self.track(ssrc: 1, participant: nil, track: "TR_1"), owner: alice, filter: ParticipantFilter(exclude: ["Ali*"])).recorded)
        #expect(!RoomMediaBridge.route(Self.track(ssrc: 2, participant: "PA_r", track: "TR_9"), owner: TrackOwner(identity: "u-rec", name: "Other Recorder"),
                                       filter: ParticipantFilter(include: ["u-alice"])).recorded)
        #expect(RoomMediaBridge.route(Self.track(ssrc: 5, participant: "PA_x", track: "TR_5"), owner: nil, filter: ParticipantFilter(include: ["PA_x"])).recorded)
    }
}

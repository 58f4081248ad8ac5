import Foundation
import Testing
@testable import BedrudProtocol

/// Encode direction: what the client sends, checked against the official package
/// (values and exact bytes), plus the fact sheet's §2.10 wire vectors.
@Suite struct LiveKitEncodingTests {
    // MARK: - §2.10 wire sanity vectors

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    }

    @Test func pingVector() {
        #expect(hex(LiveKit.SignalRequest.ping(timestampMs: 1_700_000_000_000).protobufBytes()) == "70 80 d0 95 ff bc 31")
    }

    @Test func pingReqVector() {
        #expect(hex(LiveKit.SignalRequest(.pingReq(LiveKit.Ping(timestamp: 1))).protobufBytes()) == "82 01 02 08 01")
    }

    @Test func leaveVector() {
        #expect(hex(LiveKit.SignalRequest.leave().protobufBytes()) == "42 02 10 01")
    }

    @Test func answerVector() {
        #expect(hex(LiveKit.SignalRequest.answer(sdp: "v=0\r\n", offerID: 5).protobufBytes())
            == "12 11 0a 06 61 6e 73 77 65 72 12 05 76 3d 30 0d 0a 18 05")
    }

    @Test func trickleVector() {
        let request = LiveKit.SignalRequest(.trickle(LiveKit.TrickleRequest(candidateInit: "{}", target: .subscriber)))
        #expect(hex(request.protobufBytes()) == "1a 06 0a 02 7b 7d 10 01")
    }

    @Test func pongRespVector() throws {
        let bytes: [UInt8] = [0xa2, 0x01, 0x04, 0x08, 0x01, 0x10, 0x02]
        let response = try LiveKit.SignalResponse(protobufBytes: bytes)
        #expect(response.message == .pongResp(LiveKit.Pong.with { $0.lastPingTimestamp = 1; $0.timestamp = 2 }))
        #expect(response.protobufBytes() == bytes)
    }

    @Test func wrappedJoinRequestVector() {
        let join = LiveKit.JoinRequest.with {
            $0.clientInfo = .with { $0.sdk = .swift; $0.version = "0.1.0"; $0.protocol = 16 }
            $0.connectionSettings = .with { $0.autoSubscribe = true }
        }
        #expect(LiveKit.WrappedJoinRequest(join).queryValue == "EhEKCwgCEgUwLjEuMBgQEgIIAQ==")
    }

    // MARK: - Client messages, checked by the official package

    /// The same values as `client_messages()` in scripts/livekit_fixtures.py.
    static func clientMessages() -> [(name: String, bytes: [UInt8])] {
        let syncAnswer = LiveKit.SessionDescription(type: "answer", sdp: "v=0\r\na=mid:0\r\n", id: 7)
        var syncOffer = LiveKit.SessionDescription(type: "offer", sdp: "v=0\r\na=mid:0\r\na=mid:1\r\n", id: 7)
        syncOffer.midToTrackID = ["1": "TR_a", "0": ""]
        let join = LiveKit.JoinRequest.with {
            $0.clientInfo = .with {
                $0.sdk = .swift; $0.version = "0.1.0"; $0.protocol = 16; $0.os = "Linux"
                $0.osVersion = "6.1"; $0.deviceModel = "server"; $0.clientProtocol = 0
            }
            $0.connectionSettings = .with { $0.autoSubscribe = true; $0.adaptiveStream = false; $0.subscriberAllowPause = false }
            $0.participantAttributes = ["role": "recorder", "b": "2"]
            $0.reconnect = true
            $0.reconnectReason = .signalDisconnected
            $0.participantSid = "PA_bot"
        }
        let messages: [(String, LiveKit.SignalRequest)] = [
            ("answer", .answer(sdp: "v=0\r\n", offerID: 5)),
            ("offer", .offer(sdp: "v=0\r\na=mid:0\r\n", id: 1)),
            ("trickle", .trickle(ICECandidateInit(
                candidate: "candidate:842163049 1 udp 1677729535 198.51.100.4 46154 typ srflx raddr 0.0.0.0 rport 0 generation 0",
                sdpMid: "0", sdpMLineIndex: 0, usernameFragment: "Xy9z"), target: .subscriber)),
            ("trickle_end", .trickle(ICECandidateInit(candidate: ""), target: .publisher)),
            ("leave", .leave()),
            ("ping", .ping(timestampMs: 1_700_000_000_000)),
            ("ping_zero", .ping(timestampMs: 0)),
            ("ping_req", .pingReq(timestampMs: 1_700_000_000_000, rttMs: 42)),
            ("sync_state", .syncState(.with {
                $0.answer = syncAnswer
                $0.offer = syncOffer
                $0.subscription = LiveKit.UpdateSubscription(trackSids: [], subscribe: false)
                $0.dataChannels = [.init(label: "_reliable", id: 1, target: .subscriber), .init(label: "_lossy", id: 3, target: .subscriber)]
                $0.dataChannelReceiveStates = [.init(publisherSid: "PA_alice", lastSeq: 12)]
                $0.trackSidsDisabled = ["TR_cam"]
            })),
            ("subscription", LiveKit.SignalRequest(.subscription(.with {
                $0.trackSids = ["TR_a", "TR_b"]
                $0.subscribe = true
                $0.participantTracks = [.with { $0.participantSid = "PA_alice"; $0.trackSids = ["TR_a"] }]
            }))),
            ("track_setting", LiveKit.SignalRequest(.trackSetting(.with {
                $0.trackSids = ["TR_cam"]; $0.disabled = true; $0.quality = .high
                $0.width = 1280; $0.height = 720; $0.fps = 30; $0.priority = 1
            }))),
            ("add_track", LiveKit.SignalRequest(.addTrack(.with {
                $0.cid = "bot-mic"; $0.name = "bot"; $0.type = .audio; $0.source = .microphone
                $0.muted = false; $0.stereo = true; $0.disableRed = true; $0.stream = "camera"
                $0.audioFeatures = [.stereo, .noDtx]
                $0.simulcastCodecs = [.with { $0.codec = "opus"; $0.cid = "bot-mic" }]
            }))),
            ("mute", .mute(trackSid: "TR_bot_mic", muted: true)),
            ("update_metadata", LiveKit.SignalRequest(.updateMetadata(.with {
                $0.metadata = #"{"accesses":["user"],"deafened":true}"#
                $0.name = "Recorder ✓"
                $0.attributes = ["z": "last", "a": "first", "m": ""]
                $0.requestID = 9
            }))),
            ("simulate_speaker", .simulate(.speakerUpdate(3))),
            ("simulate_migration", .simulate(.migration(true))),
            ("simulate_bandwidth", .simulate(.subscriberBandwidth(0))),
            ("simulate_protocol", .simulate(.switchCandidateProtocol(.tcp))),
        ]
        return messages.map { ($0.0, $0.1.protobufBytes()) } + [("join_request", LiveKit.WrappedJoinRequest(join).protobufBytes())]
    }

    @Test func clientMessagesDecodeInTheOfficialPackage() throws {
        let dir = try LiveKitOracle.temporaryDirectory("encoded")
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, bytes) in Self.clientMessages() {
            try Data(bytes).write(to: dir.appendingPathComponent("\(name).bin"))
        }
        // Resume via /rtc/v1 puts the wrapped request in the query string.
        let join = try #require(Self.clientMessages().first { $0.name == "join_request" })
        let wrapped = try LiveKit.WrappedJoinRequest(protobufBytes: join.bytes)
        try Data(wrapped.queryValue.utf8).write(to: dir.appendingPathComponent("join_request.query.txt"))

        let result = LiveKitOracle.run(["check-encoded", dir.path])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func requestsThatBypassTheResumeQueue() {
        #expect(LiveKit.SignalRequest.leave().bypassesResumeQueue)
        #expect(LiveKit.SignalRequest.answer(sdp: "", offerID: 1).bypassesResumeQueue)
        #expect(!LiveKit.SignalRequest.mute(trackSid: "TR", muted: true).bypassesResumeQueue)
        #expect(!LiveKit.SignalRequest.subscription(trackSids: [], subscribe: true).bypassesResumeQueue)
    }
}

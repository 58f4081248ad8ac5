import Foundation
import Testing
@testable import BedrudProtocol

/// Decode direction: bytes written by the official `livekit-protocol` package decode,
/// field by field, to what that package sees in them; and what we re-encode decodes
/// in the official package to the same values.
@Suite struct LiveKitConformanceTests {
    @Test func everyFixtureDecodesToTheOfficialValues() throws {
        let fixtures = try LiveKitFixtures.load()
        #expect(fixtures.count >= 100)
        for fixture in fixtures {
            guard let decode = FixtureDecoder.byType[fixture.type] else {
                Issue.record("\(fixture.name): no Swift decoder registered for \(fixture.type)")
                continue
            }
            let decoded: FixtureDecoder.Decoded
            do {
                decoded = try decode(fixture.bytes)
            } catch {
                Issue.record("\(fixture.name): decoding failed: \(error)")
                continue
            }
            let diffs = mirrorDifferences(decoded.mirror, fixture.expected)
            #expect(diffs.isEmpty, "\(fixture.name) (\(fixture.type)):\n  \(diffs.prefix(25).joined(separator: "\n  "))")
            if fixture.reencodeIdentical, decoded.reencoded != fixture.bytes {
                let at = zip(decoded.reencoded, fixture.bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(decoded.reencoded.count, fixture.bytes.count)
                Issue.record("\(fixture.name): re-encoding differs from the official bytes at offset \(at) (\(decoded.reencoded.count) vs \(fixture.bytes.count) bytes)")
            }
        }
    }

    @Test func reencodedFixturesDecodeInTheOfficialPackage() throws {
        let dir = try LiveKitOracle.temporaryDirectory("roundtrip")
        defer { try? FileManager.default.removeItem(at: dir) }
        for fixture in try LiveKitFixtures.load() {
            guard let decode = FixtureDecoder.byType[fixture.type] else { continue }
            let reencoded = try decode(fixture.bytes).reencoded
            try Data(reencoded).write(to: dir.appendingPathComponent("\(fixture.name).bin"))
        }
        let result = LiveKitOracle.run(["check-roundtrip", dir.path])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func committedFixturesAreTheGeneratorsOutput() {
        let result = LiveKitOracle.run(["verify"])
        #expect(result.status == 0, "\(result.output)")
    }

    // MARK: - Semantics the generic comparison cannot express

    @Test func bedrudJoinReadsLikeTheServerMeantIt() throws {
        let response = try LiveKit.SignalResponse(protobufBytes: LiveKitFixtures.bytes("scenario.join_bedrud"))
        guard case .join(let join) = response.message else {
            Issue.record("expected join, got \(String(describing: response.message))")
            return
        }
        #expect(join.room?.sid == "")
        #expect(join.room?.name == "standup")
        #expect(join.participant?.sid == "PA_bot")
        #expect(join.pingInterval == 5 && join.pingTimeout == 15)
        #expect(join.serverInfo?.protocol == 17)
        #expect(join.subscriberPrimary)
        #expect(join.clientConfiguration?.resumeConnection == .enabled)
        let alice = try #require(join.otherParticipants.first)
        #expect(alice.identity == "alice-uuid" && alice.name == "Alice Ünal" && alice.state == .active)
        #expect(alice.attributes == ["team": "ops", "lang": "tr"])
        #expect(BedrudParticipantMetadata(json: alice.metadata).accesses == ["user", "moderator"])
        let mic = try #require(alice.tracks.first)
        #expect(mic.type == .audio && mic.source == .microphone && mic.mimeType == "audio/opus")
        #expect(mic.isStereo && mic.audioFeatures == [.stereo, .noDtx])
        #expect(alice.tracks.last?.muted == true && alice.tracks.last?.layers.count == 2)
        // Secrets never reach a description.
        #expect(!String(describing: join.iceServers).contains("c3VwZXJzZWNyZXQ="))
    }

    @Test func unknownOneofMembersSurfaceAsUnknown() throws {
        let future = try LiveKit.SignalResponse(protobufBytes: LiveKitFixtures.bytes("scenario.future_member"))
        #expect(future.message == .unknown(27))
        #expect(future.unknownFields.fieldNumbers == [27])
        // Re-encoding keeps the unknown member's bytes.
        #expect(future.protobufBytes() == (try LiveKitFixtures.bytes("scenario.future_member")))

        let envelope = try LiveKit.SignalResponse(protobufBytes: LiveKitFixtures.bytes("scenario.future_envelope_field"))
        #expect(envelope.message == .pong(5), "an unknown field must not hide the known member")

        for (name, number) in [("signal_request.publish_data_track_request", 19), ("signal_request.get_data_blob_request", 23)] {
            let request = try LiveKit.SignalRequest(protobufBytes: LiveKitFixtures.bytes(name))
            #expect(request.message == .unknown(number), "\(name)")
        }
        let metrics = try LiveKit.DataPacket(protobufBytes: LiveKitFixtures.bytes("data_packet.metrics"))
        #expect(metrics.value == .unknown(8))
    }

    // The oneof rule (the last member on the wire wins, only it is kept, a
    // repeated message member merges) holds for members we keep as raw records too.
    @Test func unmodelledOneofMembersFollowTheOneofRule() throws {
        let user: [UInt8] = [0x12, 0x03, 0x12, 0x01, 0x07]  // user { payload: 07 }
        let metricsA: [UInt8] = [0x42, 0x02, 0x08, 0x01], metricsB: [UInt8] = [0x42, 0x02, 0x10, 0x02]

        // metrics, then user: user wins and metrics is gone.
        let replaced = try LiveKit.DataPacket(protobufBytes: metricsA + user)
        guard case .user(let u) = replaced.value else { Issue.record("expected user, got \(String(describing: replaced.value))"); return }
        #expect(u.payload == [7] && replaced.unknownFields.isEmpty)
        #expect(replaced.protobufBytes() == user)

        // user, then metrics: metrics wins; its record is all that is written.
        let wins = try LiveKit.DataPacket(protobufBytes: user + metricsA)
        #expect(wins.value == .unknown(8) && wins.protobufBytes() == metricsA)

        // metrics twice: one member, the two payloads merged into one record.
        let merged = try LiveKit.DataPacket(protobufBytes: metricsA + metricsB)
        #expect(merged.value == .unknown(8) && merged.protobufBytes() == [0x42, 0x04, 0x08, 0x01, 0x10, 0x02])

        // Field 8 as a varint is not the metrics member: an unknown field next to user.
        let notMember = try LiveKit.DataPacket(protobufBytes: [0x40, 0x01] + user)
        #expect(notMember.value.map { if case .user = $0 { true } else { false } } == true)
        #expect(notMember.unknownFields.fieldNumbers == [8])
        #expect(notMember.protobufBytes() == user + [0x40, 0x01])

        // The envelopes: a known member after a data-track member replaces it, and the
        // other way round; a number outside the schema never replaces anything.
        let pong: [UInt8] = [0x90, 0x01, 0x05]  // pong = 5
        let member27: [UInt8] = [0xda, 0x01, 0x00]  // publish_data_track_response {}
        let future100: [UInt8] = [0xa2, 0x06, 0x00]  // field 100, bytes
        #expect(try LiveKit.SignalResponse(protobufBytes: member27 + pong).protobufBytes() == pong)
        #expect(try LiveKit.SignalResponse(protobufBytes: pong + member27).message == .unknown(27))
        let kept = try LiveKit.SignalResponse(protobufBytes: future100 + pong)
        #expect(kept.message == .pong(5) && kept.unknownFields.fieldNumbers == [100])
    }

    @Test func unknownEnumNumbersAreKept() throws {
        let response = try LiveKit.SignalResponse(protobufBytes: LiveKitFixtures.bytes("scenario.unknown_enums"))
        guard case .update(let update) = response.message, let p = update.participants.first,
              let track = p.tracks.first else {
            Issue.record("expected an update with one participant and one track")
            return
        }
        #expect(p.state == .unrecognized(17))
        #expect(p.kind == .unrecognized(42))
        #expect(p.disconnectReason == .unrecognized(99))
        #expect(track.type == .unrecognized(9) && track.source == .unrecognized(42))
        #expect(track.audioFeatures == [.stereo, .unrecognized(77)])
        #expect(response.protobufBytes() == (try LiveKitFixtures.bytes("scenario.unknown_enums")))
    }

    @Test func unknownFieldsAreKeptAtEveryDepth() throws {
        let response = try LiveKit.SignalResponse(protobufBytes: LiveKitFixtures.bytes("scenario.unknown_fields_nested"))
        guard case .join(let join) = response.message else {
            Issue.record("expected join")
            return
        }
        #expect(join.pingInterval == 5)
        #expect(join.unknownFields.fieldNumbers == [700, 701, 702, 703, 704])
        #expect(join.participant?.unknownFields.fieldNumbers == [800, 801, 802, 803, 804])
        #expect(join.participant?.tracks.first?.unknownFields.fieldNumbers == [900, 901, 902, 903, 904])
        #expect(join.participant?.tracks.first?.mimeType == "audio/opus")
    }

    @Test func unpackedRepeatedEnumsDecode() throws {
        let track = try LiveKit.TrackInfo(protobufBytes: LiveKitFixtures.bytes("scenario.unpacked_enums"))
        #expect(track.sid == "TR_p" && track.source == .microphone)
        #expect(track.audioFeatures == [.stereo, .noDtx])
    }

    @Test func bedrudDataPacketsCarryChatAndModeration() throws {
        let chatPacket = try LiveKit.DataPacket(protobufBytes: LiveKitFixtures.bytes("scenario.data_chat_bedrud"))
        guard case .user(let user) = chatPacket.value else {
            Issue.record("expected a user packet")
            return
        }
        #expect(chatPacket.sequence == 12 && chatPacket.participantSid == "PA_alice")
        let chat = try #require(BedrudChatPayload(topic: user.topic, payload: user.payload))
        #expect(chat.message == "hello 👋" && chat.senderName == "Alice Ünal" && chat.timestampMs == 1767225700123)
        #expect(chat.attachments == [.init(url: "https://meet.example/uploads/chat/ab.png", mime: "image/png", width: 64, height: 48, size: 1234)])

        let systemPacket = try LiveKit.DataPacket(protobufBytes: LiveKitFixtures.bytes("scenario.data_system_kick"))
        guard case .user(let sys) = systemPacket.value else {
            Issue.record("expected a user packet")
            return
        }
        #expect(BedrudSystemMessage(topic: sys.topic, payload: sys.payload)
            == BedrudSystemMessage(event: .kick, actor: "owner-uuid", target: "guest-ab12cd34"))
    }

    @Test func tokensNeverReachDescriptions() throws {
        let token = try LiveKit.SignalResponse(protobufBytes: LiveKitFixtures.bytes("scenario.refresh_token"))
        #expect(token.message == .refreshToken("eyJhbGciOiJIUzI1NiJ9.e30.sig"))
        #expect(!String(describing: token).contains("eyJ"))
        #expect(!String(describing: token.message).contains("eyJ"))
        let moved = try LiveKit.SignalResponse(protobufBytes: LiveKitFixtures.bytes("signal_response.room_moved"))
        guard case .roomMoved(let m) = moved.message else {
            Issue.record("expected room_moved")
            return
        }
        #expect(!m.token.isEmpty && !String(describing: m).contains(m.token))
    }
}

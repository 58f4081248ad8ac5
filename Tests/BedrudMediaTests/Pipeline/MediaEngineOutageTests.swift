import BedrudProtocol
import BedrudRuntime
import Testing

@testable import BedrudMedia

/// A participant's file ends where they were last known to be in the room,
/// not at the end of an outage that ended the session (47.5 s of filler before), and an
/// outage that recovers is one honest `reconnect` gap.
@Suite struct MediaEngineOutageTests {
    static let sec: UInt64 = 1_000_000_000
    let origin = VirtualRecording.origin

    func report(_ rec: VirtualRecording, _ id: String) throws -> OggOpusReport {
        OggOpusVerifier.verify(try #require(rec.sinks.participant(id)).bytes)
    }

    func gaps(_ rec: VirtualRecording) -> [(Int64, Int64, GapCause)] {
        rec.allEvents.compactMap { if case .gap(_, _, let s, let d, let c) = $0 { return (s, d, c) } else { return nil } }
    }

    /// Two seconds of speech from 0 s (arriving at 30 ms), our connection lost at 2.5 s.
    func speakerThenOutage() -> (VirtualRecording, [(PacketRing, [ScriptedPacket])]) {
        var s = PacketScript()
        s.append(TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 31)), ssrc: 1, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        let rec = VirtualRecording()
        let ring = rec.add("hana")
        return (rec, [(ring, s.packets)])
    }

    @Test func aSessionEndingInAnOutageIsNotPaddedThroughIt() throws {
        let (rec, streams) = speakerThenOutage()
        rec.run(streams, until: origin + 50 * Self.sec, controls: [(origin + 2_500_000_000, .participantReconnecting(identity: "hana"))])
        rec.finish(at: origin + 50 * Self.sec)
        let r = try report(rec, "hana")
        #expect(r.isValid, "\(r.problems)")
        // Before: 50 s (the file grew through the outage and was padded to the end).
        #expect(abs(r.durationMillis - 2_470) <= 30, "\(r.durationMillis) ms")
        #expect(gaps(rec).allSatisfy { $0.1 < 600 }, "\(gaps(rec))")
    }

    @Test func someoneGoneAfterTheRejoinEndsWhereTheOutageBegan() throws {
        let (rec, streams) = speakerThenOutage()
        rec.run(streams, until: origin + 40 * Self.sec, controls: [
            (origin + 2_500_000_000, .participantReconnecting(identity: "hana")),
            (origin + 20 * Self.sec, .participantReconnecting(identity: "hana")),  // resume failed, full rejoin
            (origin + 40 * Self.sec, .participantLeft(identity: "hana")),  // absent after the rejoin
        ])
        rec.finish(at: origin + 45 * Self.sec)
        let r = try report(rec, "hana")
        #expect(r.isValid, "\(r.problems)")
        #expect(abs(r.durationMillis - 2_470) <= 30, "\(r.durationMillis) ms")
    }

    @Test func someoneStillThereAfterTheRejoinGetsOneReconnectGap() throws {
        let (rec, streams) = speakerThenOutage()
        rec.run(streams, until: origin + 70 * Self.sec, controls: [
            (origin + 2_500_000_000, .participantReconnecting(identity: "hana")),
            (origin + 62_000_000_000, .setMuted(identity: "hana", muted: true)),  // the rejoin says she is muted
            (origin + 62_500_000_000, .participantPresent(identity: "hana")),
        ])
        rec.finish(at: origin + 70 * Self.sec)
        let r = try report(rec, "hana")
        #expect(r.isValid, "\(r.problems)")
        #expect(abs(r.durationMillis - 69_970) <= 30, "\(r.durationMillis) ms")
        let reconnect = gaps(rec).filter { $0.2 == .reconnect }
        #expect(reconnect.count == 1, "\(gaps(rec))")
        // From the end of the speech (2.03 s) to the moment she was known present again
        // (less the mix latency the live fill keeps); the muted time after it is the mute's.
        #expect(gaps(rec).last?.2 == .mute, "\(gaps(rec))")
        #expect(abs((reconnect.first?.1 ?? 0) - 60_070) <= 300, "\(reconnect)")
    }
}

extension MediaEngineOutageTests {
    @Test func mediaBackAfterTheRejoinEndsOneReconnectGap() throws {
        var s1 = PacketScript()
        s1.append(TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 41)), ssrc: 1, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        var s2 = PacketScript()
        s2.append(TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 42)), ssrc: 2, firstSequence: 900, firstTimestamp: 4242, startSeconds: 63)
        let rec = VirtualRecording()
        let ring1 = rec.add("ines", sid: "TR_1")
        let ring2 = PacketRing(capacity: 256)
        rec.run([(ring1, s1.packets), (ring2, s2.packets)], until: origin + 66 * Self.sec, controls: [
            (origin + 2_500_000_000, .participantReconnecting(identity: "ines")),
            (origin + 62 * Self.sec, .addTrack(MediaTrackSpec(trackSid: "TR_2", participantIdentity: "ines", participantName: "ines"), ring2)),
            (origin + 62_200_000_000, .participantPresent(identity: "ines")),  // rejoined; her media follows 0.8 s later
        ])
        rec.finish(at: origin + 66 * Self.sec)
        let r = try report(rec, "ines")
        #expect(r.isValid, "\(r.problems)")
        let g = gaps(rec).filter { $0.1 >= 200 }
        #expect(g.map(\.2) == [.reconnect, .noPackets], "one gap for the outage, then the second after her speech: \(g)")
        #expect(abs((g.first?.1 ?? 0) - 61_000) <= 100, "\(g)")
        #expect(abs(r.durationMillis - 65_970) <= 30, "\(r.durationMillis) ms")
    }
}

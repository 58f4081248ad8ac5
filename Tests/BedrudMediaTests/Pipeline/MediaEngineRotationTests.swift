import BedrudProtocol
import Foundation
import Testing

@testable import BedrudMedia

/// Rotation (`--split`, `--split-size`, SIGHUP): a file continues in numbered
/// segments, each a valid Ogg Opus stream of its own, and nothing is lost or doubled at a
/// boundary: the segments' packets are the unsplit file's, their granules add up to its.
@Suite(.serialized) struct MediaEngineRotationTests {
    static let sec: UInt64 = 1_000_000_000
    let origin = VirtualRecording.origin
    let end = VirtualRecording.origin + 6 * 1_000_000_000 + 100_000_000

    /// Host speaks from 0 s; the guest's tone (with a 1 s pause: a gap across a boundary)
    /// from 1 s. Rotated at 2 s and 4.01 s when `rotations` is on.
    func record(rotations: [UInt64]) -> VirtualRecording {
        let rec = VirtualRecording(config: MediaPipelineConfig())
        var host = PacketScript()
        host.append(TestEncoder.encode(TestSignal.speech(seconds: 6, seed: 5)), firstSequence: 10, firstTimestamp: 1000, startSeconds: 0)
        var guest = PacketScript()
        guest.append(TestEncoder.encode(TestSignal.tone(seconds: 2.5, frequency: 440, amplitude: 0.3)), ssrc: 0x2222,
                     firstSequence: 100, firstTimestamp: 50_000, startSeconds: 1)
        guest.append(TestEncoder.encode(TestSignal.tone(seconds: 1.5, frequency: 440, amplitude: 0.3)), ssrc: 0x2222,
                     firstSequence: 100 + 125 + 50, firstTimestamp: 50_000 + 175 * 960, startSeconds: 4.5)
        let hostRing = rec.add("host")
        let guestRing = rec.add("guest", at: origin + Self.sec)
        rec.run([(hostRing, host.packets), (guestRing, guest.packets)], until: end,
                controls: rotations.map { ($0, MediaControl.rotate(.duration)) })
        rec.finish(at: end)
        return rec
    }

    static func serial(_ bytes: [UInt8]) -> UInt32 {
        UInt32(bytes[14]) | UInt32(bytes[15]) << 8 | UInt32(bytes[16]) << 16 | UInt32(bytes[17]) << 24
    }

    static func finalGranule(_ r: OggOpusReport) -> Int64 {
        Int64((r.durationMillis * 48).rounded()) + Int64(r.head?.preSkip ?? 0)
    }

    @Test func segmentsAreValidStreamsThatAddUpToTheUnsplitFile() throws {
        let whole = record(rotations: [])
        let split = record(rotations: [origin + 2 * Self.sec, origin + 4 * Self.sec + 10_000_000])
        for output in [RecordingOutput.participant(identity: "host", name: "host"), .participant(identity: "guest", name: "guest"), .room] {
            let one = try #require(whole.sinks.segments[output]?.first).bytes
            let parts = try #require(split.sinks.segments[output]).map(\.bytes)
            #expect(parts.count == 3, "\(output): \(parts.count) segments")
            let oneReport = OggOpusVerifier.verify(one)
            let reports = parts.map { OggOpusVerifier.verify($0) }
            for (i, r) in reports.enumerated() {
                #expect(r.isValid && r.hasEOS, "\(output) segment \(i + 1): \(r.problems)")
                #expect(r.tags?.value("SEGMENT") == (i == 0 ? nil : String(i + 1)))
            }
            #expect(Set(parts.map(Self.serial)).count == 3, "\(output): every segment has its own serial")
            let preSkip = Int64(oneReport.head?.preSkip ?? 0)
            #expect(reports.allSatisfy { Int64($0.head?.preSkip ?? 0) == preSkip })

            // Granules add up exactly; each later segment's pre-skip is its decoder's warm-up.
            #expect(reports.map(Self.finalGranule).reduce(0, +) == Self.finalGranule(oneReport), "\(output)")
            let played: Int64 = reports.map { Int64(($0.durationMillis * 48).rounded()) }.reduce(0, +)
            #expect(played == Int64((oneReport.durationMillis * 48).rounded()) - 2 * preSkip, "\(output)")
            // Each segment's START_OFFSET_MS is where the previous one's audio ended plus the warm-up.
            let offsets = reports.map { Double($0.tags?.value("START_OFFSET_MS") ?? "") ?? -1 }
            let base = Double(oneReport.tags?.value("START_OFFSET_MS") ?? "") ?? -1
            #expect(offsets[0] == base)
            for i in 1..<3 {
                let expected = offsets[i - 1] + reports[i - 1].durationMillis + Double(preSkip) / 48
                #expect(abs(offsets[i] - expected) <= 1.5, "\(output) segment \(i + 1) at \(offsets[i]), expected \(expected)")
            }

            // Passthrough: every packet is in exactly one segment (the 2-byte EOS packets
            // that end trimming removes are the only additions).
            if case .participant = output {
                let original = Array(TestOggReader.packets(one).dropFirst(2))
                var joined: [[UInt8]] = []
                for (i, part) in parts.enumerated() {
                    var audio = Array(TestOggReader.packets(part).dropFirst(2))
                    if i < parts.count - 1 { #expect(audio.removeLast().count == 2) }
                    joined += audio
                }
                #expect(joined == original, "\(output): \(joined.count) packets vs \(original.count)")
                // Decoded as a player would, the segments lose only the warm-ups.
                let pcm = parts.map { TestOggReader.decode($0).count }.reduce(0, +)
                #expect(Int64(pcm) == Int64(TestOggReader.decode(one).count) - 2 * preSkip)
            }
        }
        // Events: two rotations per output, a finished and a started file for each segment.
        let rotated = split.allEvents.compactMap { e -> (String, Int)? in
            if case .fileRotated(let id, _, let segment, _, let cause) = e, cause == .duration { return (id, segment) } else { return nil }
        }
        #expect(rotated.map { "\($0.0):\($0.1)" }.sorted() == [":2", ":3", "guest:2", "guest:3", "host:2", "host:3"])
        let started = split.allEvents.filter { if case .fileStarted = $0 { true } else { false } }.count
        let finished = split.allEvents.filter { if case .fileFinished = $0 { true } else { false } }.count
        #expect(started == 9 && finished == 9, "\(started) started, \(finished) finished")
        // The participant's figures still cover the whole recording.
        let host = try #require(split.engine.stats().participants.first { $0.identity == "host" })
        let hostWhole = try #require(whole.engine.stats().participants.first { $0.identity == "host" })
        #expect(host.fileDurationMillis == hostWhole.fileDurationMillis - 2 * Int64(MediaEngine.senderPreSkip) / 48)
    }

    /// A rotation before anyone has a file, or straight after another, splits nothing off.
    @Test func aRotationWithNothingToSplitIsANoOp() throws {
        let rec = record(rotations: [origin + 1_000_000, origin + 2 * Self.sec, origin + 2 * Self.sec + 5_000_000])
        #expect(rec.sinks.segments[.participant(identity: "host", name: "host")]?.count == 2)
        #expect(rec.sinks.segments[.room]?.count == 2)
    }
}

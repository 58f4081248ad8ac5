import Foundation
import Testing
import TestSupport

@testable import BedrudMedia

@Suite(.serialized) struct OggOpusVerifierRepairTests {
    /// Encodes a sox-generated or espeak-ng WAV with opusenc (opus-tools).
    func opusencFile(_ producer: (String) throws -> Void, args: [String] = []) throws -> [UInt8] {
        let dir = try temporaryDirectory()
        let wav = dir + "/in.wav"
        try producer(wav)
        let out = dir + "/out.opus"
        let (status, text) = try runTool("/usr/bin/opusenc", ["--quiet"] + args + [wav, out])
        #expect(status == 0, "\(text)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    @Test(arguments: [["1"], ["2"]])
    func acceptsOpusencFiles(channels: [String]) throws {
        let bytes = try opusencFile { wav in
            let (s, t) = try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-b", "16", "-c", channels[0], wav, "synth", "3.25", "sine", "440"])
            #expect(s == 0, "\(t)")
        }
        let r = OggOpusVerifier.verify(bytes)
        #expect(r.isValid, "\(r.problems)")
        #expect(abs(r.durationMillis - 3250) < 1)
        #expect(r.head?.channelCount == UInt8(channels[0]))
        #expect(r.tags?.vendor.contains("libopus") == true)
        #expect(r.gaps.isEmpty)
    }

    @Test func acceptsOpusencSpeechFromEspeak() throws {
        let bytes = try opusencFile({ wav in
            let (s, t) = try runTool("/usr/bin/espeak-ng", ["-w", wav, "Bedrud records every participant on one clock."])
            #expect(s == 0, "\(t)")
        }, args: ["--bitrate", "32"])
        let r = OggOpusVerifier.verify(bytes)
        #expect(r.isValid, "\(r.problems)")
        #expect(r.durationMillis > 1000)
    }

    @Test func findsDamagedPagesWithoutCrashing() throws {
        var bytes = try opusencFile { wav in
            _ = try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-b", "16", "-c", "1", wav, "synth", "20", "sine", "300"])
        }
        bytes[bytes.count / 2] ^= 0x5A
        let r = OggOpusVerifier.verify(bytes)
        #expect(!r.isValid)
        #expect(r.problems.contains { $0.contains("damaged") })
    }

    @Test func randomBytesNeverCrashVerifyOrRepair() {
        var rng = SplitMix(seed: 7)
        for round in 0..<200 {
            var bytes = (0..<Int(rng.next() % 3000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if round % 3 == 0 { bytes = Array("OggS".utf8) + bytes }
            let r = OggOpusVerifier.verify(bytes)
            #expect(!r.isValid, "seed 7 round \(round)")
            _ = try? OggOpusRepair.repair(bytes)
        }
    }

    @Test func repairRefusesAFileWithoutHeaders() {
        #expect(throws: MediaIOError.self) { try OggOpusRepair.repair(Array("OggS not really".utf8)) }
    }

    /// A recording cut off anywhere (as by kill -9) is repaired into a valid file that
    /// holds everything up to its last complete page.
    @Test func repairsRecordingsCutAnywhere() throws {
        let opus = TestEncoder.encode(TestSignal.speech(seconds: 6, seed: 50))
        var s = PacketScript()
        s.append(opus, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        let rec = VirtualRecording()
        let ring = rec.add("kim")
        let origin = VirtualRecording.origin
        rec.run([(ring, s.packets)], until: origin + 6_030_000_000)
        // Not finished: this is what the .part file holds when the process dies.
        let partial = try #require(rec.sinks.participant("kim")).bytes
        #expect(!OggOpusVerifier.verify(partial).hasEOS)
        var rng = SplitMix(seed: 99)
        for cut in [partial.count] + (0..<20).map({ _ in 200 + Int(rng.next() % UInt64(partial.count - 200)) }) {
            let bytes = Array(partial.prefix(cut))
            let fixed = try OggOpusRepair.repair(bytes)
            let r = OggOpusVerifier.verify(fixed.bytes)
            #expect(r.isValid, "cut at \(cut): \(r.problems)")
            #expect(r.hasEOS)
            if cut == partial.count {
                // All but the last second (pages are flushed every second of audio; the
                // mix latency keeps the last ~0.8 s in the jitter/hold stage).
                #expect(r.durationMillis >= 6000 - 1000 - 800, "kept \(r.durationMillis) ms")
            }
        }
        // The same with an opusenc file.
        let other = try opusencFile { wav in
            _ = try runTool("/usr/bin/sox", ["-n", "-r", "48000", "-b", "16", "-c", "2", wav, "synth", "10", "sine", "500"])
        }
        let fixed = try OggOpusRepair.repair(Array(other.prefix(other.count * 2 / 3)))
        #expect(OggOpusVerifier.verify(fixed.bytes).isValid)
    }

    @Test func repairsAPartFileOnDisk() throws {
        let opus = TestEncoder.encode(TestSignal.speech(seconds: 3, seed: 51))
        var s = PacketScript()
        s.append(opus, firstSequence: 1, firstTimestamp: 0, startSeconds: 0)
        let rec = VirtualRecording()
        let ring = rec.add("lee")
        rec.run([(ring, s.packets)], until: VirtualRecording.origin + 3_000_000_000)
        let bytes = try #require(rec.sinks.participant("lee")).bytes
        let dir = try temporaryDirectory()
        let part = dir + "/lee.opus.part"
        try Data(bytes.dropLast(7)).write(to: URL(fileURLWithPath: part))
        let result = try OggOpusRepair.repair(path: part)
        #expect(result.outputPath == dir + "/lee.opus")
        #expect(result.markedEndOfStream)
        #expect(result.bytesDropped > 0)
        #expect(result.report.isValid)
        #expect(!FileManager.default.fileExists(atPath: part))
        let (status, out) = try runTool("/usr/bin/opusinfo", [result.outputPath])
        #expect(status == 0 && !out.contains("WARNING"), "\(out)")
    }
}

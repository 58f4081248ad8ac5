import BedrudProtocol
import Foundation
import Testing
import TestSupport

@testable import BedrudMedia

@Suite(.serialized) struct MediaEngineFuzzTests {
    /// Seeded garbage (random SSRCs, sequence and timestamp jumps, random and truncated
    /// payloads, bogus sender reports) never crashes the engine, never writes more than
    /// the session lasted, and always leaves valid Ogg Opus files.
    @Test(arguments: [1, 2, 3, 4])
    func randomStreamsStayValidAndBounded(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let good = TestEncoder.encode(TestSignal.speech(seconds: 2, seed: seed))
        var list: [ScriptedPacket] = []
        var seq: UInt16 = UInt16(truncatingIfNeeded: rng.next())
        var ts = UInt32(truncatingIfNeeded: rng.next())
        var ssrc: UInt32 = 1
        for i in 0..<1500 {
            let arrival = UInt64(i) * 20_000_000 + UInt64(rng.next() % 80_000_000) + VirtualRecording.origin
            let r = rng.next() % 100
            if r < 3 { seq = UInt16(truncatingIfNeeded: rng.next()) }
            if r >= 3 && r < 6 { ts = UInt32(truncatingIfNeeded: rng.next()) }
            if r == 6 { ssrc = UInt32(rng.next() % 3) + 1 }
            var payload = good[i % good.count]
            if r >= 7 && r < 12 { payload = (0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
            if r == 12 { payload = Array(payload.prefix(Int(rng.next() % 3))) }
            var p = ScriptedPacket(sequence: seq, timestamp: ts, arrivalNanos: arrival, ssrc: ssrc, payload: payload)
            if r == 13 { p.ntp = rng.next(); p.payload = [] }
            list.append(p)
            seq &+= 1
            ts &+= 960
        }
        let rec = VirtualRecording()
        let ring = rec.add("fuzz")
        let end = VirtualRecording.origin + 31_000_000_000
        rec.run([(ring, list)], until: end)
        rec.finish(at: end)
        for sink in rec.sinks.sinks.values {
            let r = OggOpusVerifier.verify(sink.bytes)
            #expect(r.isValid, "seed \(seed): \(r.problems)")
            // A file may start up to 3 s before its first packet arrived (see MediaEngine.write).
            #expect(r.durationMillis <= 31_000 + 3_000, "seed \(seed): \(r.durationMillis) ms")
        }
    }
}

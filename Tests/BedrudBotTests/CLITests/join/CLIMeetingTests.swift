import BedrudMedia
import Foundation
import Testing
import TestSupport

/// `join --record` of a generated realistic meeting (bedrud_devserver.meeting: espeak
/// turns, a backchannel over the speaker, a person muted throughout, libwebrtc DTX from
/// everyone quiet): the speaking turns are where the meeting's ground truth puts them, and
/// room.opus is the sum of the participants' files while most of it is the lone speaker's
/// own packets (`record.mix_passthrough`).
@Suite(.serialized) struct CLIMeetingTests {
    @Test func aGeneratedMeetingIsRecordedTurnByTurnAndItsLoneVoicesPassThrough() async throws {
        let user = try CLIUser()
        let scenario = user.home.appendingPathComponent("meeting.scenario")
        let truthPath = user.home.appendingPathComponent("truth.json").path
        let gen = try Subprocess.run(
            Repo.root.appendingPathComponent(".venv/bin/python"),
            ["-m", "bedrud_devserver.meeting", "--people", "4", "--minutes", "0.5", "--seed", "11", "--muted", "1", "--late", "0",
             "--early", "0", "--chats-per-minute", "0", "--truth", truthPath],
            currentDirectory: Repo.root.appendingPathComponent("scripts"), timeout: 60)
        try #require(gen.exitCode == 0, "\(gen.stderr)")
        try gen.stdout.write(to: scenario, atomically: true, encoding: .utf8)
        let truth = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: truthPath))) as? [String: Any])
        let turns = try #require(truth["turns"] as? [[String: Any]])

        let server = try await DevServer.start(scenario: scenario)
        let out = user.home.appendingPathComponent("rec").path
        _ = try await user.expect(0, ["join", server.baseURL + "/m/meeting", "--record", "--output", out, "--duration", "36"], timeout: 120)
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/meeting")
        let dir = out + "/meeting/" + sessions[0]
        try await expectValidEvents(dir)

        // Speaking turns: each person's turns start where the truth says, after the one
        // offset between the scenario's clock and the session's (from Alice's first turn).
        let objects = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        func detected(_ identity: String) -> [(start: Int, end: Int)] {
            objects.filter { $0["type"] as? String == "speaking_turn" && ($0["participant"] as? [String: Any])?["identity"] as? String == identity }
                .compactMap { o in (o["start_ms"] as? Int).flatMap { s in (o["end_ms"] as? Int).map { (s, $0) } } }
        }
        let alice = detected("p01")
        try #require(!alice.isEmpty, "no speaking turn from Alice")
        let offset = alice[0].start - 2000
        #expect((0...3000).contains(offset), "offset \(offset) ms")
        for t in turns where t["kind"] as? String == "turn" {
            let who = try #require(t["who"] as? String), start = Int(((t["start"] as? Double) ?? 0) * 1000) + offset
            let mine = detected(who)
            #expect(mine.contains { abs($0.start - start) <= 300 }, "\(who)'s turn at \(start) ms: detected \(mine)")
        }
        #expect(detected("p03").isEmpty, "the muted person spoke: \(detected("p03"))")
        // Each speaker's detected time covers their voiced time (the hangover merges pauses).
        for who in ["p01", "p02", "p04"] {
            let voiced = turns.filter { $0["who"] as? String == who }.flatMap { ($0["voiced"] as? [[Double]]) ?? [] }.reduce(0.0) { $0 + $1[1] - $1[0] }
            let spoken = Double(detected(who).reduce(0) { $0 + $1.end - $1.start }) / 1000
            #expect(spoken >= voiced * 0.8 && spoken <= voiced * 1.5, "\(who): \(spoken) s detected, \(voiced) s voiced")
        }

        // The mix: a lone voice's own packets make much of it. (Not most: the devserver
        // codes some voices at 64 kbit/s stereo as CELT, and a run starts only on a voice-
        // coded packet, where the decoder meets the voice afresh.)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".opus") }
        let people = names.filter { $0 != "room.opus" }
        var own = Set<[UInt8]>()
        for n in people {
            let f = try OggOpusPackets.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/" + n))))
            for i in f.entries.indices where f.entries[i].length > 3 { own.insert(Array(f.packet(i))) }
        }
        let room = try OggOpusPackets.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/room.opus"))))
        let audio = room.entries.indices.filter { room.entries[$0].length > 3 }
        let passed = audio.filter { own.contains(Array(room.packet($0))) }.count
        #expect(passed * 4 > audio.count, "\(passed) of \(audio.count) mix packets passed through")

        // And the mix is the sum of the files as a player decodes them, each at its
        // START_OFFSET_MS refined to the sample (the tag is whole milliseconds: two voices
        // half a millisecond apart in a sum decorrelate where they overlap), by its best
        // lag within ±1 ms against the mix over its loudest five seconds.
        let mix = try CLIAlignTests.decode(dir + "/room.opus", into: user.home.path)
        var sum = [Float](repeating: 0, count: mix.count)
        for n in people {
            let pcm = try CLIAlignTests.decode(dir + "/" + n, into: user.home.path)
            let start = (Int(try OggOpusVerifier.verify(path: dir + "/" + n).tags?.value("START_OFFSET_MS") ?? "") ?? 0) * 48
            var loudest = 0, loudestEnergy: Float = -1
            for b in stride(from: 0, to: max(0, pcm.count - 240_000), by: 48_000) {
                let e = pcm[b..<b + 240_000].reduce(0) { $0 + $1 * $1 }
                if e > loudestEnergy { (loudest, loudestEnergy) = (b, e) }
            }
            var lag = 0, bestDot = -Double.infinity
            if loudestEnergy > 0 {
                for l in -48...48 {
                    var dot = 0.0
                    for i in stride(from: loudest, to: min(pcm.count, loudest + 240_000), by: 1) where start + l + i >= 0 && start + l + i < mix.count {
                        dot += Double(pcm[i]) * Double(mix[start + l + i])
                    }
                    if dot > bestDot { (lag, bestDot) = (l, dot) }
                }
            }
            for (i, x) in pcm.enumerated() where start + lag + i >= 0 && start + lag + i < sum.count { sum[start + lag + i] += x }
        }
        var blocks: [Double] = []
        for b in stride(from: 48, to: mix.count - 48_048, by: 48_000) {
            let m = mix[b..<b + 48_000]
            guard (m.reduce(0) { $0 + $1 * $1 } / 48_000).squareRoot() > 0.01 else { continue }
            var best = -1.0
            for lag in -4...4 {
                var ab = 0.0, aa = 0.0, bb = 0.0
                for i in b..<b + 48_000 {
                    let x = Double(mix[i]), y = Double(sum[i - lag])
                    ab += x * y; aa += x * x; bb += y * y
                }
                if aa > 0 && bb > 0 { best = max(best, ab / (aa * bb).squareRoot()) }
            }
            blocks.append(best)
        }
        #expect(blocks.count >= 20, "\(blocks.count) seconds with sound")
        #expect(blocks.allSatisfy { $0 > 0.9 }, "mix against the files' sum, second by second: \(blocks)")
        #expect(blocks.reduce(0, +) / Double(max(1, blocks.count)) > 0.97, "\(blocks)")
    }
}

import Foundation
import Testing
import TestSupport

/// The publishing path end to end on the devserver: one bot publishes a 440 Hz tone
/// (add_track → track_published → renegotiation → paced SRTP), the server forwards it,
/// and a second bot's `join --record` records it: the recording holds that tone.
@Suite struct CLIPublishTests {
    /// The dominant frequency of an Ogg Opus file, decoded by PyAV (FFmpeg's libopus
    /// decoder, independent of ours) in the worktree's venv.
    static func dominantHz(_ path: String) async throws -> Double {
        let script = """
            import sys, av, numpy as np
            c = av.open(sys.argv[1]); s = c.streams.audio[0]
            pcm = np.concatenate([f.to_ndarray().reshape(-1, f.samples)[0] for f in c.decode(s)]).astype(float)
            pcm = pcm[4800:]  # skip the first 100 ms (pre-skip, encoder start-up)
            spec = np.abs(np.fft.rfft(pcm * np.hanning(len(pcm))))
            print(np.argmax(spec) * 48000.0 / len(pcm))
            """
        let python = Repo.root.appendingPathComponent(".venv/bin/python")
        let r = try await offPool { try Subprocess.run(python, ["-c", script, path], timeout: 60) }
        return try #require(Double(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "PyAV said: \(r.stdout) \(r.stderr)")
    }

    @Test func aPublishedToneIsRecordedByAnotherBot() async throws {
        let server = try await DevServer.start(["--seed-room", "radio"])
        let listener = try CLIUser()
        let publisher = try CLIUser()
        let out = listener.home.appendingPathComponent("rec").path
        let link = server.baseURL + "/m/radio"
        async let recorded = listener.run(["join", link, "--record", "--output", out, "--duration", "10s", "--guest-name", "Listener"], timeout: 60)
        try await server.waitForParticipants(in: "radio")
        let p = try await publisher.expect(0, ["play", link, "--tone", "440", "--duration", "3s", "--guest-name", "Tone"], timeout: 60)
        #expect(p.stderr.contains("(150 packets)"), "\(p.stderr)")
        let r = try await recorded
        #expect(r.exitCode == 0, "\(r.stderr)")
        #expect(r.stdout.contains("speaking: Tone"), "\(r.stdout)")
        let files = FileManager.default.enumerator(atPath: out)?.compactMap { $0 as? String } ?? []
        let tone = try #require(files.first { $0.hasSuffix("Tone.opus") }, "no Tone.opus in \(files)")
        let summaryPath = try #require(files.first { $0.hasSuffix("summary.json") })
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/" + summaryPath))) as? [String: Any])
        let who = try #require((summary["participants"] as? [[String: Any]])?.first { $0["name"] as? String == "Tone" })
        // The first packets may go out before the server forwards to the listener; none after.
        #expect((who["packets"] as? Int ?? 0) >= 140, "\(who)")
        #expect(who["lost"] as? Int == 0, "\(who)")
        #expect(abs(try await Self.dominantHz(out + "/" + tone) - 440) < 3)
    }
}

import Foundation
import Testing
import TestSupport

/// `join --record --align session` against the devserver: someone joins
/// late, and every file still starts at the session's start, so the files have equal
/// lengths and the late joiner's audio sits where it happened.
@Suite(.serialized) struct CLIAlignTests {
    static let scenario = """
        # The host speaks briefly; someone joins 2.5 s in, stays quiet (DTX), then plays a tone.
        room aligned public
        start first-join
        at 0s    join host name="Host"
        at 0.3s  tone host 330Hz 1s amplitude=0.3
        at 2.5s  join late name="Late Joiner"
        +0s      dtx late
        +1.5s    tone late 550Hz 1.5s amplitude=0.3
        """

    /// Decodes with opusdec (pre-skip and end trimming as a player does) and returns the
    /// first channel at 48 kHz.
    static func decode(_ path: String, into dir: String) throws -> [Float] {
        let wav = dir + "/" + URL(fileURLWithPath: path).lastPathComponent + ".wav"
        let r = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/opusdec"), ["--quiet", "--rate", "48000", "--no-dither", path, wav], timeout: 60)
        #expect(r.exitCode == 0, "opusdec \(path): \(r.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: wav)))
        func u32(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24 }
        var i = 12, channels = 1
        while i + 8 <= bytes.count {
            let id = String(decoding: bytes[i..<i + 4], as: UTF8.self)
            let size = u32(i + 4)
            if id == "fmt " { channels = Int(bytes[i + 10]) | Int(bytes[i + 11]) << 8 }
            if id == "data" {
                var out: [Float] = []
                var k = i + 8
                while k + 2 * channels <= bytes.count {
                    out.append(Float(Int16(bitPattern: UInt16(bytes[k]) | UInt16(bytes[k + 1]) << 8)) / 32768)
                    k += 2 * channels
                }
                return out
            }
            i += 8 + size + (size & 1)
        }
        Issue.record("\(wav): no data chunk")
        return []
    }

    /// Milliseconds of the first sample at or above `level`, from `fromMillis` on.
    static func onset(_ pcm: [Float], fromMillis: Int, level: Float = 0.05) -> Double? {
        guard fromMillis * 48 < pcm.count, let i = pcm[(fromMillis * 48)...].firstIndex(where: { abs($0) >= level }) else { return nil }
        return Double(i) / 48
    }

    @Test func lateJoinerLinesUpWithEveryone() async throws {
        let user = try CLIUser()
        let server = try await DevServer.start(scenarioText: Self.scenario)
        let bad = try await user.expect(2, ["join", server.baseURL + "/m/aligned", "--record", "--align", "start"])
        #expect(bad.stderr.contains("--align expects join or session, got 'start'"), "\(bad.stderr)")
        let out = user.home.appendingPathComponent("rec").path
        try await user.expect(0, ["join", server.baseURL + "/m/aligned", "--record", "--output", out, "--align", "session", "--duration", "7s"], timeout: 90)
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/aligned")
        let dir = out + "/aligned/" + (sessions.first ?? "")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".opus") }.sorted()
        #expect(files == ["Host.opus", "Late Joiner.opus", "room.opus"], "\(files)")
        try await user.expect(0, ["verify"] + files.map { dir + "/" + $0 })

        let host = try Self.decode(dir + "/Host.opus", into: user.home.path)
        let late = try Self.decode(dir + "/Late Joiner.opus", into: user.home.path)
        let room = try Self.decode(dir + "/room.opus", into: user.home.path)
        // Equal lengths within a frame or two (20 ms frames: 1920 samples).
        #expect(abs(late.count - host.count) <= 1920, "late \(late.count), host \(host.count)")
        #expect(abs(late.count - room.count) <= 1920, "late \(late.count), room \(room.count)")
        #expect(late.count > 6 * 48000, "\(late.count)")

        // The late joiner's tone (after the host's ended at about 1.3 s) is at the same
        // place in their own file as in the mix, which is on the session's timeline; and
        // nothing before the tone in the padded file.
        let info = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/opusinfo"), [dir + "/Late Joiner.opus"], timeout: 30).stdout
        func tag(_ key: String) -> Double? {
            info.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(key + "=") }
                .flatMap { Double($0.split(separator: "=").last ?? "") }
        }
        #expect(tag("START_OFFSET_MS") == 0, "\(info)")
        let audioStart = try #require(tag("AUDIO_START_OFFSET_MS"), "\(info)")
        let lateOnset = try #require(Self.onset(late, fromMillis: 0), "no tone in the late joiner's file")
        let roomOnset = try #require(Self.onset(room, fromMillis: 2000), "no late tone in room.opus")
        #expect(lateOnset > 3000, "late onset \(lateOnset) ms: the file has audio before the tone")
        print("align=session: samples host \(host.count) late \(late.count) room \(room.count); late onset \(lateOnset) ms, room onset \(roomOnset) ms, AUDIO_START_OFFSET_MS \(audioStart)")
        #expect(abs(lateOnset - roomOnset) <= 40, "late file onset \(lateOnset) ms, room onset \(roomOnset) ms")
        // The late joiner is quiet with DTX from the join on and sends what libwebrtc sends
        // then (a 1-byte packet every 400 ms, docs/DEVSERVER.md): their audio starts at the
        // join (2.5 s), and the tone comes 1.5 s later, where the scenario puts it.
        #expect(abs(audioStart - 2500) <= 300, "AUDIO_START_OFFSET_MS \(audioStart), the join at 2500 ms")
        #expect(abs(lateOnset - 4000) <= 100, "late file onset \(lateOnset) ms, the tone at 4000 ms")
        #expect(Self.onset(late, fromMillis: 0, level: 0.001).map { $0 >= audioStart - 40 } ?? false, "sound in the padding")
    }
}

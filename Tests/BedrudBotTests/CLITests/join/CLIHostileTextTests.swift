import Foundation
import Testing
import TestSupport

/// Text from other people: someone in the meeting names themselves with escape sequences and chats
/// with them. None of it may reach the operator's terminal or a text file raw; the JSON
/// outputs keep the original text.
@Suite struct CLIHostileTextTests {
    static let name = "Mal\u{1B}]0;PWNED\u{07}\u{1B}[2J"
    // (A scenario is one step per line, so the chat cannot hold a newline here; the
    // formatter's own tests cover that.)
    static let chat = "hi\u{1B}[31m red\u{9B}2J \u{202E}gnp.exe"
    static let shownName = "Mal\\x1b]0;PWNED\\x07\\x1b[2J"

    static func controlBytes(_ text: String) -> [UInt8] {
        // Everything below 0x20 but line breaks and tabs, DEL, and the C1 range (in UTF-8: C2 80–C2 9F).
        let b = Array(text.utf8)
        var found = b.filter { ($0 < 0x20 && $0 != 0x0A && $0 != 0x09) || $0 == 0x7F }
        for i in b.indices.dropLast() where b[i] == 0xC2 && (0x80...0x9F).contains(b[i + 1]) { found.append(b[i + 1]) }
        if text.contains("\u{202E}") { found.append(0xEE) }
        return found
    }

    @Test func hostileNameAndChatOnStdoutInTheVTTAndKeptInJSON() async throws {
        let server = try await DevServer.start(scenarioText: """
            room hostile public
            start first-join
            at 0s join mal name="\(Self.name)"
            at 1s tone mal 440Hz 2s amplitude=0.3
            at 2s chat mal "\(Self.chat)"
            at 0s join dash name="-rf"
            at 0s join fa name="علی رضایی"
            at 1s tone dash 330Hz 2s amplitude=0.2
            at 1s tone fa 550Hz 2s amplitude=0.2
            at 5s leave mal
            at 5s leave dash
            at 5s leave fa
            """)
        let user = try CLIUser()
        let out = user.home.appendingPathComponent("rec").path
        let r = try await user.expect(0, ["join", server.baseURL + "/m/hostile", "--record", "--output", out, "--alone-timeout", "1s"], timeout: 90)
        #expect(Self.controlBytes(r.stdout).isEmpty, "raw control bytes on stdout: \(Self.controlBytes(r.stdout))")
        #expect(Self.controlBytes(r.stderr).isEmpty, "raw control bytes on stderr: \(Self.controlBytes(r.stderr))")
        #expect(r.stdout.contains("+ \(Self.shownName) joined"), "\(r.stdout)")
        #expect(r.stdout.contains("chat \(Self.shownName): hi\\x1b[31m red\\u{9b}2J \\u{202e}gnp.exe"), "\(r.stdout)")

        let session = try #require(try FileManager.default.contentsOfDirectory(atPath: out + "/hostile").first)
        let dir = out + "/hostile/" + session
        let vtt = try String(contentsOfFile: dir + "/transcript.vtt", encoding: .utf8)
        #expect(Self.controlBytes(vtt).isEmpty, "raw control bytes in transcript.vtt: \(vtt)")
        #expect(vtt.contains("<v \(Self.shownName)>(speaking)"), "\(vtt)")
        #expect(vtt.contains("[chat] hi\\x1b[31m red\\u{9b}2J \\u{202e}gnp.exe"), "\(vtt)")

        // events.jsonl keeps exactly what was sent, escaped by JSON, and is safe to cat.
        try await expectValidEvents(dir)
        let events = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8)
        #expect(Self.controlBytes(events).isEmpty)
        let objects = events.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let chat = try #require(objects.first { $0["type"] as? String == "chat" })
        #expect(chat["message"] as? String == Self.chat)
        #expect((chat["participant"] as? [String: Any])?["name"] as? String == Self.name)
        let joined = try #require(objects.first { $0["type"] as? String == "participant_joined" })
        #expect((joined["participant"] as? [String: Any])?["name"] as? String == Self.name)
        // File names: no control characters, never a leading '-', every script kept.
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        for f in files { #expect(Self.controlBytes(f).isEmpty && !f.hasPrefix("-"), "\(f)") }
        #expect(files.contains("_rf.opus") && files.contains("علی رضایی.opus") && files.contains("Mal_]0;PWNED__[2J.opus"), "\(files)")
        try await user.expect(0, ["verify"] + files.filter { $0.hasSuffix(".opus") }.map { dir + "/" + $0 })
    }

    @Test func configValuesAreNeverEchoedRawOrWhole() async throws {
        let user = try CLIUser()
        let escaped = try user.writeFile("escaped.conf", "[instance x]\nurl = https://a.example/\u{1B}]0;PWNED\u{07}\u{0}\n")
        let r1 = try await user.expect(3, ["config", "check", escaped])
        #expect(Self.controlBytes(r1.stderr).isEmpty, "\(Array(r1.stderr.utf8))")
        #expect(r1.stderr.contains("escaped.conf:2: instance.url: the value contains control characters"), "\(r1.stderr)")
        #expect(r1.stderr.contains("\\x1b]0;PWNED\\x07\\x00"), "\(r1.stderr)")

        let huge = try user.writeFile("huge.conf", "[instance x]\nurl = https://" + String(repeating: "a", count: 1_000_000) + ".example\n")
        let r2 = try await user.expect(3, ["config", "check", huge])
        #expect(r2.stderr.utf8.count < 400, "stderr is \(r2.stderr.utf8.count) bytes")
        #expect(r2.stderr.contains("huge.conf:2: instance.url: the value is 1000016 bytes long; at most 2048 are accepted"), "\(r2.stderr)")

        // The same limits apply to the environment, and a hostile instance name on the command line.
        user.extraEnvironment["BEDRUD_BOT_RECORD_OUTPUT_DIR"] = "/tmp/\u{1B}[2J"
        let r3 = try await user.expect(3, ["config", "show"])
        #expect(Self.controlBytes(r3.stderr).isEmpty)
        #expect(r3.stderr.contains("BEDRUD_BOT_RECORD_OUTPUT_DIR: the value contains control characters (/tmp/\\x1b[2J)"), "\(r3.stderr)")
        user.extraEnvironment = [:]
        let r4 = try await user.run(["-i", "x\u{1B}[2J" + String(repeating: "y", count: 5000), "whoami"])
        #expect(Self.controlBytes(r4.stderr).isEmpty)
        #expect(r4.stderr.utf8.count < 400, "\(r4.stderr)")
    }
}

import Foundation
import Testing
import TestSupport

/// `say --image` uploads the image as Bedrud's web client v0.12.0 does (ChatPanel.tsx:119-129):
/// an image of 512,000 bytes or more is kept by the server, and the chat carries its
/// `/uploads/chat/ROOM/USER/SHA256.png` URL, which a recording bot keeps as a URL and the
/// room's participants can fetch. Too big, too wide, refused: the exit code and line say so.
@Suite(.serialized) struct CLISayUploadTests {
    /// A PNG with a valid IHDR (`width` x `height`) and random IDAT bytes, `size` bytes in all.
    static func png(width: Int, height: Int, size: Int) -> [UInt8] {
        func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
        // Only the IHDR's CRC is checked by what reads the size (Go's png.DecodeConfig); the
        // IDAT's is left 0, which keeps a 10 MB file quick to make in a debug build.
        func chunk(_ kind: String, _ data: [UInt8], crc: Bool = true) -> [UInt8] {
            let body = Array(kind.utf8) + data
            return be32(data.count) + body + be32(crc ? Int(crc32(body)) : 0)
        }
        let head = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", be32(width) + be32(height) + [8, 2, 0, 0, 0])
        let tail = chunk("IEND", [])
        // Random bytes for the first 1 MB (each test's file differs), then a constant (fast in debug builds).
        let count = size - head.count - tail.count - 12
        var rng = SystemRandomNumberGenerator()
        var fill = (0..<min(count, 1 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        fill += [UInt8](repeating: 0xA5, count: count - fill.count)
        return head + chunk("IDAT", fill, crc: false) + tail
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 == 1 ? (c >> 1) ^ 0xEDB8_8320 : c >> 1 }
        }
        return ~c
    }

    /// Joins `room` as a guest over the REST API (a participant may read the room's uploads),
    /// then GETs `path` with and without that token: the statuses and the body's sha256.
    static func fetch(_ server: DevServer, room: String, path: String) throws -> [String: Any] {
        let r = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import sys, json, hashlib, urllib.request
            base, room, path = sys.argv[1:4]
            def call(url, data=None, token=None):
                h = {'Content-Type': 'application/json'}
                if token: h['Authorization'] = 'Bearer ' + token
                req = urllib.request.Request(base + url, data=data, headers=h, method='POST' if data else 'GET')
                try:
                    r = urllib.request.urlopen(req, timeout=20); return r.status, r.read()
                except urllib.error.HTTPError as e:
                    return e.code, e.read()
            s, b = call('/api/room/guest-join', json.dumps({'roomName': room, 'guestName': 'Fetcher'}).encode())
            token = json.loads(b)['tokens']['accessToken']
            anon, _ = call(path)
            status, body = call(path, token=token)
            print(json.dumps({'anonymous': anon, 'status': status, 'bytes': len(body), 'sha256': hashlib.sha256(body).hexdigest()}))
            """, server.baseURL, room, path], timeout: 40)
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] ?? ["stderr": r.stderr]
    }

    static func sha256(_ path: String) throws -> String {
        let r = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                   ["python3", "-c", "import sys, hashlib; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())", path], timeout: 20)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anImageOver512000BytesIsUploadedAndTheRecordingBotKeepsItsURL() async throws {
        let server = try await DevServer.start(["--seed-room", "uploads"])
        let listener = try CLIUser()
        let speaker = try CLIUser()
        let link = server.baseURL + "/m/uploads"
        let out = listener.home.appendingPathComponent("rec").path
        async let heard = listener.run(["join", link, "--record", "--output", out, "--duration", "20s", "--guest-name", "Listener"], timeout: 90)
        try await server.waitForParticipants(in: "uploads")
        let image = Self.png(width: 640, height: 480, size: 700_000)
        let imagePath = speaker.home.appendingPathComponent("chart.png").path
        try Data(image).write(to: URL(fileURLWithPath: imagePath))
        let sha = try Self.sha256(imagePath)
        let said = try await speaker.expect(0, ["say", link, "Today's chart", "--image", imagePath, "--guest-name", "Speaker"], timeout: 60)
        #expect(said.stderr.contains("with an image (uploaded to the server) in 'uploads'"), "\(said.stderr)")

        // On the wire: one plain chat packet (the URL is short), its attachment the upload's answer.
        let log = try CLISayTests.dataLog(server, room: "uploads")
        #expect(log.count == 1, "\(log.count) packets")
        let json = try #require(log.first?["json"] as? [String: Any])
        #expect(json["type"] as? String == "chat" && json["message"] as? String == "Today's chart")
        let sent = try #require((json["attachments"] as? [[String: Any]])?.first)
        let url = try #require(sent["url"] as? String)
        let parts = url.split(separator: "/").map(String.init)
        #expect(parts.count == 5 && parts[0] == "uploads" && parts[1] == "chat" && parts[4] == "\(sha).png", "\(url)")
        #expect(sent["kind"] as? String == "image" && sent["mime"] as? String == "image/png")
        #expect(sent["size"] as? Int == 700_000 && sent["w"] as? Int == 640 && sent["h"] as? Int == 480, "\(sent)")

        // The recording bot: one chat event whose attachment is that URL (nothing saved: not a data: URL).
        let r = try await heard
        #expect(r.exitCode == 0, "\(r.stderr)")
        let sessions = try FileManager.default.contentsOfDirectory(atPath: out + "/uploads")
        let dir = out + "/uploads/" + sessions[0]
        let chats = try String(contentsOfFile: dir + "/events.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "chat" }
        #expect(chats.count == 1)
        let recorded = try #require((chats.first?["attachments"] as? [[String: Any]])?.first)
        #expect(recorded["url"] as? String == url && recorded["size"] as? Int == 700_000 && recorded["path"] == nil, "\(recorded)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/attachments"))
        // report.html names the URL as text and loads nothing from the server.
        let report = try String(contentsOfFile: dir + "/report.html", encoding: .utf8)
        #expect(report.contains("attachment (not saved): <bdi>\(url)</bdi>") && !report.contains("src=\"\(url)"), "report")

        // The server kept it byte for byte, for the room's participants only.
        let got = try Self.fetch(server, room: "uploads", path: url)
        #expect(got["status"] as? Int == 200 && got["bytes"] as? Int == 700_000 && got["sha256"] as? String == sha, "\(got)")
        #expect(got["anonymous"] as? Int == 401, "\(got)")
    }

    @Test func anImageOverTheServersLimitIsRefusedBeforeJoining() async throws {
        let server = try await DevServer.start(["--seed-room", "big"])
        let user = try CLIUser()
        let path = user.home.appendingPathComponent("huge.png").path
        try Data(Self.png(width: 100, height: 100, size: 12_000_000)).write(to: URL(fileURLWithPath: path))
        let r = try await user.expect(12, ["say", server.baseURL + "/m/big", "hi", "--image", path])
        #expect(r.stderr.contains("huge.png is 12000000 bytes; the server takes chat images of at most 10485760 bytes"), "\(r.stderr)")
        #expect(try CLISayTests.dataLog(server, room: "big").isEmpty)
        #expect(try server.participants(in: "big") == 0)
    }

    @Test func anImageJustUnderTheLimitIsRefusedByTheServersBodyLimit() async throws {
        // 10 MiB - 100 bytes passes the web client's check, but with its multipart framing the
        // request is over Fiber's body limit: the server's plain-text 413 (server.go:219-229).
        let server = try await DevServer.start(["--seed-room", "edge"])
        let user = try CLIUser()
        let path = user.home.appendingPathComponent("edge.png").path
        try Data(Self.png(width: 100, height: 100, size: 10 * 1024 * 1024 - 100)).write(to: URL(fileURLWithPath: path))
        let r = try await user.expect(12, ["say", server.baseURL + "/m/edge", "hi", "--image", path], timeout: 60)
        #expect(r.stderr.contains("(10485660 bytes) as too large (HTTP 413: Request Entity Too Large); it takes chat images of at most 10485760 bytes"), "\(r.stderr)")
        #expect(try CLISayTests.dataLog(server, room: "edge").isEmpty)
    }

    @Test func anImageWiderThanTheServerTakesIsRefused() async throws {
        let user = try CLIUser()
        let path = user.home.appendingPathComponent("wide.png").path
        try Data(Self.png(width: 9000, height: 10, size: 1000)).write(to: URL(fileURLWithPath: path))
        let r = try await user.expect(12, ["say", "http://127.0.0.1:9/m/x", "--image", path])
        #expect(r.stderr.contains("wide.png is 9000×10 pixels; the server takes chat images of at most 8192×8192"), "\(r.stderr)")
    }

    @Test func anUploadToARoomWithoutChatIsForbidden() async throws {
        let server = try await DevServer.start(["--seed-room", "quiet"])
        _ = try server.dev("POST", "/_dev/rooms/quiet/settings", json: ["allowChat": false])
        let user = try CLIUser()
        let path = user.home.appendingPathComponent("chart.png").path
        try Data(Self.png(width: 10, height: 10, size: 600_000)).write(to: URL(fileURLWithPath: path))
        let r = try await user.expect(6, ["say", server.baseURL + "/m/quiet", "--image", path])
        #expect(r.stderr.contains("the server refused the upload of --image") && r.stderr.contains("(HTTP 403: Chat is disabled for this room)"), "\(r.stderr)")
        #expect(try CLISayTests.dataLog(server, room: "quiet").isEmpty)
    }
}

import Foundation

/// Runs `scripts/devserver` for a test on a free port and stops it when released.
/// Reads the lines it prints on stdout (base URL first, then `key=value` lines, then
/// `ready`).
public final class DevServer: @unchecked Sendable {
    // @unchecked: fields are set in init and only read afterwards; the child is its own
    // thread-safe owner.
    public let baseURL: String
    public let caFile: String?
    public let pinSHA256: String?
    public let livekitHost: String?
    public let extraLines: [String]
    /// The running server (its stdout lines, its log on stderr).
    public let process: ChildProcess
    /// A scenario file written for this server, removed when it stops.
    private let ownedFile: URL?

    /// - Parameter arguments: extra devserver flags, e.g. `["--tls"]` or `["--access-ttl", "2s"]`.
    public convenience init(_ arguments: [String] = [], timeout: Double = 30) throws {
        try self.init(arguments, timeout: timeout, owning: nil)
    }

    private init(_ arguments: [String], timeout: Double, owning file: URL?) throws {
        ownedFile = file
        let child = try ChildProcess(
            Repo.root.appendingPathComponent("scripts/devserver"), ["--port", "0", "--log-level", "warning"] + arguments)
        do {
            try child.waitForLine(timeout: timeout, "ready") { $0.trimmingCharacters(in: .whitespaces) == "ready" }
        } catch {
            child.stop()
            if let file { try? FileManager.default.removeItem(at: file) }
            throw TestSupportError("devserver did not become ready: \(error)")
        }
        process = child
        let lines = child.lines().map { $0.trimmingCharacters(in: .whitespaces) }
        baseURL = lines[0]
        func value(_ key: String) -> String? {
            lines.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        }
        caFile = value("ca_file")
        pinSHA256 = value("pin_sha256")
        livekitHost = value("livekit_host")
        extraLines = Array(lines.prefix { $0 != "ready" }) + ["ready"]
    }

    /// Starts one without blocking the cooperative pool.
    public static func start(_ arguments: [String] = [], timeout: Double = 30) async throws -> DevServer {
        try await offPool { try DevServer(arguments, timeout: timeout) }
    }

    /// Starts one playing `samples/scenarios/<name>.scenario`, with `arguments` after it.
    public static func start(scenario name: String, _ arguments: [String] = [], timeout: Double = 30) async throws -> DevServer {
        try await start(scenario: Repo.root.appendingPathComponent("samples/scenarios/\(name).scenario"), arguments, timeout: timeout)
    }

    /// Starts one playing the scenario file at `file` (one a test wrote), with `arguments` after it.
    public static func start(scenario file: URL, _ arguments: [String] = [], timeout: Double = 30) async throws -> DevServer {
        try await start(["--scenario", file.path] + arguments, timeout: timeout)
    }

    /// Starts one playing the scenario `text` (devserver's scenario language, docs/DEVSERVER.md),
    /// written to a temporary file that goes when the server stops.
    public static func start(scenarioText text: String, _ arguments: [String] = [], timeout: Double = 30) async throws -> DevServer {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString).scenario")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return try await offPool { try DevServer(["--scenario", file.path] + arguments, timeout: timeout, owning: file) }
    }

    /// How many participants `/_dev/state` lists in `room` (0 when there is no such room).
    public func participants(in room: String) throws -> Int {
        let state = try dev("GET", "/_dev/state") as? [String: Any] ?? [:]
        let rooms = state["rooms"] as? [[String: Any]] ?? []
        return (rooms.first { $0["name"] as? String == room }?["participants"] as? [Any])?.count ?? 0
    }

    /// Waits until `room` has at least `count` participants.
    public func waitForParticipants(_ count: Int = 1, in room: String, timeout: Double = 30) async throws {
        try await waitUntil("\(count) participant(s) in \(room)", timeout: timeout, every: 0.1) { try participants(in: room) >= count }
    }

    /// The server's log (stderr) so far, for failure messages.
    public var log: String { process.stderr }

    public var port: Int { Int(baseURL.split(separator: ":").last ?? "") ?? 0 }

    /// SIGTERM to its process group, SIGKILL if it has not exited within 5 s; reaped.
    public func stop() {
        process.stop()
        if let ownedFile { try? FileManager.default.removeItem(at: ownedFile) }
    }

    deinit { stop() }

    /// GET/POST on the devserver itself (e.g. `/_dev/state`), returning the parsed JSON.
    /// POSTs `body` as raw bytes to a `/_dev/` path; the JSON answer (also for 4xx).
    public func devBytes(_ path: String, body: [UInt8]) throws -> [String: Any] {
        let hex = body.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        let r = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import sys, urllib.request, ssl
            req = urllib.request.Request(sys.argv[1], method="POST", data=bytes.fromhex(sys.argv[2]), headers={'Content-Type': 'application/octet-stream'})
            try:
                r = urllib.request.urlopen(req, context=ssl._create_unverified_context(), timeout=20); print(r.read().decode())
            except urllib.error.HTTPError as e:
                print(e.read().decode())
            """, baseURL + path, hex], timeout: 30)
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] ?? [:]
    }

    public func dev(_ method: String = "GET", _ path: String, json body: Any? = nil) throws -> Any {
        let curl = URL(fileURLWithPath: "/usr/bin/env")
        var args = ["python3", "-c", """
            import sys, json, urllib.request, ssl
            req = urllib.request.Request(sys.argv[1], method=sys.argv[2], data=(sys.argv[3].encode() if sys.argv[3] else None), headers={'Content-Type': 'application/json'})
            ctx = ssl._create_unverified_context()
            try:
                r = urllib.request.urlopen(req, context=ctx, timeout=20); print(r.read().decode())
            except urllib.error.HTTPError as e:
                print(e.read().decode())
            """, baseURL + path, method]
        if let body {
            args.append(String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self))
        } else {
            args.append("")
        }
        let r = try Subprocess.run(curl, args, timeout: 30)
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8), options: [.fragmentsAllowed])
    }
}

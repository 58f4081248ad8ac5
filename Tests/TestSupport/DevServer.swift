import Foundation

/// Runs `scripts/devserver` for a test on a free port and stops it when released.
/// Reads the lines it prints on stdout (base URL first, then `key=value` lines, then
/// `ready`).
public final class DevServer: @unchecked Sendable {
    // @unchecked: fields are set in init and only read afterwards; the process is
    // terminated once, from stop().
    public let baseURL: String
    public let caFile: String?
    public let pinSHA256: String?
    public let livekitHost: String?
    public let extraLines: [String]
    private let process: Process
    private let stderrPath: String

    /// - Parameter arguments: extra devserver flags, e.g. `["--tls"]` or `["--access-ttl", "2s"]`.
    public init(_ arguments: [String] = [], timeout: Double = 30) throws {
        let p = Process()
        p.executableURL = Repo.root.appendingPathComponent("scripts/devserver")
        p.arguments = ["--port", "0", "--log-level", "warning"] + arguments
        let out = Pipe()
        p.standardOutput = out
        stderrPath = FileManager.default.temporaryDirectory.appendingPathComponent("devserver-\(UUID().uuidString).log").path
        FileManager.default.createFile(atPath: stderrPath, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: stderrPath)
        p.standardInput = FileHandle.nullDevice
        try p.run()
        process = p
        var lines: [String] = []
        var buffer = ""
        let deadline = Date().addingTimeInterval(timeout)
        let handle = out.fileHandleForReading
        while !lines.contains("ready") {
            guard Date() < deadline, p.isRunning else {
                p.terminate()
                let log = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
                throw TestSupportError("devserver did not become ready: \(lines) \(log.suffix(2000))")
            }
            let chunk = handle.availableData
            if chunk.isEmpty { Thread.sleep(forTimeInterval: 0.01); continue }
            buffer += String(decoding: chunk, as: UTF8.self)
            while let nl = buffer.firstIndex(of: "\n") {
                lines.append(String(buffer[..<nl]).trimmingCharacters(in: .whitespaces))
                buffer = String(buffer[buffer.index(after: nl)...])
            }
        }
        // Keep draining stdout so the server never blocks on a full pipe.
        let drain = Thread { while !handle.availableData.isEmpty {} }
        drain.start()
        baseURL = lines[0]
        func value(_ key: String) -> String? {
            lines.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        }
        caFile = value("ca_file")
        pinSHA256 = value("pin_sha256")
        livekitHost = value("livekit_host")
        extraLines = lines
    }

    /// Starts one without blocking the cooperative pool.
    public static func start(_ arguments: [String] = []) async throws -> DevServer {
        try await offPool { try DevServer(arguments) }
    }

    /// The server's log (stderr) so far, for failure messages.
    public var log: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    public var port: Int { Int(baseURL.split(separator: ":").last ?? "") ?? 0 }

    /// SIGTERM, then SIGKILL if it has not exited within 5 s.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: stderrPath)
    }

    /// GET/POST on the devserver itself (e.g. `/_dev/state`), returning the parsed JSON.
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

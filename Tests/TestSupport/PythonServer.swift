import Foundation

/// Runs a Python helper from scripts/ (in the project's .venv) that prints its URL on
/// the first line of stdout, and stops it when released.
public final class PythonServer: @unchecked Sendable {
    // @unchecked: immutable after init; the process is stopped once.
    public let url: String
    private let process: Process
    private let logPath: String

    public init(script: String, arguments: [String] = [], timeout: Double = 20) throws {
        let p = Process()
        p.executableURL = Repo.python
        p.arguments = [Repo.root.appendingPathComponent(script).path] + arguments
        let out = Pipe()
        p.standardOutput = out
        let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("pyserver-\(UUID().uuidString).log").path
        FileManager.default.createFile(atPath: logPath, contents: nil)
        self.logPath = logPath
        p.standardError = FileHandle(forWritingAtPath: logPath)
        p.standardInput = FileHandle.nullDevice
        try p.run()
        process = p
        var text = ""
        let deadline = Date().addingTimeInterval(timeout)
        while !text.contains("\n") {
            guard Date() < deadline, p.isRunning else {
                p.terminate()
                throw TestSupportError("\(script) did not start")
            }
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { Thread.sleep(forTimeInterval: 0.01); continue }
            text += String(decoding: chunk, as: UTF8.self)
        }
        url = String(text.prefix { $0 != "\n" })
        let handle = out.fileHandleForReading
        Thread { while !handle.availableData.isEmpty {} }.start()
    }

    /// What the server wrote on stderr so far (for failure messages).
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts one without blocking the cooperative pool.
    public static func start(script: String, arguments: [String] = []) async throws -> PythonServer {
        try await offPool { try PythonServer(script: script, arguments: arguments) }
    }

    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

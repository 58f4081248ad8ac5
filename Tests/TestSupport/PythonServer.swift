import Foundation

/// Runs a Python helper from scripts/ (in the project's .venv) that prints its URL on
/// the first line of stdout, and stops it (and reaps it) when released.
public final class PythonServer: @unchecked Sendable {
    // @unchecked: immutable after init; the child is its own thread-safe owner.
    public let url: String
    /// The running helper (its output, its exit).
    public let process: ChildProcess

    public init(script: String, arguments: [String] = [], timeout: Double = 20) throws {
        let child = try ChildProcess(Repo.python, ["-u", Repo.root.appendingPathComponent(script).path] + arguments)
        do {
            url = try child.waitForLine(timeout: timeout, "its URL") { _ in true }
        } catch {
            child.stop()
            throw TestSupportError("\(script) did not start: \(error)")
        }
        process = child
    }

    /// What the server wrote on stderr so far (for failure messages).
    public var log: String { process.stderr }

    /// Starts one without blocking the cooperative pool.
    public static func start(script: String, arguments: [String] = []) async throws -> PythonServer {
        try await offPool { try PythonServer(script: script, arguments: arguments) }
    }

    /// SIGTERM to its process group, SIGKILL after 5 s; reaped. Idempotent.
    public func stop() { process.stop() }

    deinit { stop() }
}

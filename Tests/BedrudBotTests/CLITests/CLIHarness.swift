import Foundation
import Testing
import TestSupport

/// A sandboxed user for CLI tests: its own HOME, config and state folders, and the
/// built binary run as a subprocess, as a person would run it.
final class CLIUser: @unchecked Sendable {
    let home: URL
    var extraEnvironment: [String: String] = [:]
    /// Every stdout/stderr the user saw, for the "no secrets in output" checks.
    private(set) var transcript = ""

    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("bedrud-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: home) }

    var configPath: String { home.appendingPathComponent(".config/bedrud-bot/config").path }
    var stateDir: String { home.appendingPathComponent(".local/state/bedrud-bot").path }

    var environment: [String: String] {
        var env = ["HOME": home.path, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "LANG": "C.UTF-8"]
        for (k, v) in extraEnvironment { env[k] = v }
        return env
    }

    @discardableResult
    func run(_ args: [String], stdin: String? = nil, timeout: Double = 60) async throws -> ProcessResult {
        let env = environment
        let r = try await offPool { try Subprocess.run(Repo.binary, args, environment: env, stdin: stdin, timeout: timeout, inheritEnvironment: false) }
        transcript += "$ bedrud-bot \(args.joined(separator: " "))\n\(r.stdout)\(r.stderr)"
        return r
    }

    /// Starts the binary and returns at once, for tests that act while it runs (signals,
    /// a second session); the child is stopped and reaped when released.
    func start(_ args: [String]) throws -> ChildProcess {
        transcript += "$ bedrud-bot \(args.joined(separator: " ")) &\n"
        return try ChildProcess(Repo.binary, args, environment: environment)
    }

    /// Runs and expects exit code `code`; returns the result.
    @discardableResult
    func expect(_ code: Int32, _ args: [String], stdin: String? = nil, timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ProcessResult {
        let r = try await run(args, stdin: stdin, timeout: timeout)
        #expect(r.exitCode == code, "bedrud-bot \(args.joined(separator: " ")) exited \(r.exitCode), wanted \(code)\nstdout: \(r.stdout)\nstderr: \(r.stderr)", sourceLocation: sourceLocation)
        #expect(!r.timedOut, sourceLocation: sourceLocation)
        return r
    }

    func writeFile(_ relative: String, _ text: String, mode: Int = 0o600) throws -> String {
        let url = home.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        chmod(url.path, mode_t(mode))
        return url.path
    }
}

/// Expects every line of every `events.jsonl` under `folder` to match docs/events.schema.json.
func expectValidEvents(_ folder: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let r = try await EventSchema.run([folder])
    #expect(r.exitCode == 0 && !r.timedOut, "events.jsonl does not match docs/events.schema.json:\n\(r.stdout)\(r.stderr)", sourceLocation: sourceLocation)
}

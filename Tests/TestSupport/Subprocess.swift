import Foundation

/// The repository's root folder, found from this file's path.
public enum Repo {
    public static let root: URL = {
        var u = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { u.deleteLastPathComponent() }
        return u
    }()

    /// The built `bedrud-bot` binary of the current test build (debug unless told otherwise).
    public static var binary: URL {
        if let p = ProcessInfo.processInfo.environment["BEDRUD_BOT_BINARY"] { return URL(fileURLWithPath: p) }
        // The test runner lives in .build/<triple>/<config>/ next to the executable.
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for dir in [runner, runner.deletingLastPathComponent()] {
            let candidate = dir.appendingPathComponent("bedrud-bot")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return root.appendingPathComponent(".build/debug/bedrud-bot")
    }

    public static var python: URL { root.appendingPathComponent(".venv/bin/python") }
}

/// The result of running a process to completion.
public struct ProcessResult: Sendable {
    public var exitCode: Int32
    public var stdout: String
    public var stderr: String
    public var timedOut: Bool
}

/// Runs programs for tests: the built CLI as a user would run it, Python helpers, tools.
public enum Subprocess {
    /// Runs `executable` with `arguments` to completion (a `ChildProcess`); after
    /// `timeout` seconds it is stopped (SIGTERM, then SIGKILL) and `timedOut` is set.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
        currentDirectory: URL? = nil, timeout: Double = 60, inheritEnvironment: Bool = true
    ) throws -> ProcessResult {
        var env = inheritEnvironment ? ProcessInfo.processInfo.environment : [:]
        for (k, v) in environment { env[k] = v }
        let child = try ChildProcess(executable, arguments, environment: env, currentDirectory: currentDirectory, stdin: stdin == nil ? .null : .pipe)
        if let stdin {
            child.write(Data(stdin.utf8))
            child.closeInput()
        }
        let (termination, timedOut) = child.finish(timeout: timeout)
        return ProcessResult(exitCode: termination.code, stdout: child.stdout, stderr: child.stderr, timedOut: timedOut)
    }

    /// Runs the `bedrud-bot` binary under test.
    public static func bot(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil, timeout: Double = 60) throws -> ProcessResult {
        try run(Repo.binary, arguments, environment: environment, stdin: stdin, timeout: timeout)
    }
}

/// Runs blocking work (a subprocess, a server start-up) on a thread of its own and
/// awaits it, so tests never tie up Swift's cooperative pool: with two cores it has
/// two threads, and a test blocking one starves every other test's awaits.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
        let t = Thread { c.resume(with: Result { try work() }) }
        t.start()
    }
}

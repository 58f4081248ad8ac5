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
    /// Runs `executable` with `arguments`; kills it after `timeout` seconds.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
        currentDirectory: URL? = nil, timeout: Double = 60, inheritEnvironment: Bool = true
    ) throws -> ProcessResult {
        let p = Process()
        p.executableURL = executable
        p.arguments = arguments
        var env = inheritEnvironment ? ProcessInfo.processInfo.environment : [:]
        for (k, v) in environment { env[k] = v }
        p.environment = env
        if let currentDirectory { p.currentDirectoryURL = currentDirectory }
        let out = Pipe(), err = Pipe(), inp = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = inp
        let outData = DataCollector(out.fileHandleForReading)
        let errData = DataCollector(err.fileHandleForReading)
        try p.run()
        if let stdin { inp.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? inp.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        while p.isRunning {
            if Date() > deadline {
                timedOut = true
                p.terminate()
                Thread.sleep(forTimeInterval: 0.5)
                if p.isRunning { kill(p.processIdentifier, SIGKILL) }
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        p.waitUntilExit()
        return ProcessResult(exitCode: p.terminationStatus, stdout: outData.finish(), stderr: errData.finish(), timedOut: timedOut)
    }

    /// Runs the `bedrud-bot` binary under test.
    public static func bot(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil, timeout: Double = 60) throws -> ProcessResult {
        try run(Repo.binary, arguments, environment: environment, stdin: stdin, timeout: timeout)
    }
}

/// Collects a pipe's output on a background thread so a chatty child never blocks.
final class DataCollector: @unchecked Sendable {
    // @unchecked: `data` is written by the reader thread and read after `done` is signalled.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        let t = Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                data.append(chunk)
            }
            done.signal()
        }
        t.start()
    }

    func finish() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
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

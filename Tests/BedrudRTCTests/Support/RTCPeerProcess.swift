import Foundation

/// One JSON object from the peer.
struct PeerMessage: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: the dictionary is built once from JSON and only read afterwards.
    let json: [String: Any]
    var event: String { json["event"] as? String ?? "" }
    subscript(_ key: String) -> Any? { json[key] }
    var description: String { "\(json)".prefix(300).description }
}

/// The repository root (for scripts/ and .venv/).
let repositoryRoot: URL = {
    var url = URL(fileURLWithPath: #filePath)
    while url.lastPathComponent != "Tests" && url.pathComponents.count > 1 { url.deleteLastPathComponent() }
    return url.deletingLastPathComponent()
}()

/// Runs a peer that speaks JSON lines on stdin/stdout and exchanges them with it:
/// `scripts/rtc_peer.py` (an aiortc peer shaped like LiveKit's subscriber PC) in the
/// project's venv by default, or the pion peer (``PionPeer``).
final class RTCPeerProcess: @unchecked Sendable {
    // @unchecked: the Process and pipes are configured in init; `partial` and `stderrText`
    // are guarded by `lock`; `messages` is itself thread-safe.
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private let lock = NSLock()
    private var partial = Data()
    private var stderrText = ""
    let messages = AsyncLog<PeerMessage>()

    /// The aiortc peer.
    convenience init() throws {
        let python = repositoryRoot.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw PeerProcessError(message: "\(python.path) is missing; run scripts/bootstrap first")
        }
        try self.init(executable: python, arguments: ["-u", repositoryRoot.appendingPathComponent("scripts/rtc_peer.py").path])
    }

    init(executable: URL, arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        output.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            guard let self else { return }
            if d.isEmpty {
                h.readabilityHandler = nil
                self.messages.close()
                return
            }
            self.consume(d)
        }
        errors.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            guard let self else { return }
            if d.isEmpty {
                h.readabilityHandler = nil
                return
            }
            self.lock.lock()
            if self.stderrText.utf8.count < 200_000 { self.stderrText += String(decoding: d, as: UTF8.self) }
            self.lock.unlock()
        }
        try process.run()
    }

    private func consume(_ d: Data) {
        lock.lock()
        partial.append(d)
        var lines: [Data] = []
        while let nl = partial.firstIndex(of: 0x0A) {
            lines.append(partial[partial.startIndex..<nl])
            partial.removeSubrange(partial.startIndex...nl)
        }
        lock.unlock()
        for l in lines {
            if let obj = try? JSONSerialization.jsonObject(with: l) as? [String: Any] {
                messages.append(PeerMessage(json: obj))
            }
        }
    }

    /// Sends one command.
    func send(_ obj: [String: Any]) throws {
        var data = try JSONSerialization.data(withJSONObject: obj)
        data.append(0x0A)
        try input.fileHandleForWriting.write(contentsOf: data)
    }

    /// The first message with `event` (already received or arriving within `timeout` s)
    /// that also satisfies `where`.
    func next(_ event: String, timeout: Double = 30, where extra: @escaping @Sendable (PeerMessage) -> Bool = { _ in true }) async throws -> PeerMessage {
        do {
            return try await messages.first(where: { $0.event == event && extra($0) }, timeout: timeout, "peer event \(event)")
        } catch {
            throw PeerProcessError(message: "\(error); peer stderr tail: \(stderrTail)")
        }
    }

    /// Waits for the next reply with `event` sent after this call (ignores earlier ones).
    func request(_ obj: [String: Any], reply event: String, timeout: Double = 30) async throws -> PeerMessage {
        let seen = messages.count { $0.event == event }
        try send(obj)
        let counter = Counter(skip: seen)
        return try await next(event, timeout: timeout) { _ in counter.take() }
    }

    var stderrTail: String {
        lock.lock()
        defer { lock.unlock() }
        return String(stderrText.suffix(2000))
    }

    func terminate() {
        try? send(["cmd": "close"])
        let deadline = Date(timeIntervalSinceNow: 5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// Lets the first `skip` matches pass by (they were replies to earlier requests).
private final class Counter: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var skip: Int
    init(skip: Int) { self.skip = skip }
    func take() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if skip > 0 {
            skip -= 1
            return false
        }
        return true
    }
}

struct PeerProcessError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

import Foundation
import TestSupport

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
    // @unchecked: immutable after init; `child` and `messages` are themselves thread-safe.
    private let child: ChildProcess
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
        let messages = self.messages
        child = try ChildProcess(executable, arguments, stdin: .pipe) { line in
            if let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] {
                messages.append(PeerMessage(json: obj))
            }
        }
        // The log closes when the peer's stdout ends, so waits fail at once instead of timing out.
        let c = child
        Thread {
            _ = try? c.waitForLine(timeout: 1e9, "end of output") { _ in false }
            messages.close()
        }.start()
    }

    /// Sends one command.
    func send(_ obj: [String: Any]) throws {
        var data = try JSONSerialization.data(withJSONObject: obj)
        data.append(0x0A)
        guard child.write(data) else { throw PeerProcessError(message: "the peer's stdin is closed; stderr tail: \(stderrTail)") }
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

    var stderrTail: String { String(child.stderr.suffix(2000)) }

    /// Asks the peer to close, gives it 5 s to exit by itself, then stops and reaps it.
    func terminate() {
        try? send(["cmd": "close"])
        child.closeInput()
        child.waitForExit(timeout: 5)
        child.stop()
    }

    deinit { child.stop() }
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

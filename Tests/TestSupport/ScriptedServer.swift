#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A tiny TCP server on 127.0.0.1 for tests: each accepted connection is handed to a
/// script running on its own thread. Used to play servers that misbehave on purpose
/// (garbage, resets, silence) — things a real server would not do on request.
public final class ScriptedServer: @unchecked Sendable {
    // @unchecked: `listenFD` is immutable; `stopped` is atomic; connections run on their own threads.
    public let port: UInt16
    private let listenFD: Int32
    private let stopped = Atomic<Bool>(false)
    private let accepted = Atomic<Int>(0)
    private let finished = Atomic<Int>(0)

    /// Starts listening and accepting; `script` runs once per connection.
    public init(script: @escaping @Sendable (ScriptedConnection) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        port = UInt16(bigEndian: addr.sin_port)
        listenFD = fd
        let t = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                let c = accept(fd, nil, nil)
                if c < 0 {
                    if stopped.load(ordering: .relaxed) { return }
                    continue
                }
                accepted.add(1, ordering: .relaxed)
                let conn = ScriptedConnection(fd: c)
                let worker = Thread {
                    script(conn)
                    conn.close()
                    self.finished.add(1, ordering: .releasing)
                }
                worker.start()
            }
        }
        t.start()
    }

    /// `http://127.0.0.1:PORT`
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Connections accepted so far.
    public var connectionCount: Int { accepted.load(ordering: .relaxed) }

    /// Connections whose script has ended and whose socket this side has closed.
    public var closedCount: Int { finished.load(ordering: .acquiring) }

    public func stop() {
        if stopped.exchange(true, ordering: .relaxed) { return }
        Glibc.shutdown(listenFD, Int32(SHUT_RDWR))
        Glibc.close(listenFD)
    }

    deinit { stop() }
}

/// One accepted connection, driven by a test script (blocking calls, 60 s timeouts).
public final class ScriptedConnection: @unchecked Sendable {
    // @unchecked: used only by the one thread running the script.
    let fd: Int32
    private var closed = false
    private var pending: [UInt8] = []

    init(fd: Int32) {
        self.fd = fd
        var tv = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads one HTTP request (head and Content-Length body); nil if the client closed.
    public func readRequest() -> (head: String, body: [UInt8])? {
        while true {
            if let r = findHeadEnd() {
                let head = String(decoding: pending[..<r], as: UTF8.self)
                var length = 0
                for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
                }
                while pending.count < r + length {
                    guard readMore() else { return nil }
                }
                let body = Array(pending[r..<(r + length)])
                pending.removeFirst(r + length)
                return (head, body)
            }
            guard readMore() else { return nil }
        }
    }

    private func findHeadEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for i in 0...(pending.count - 4) where pending[i] == 13 && pending[i + 1] == 10 && pending[i + 2] == 13 && pending[i + 3] == 10 {
            return i + 4
        }
        return nil
    }

    /// Reads whatever is available (blocking up to 60 s); false on EOF or error.
    @discardableResult
    public func readMore() -> Bool {
        var buf = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buf, buf.count, 0)
        guard n > 0 else { return false }
        pending += buf[..<n]
        return true
    }

    /// Bytes received and not yet consumed by `readRequest`.
    public var buffered: [UInt8] { pending }

    public func consume(_ n: Int) { pending.removeFirst(min(n, pending.count)) }

    public func write(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    public func write(_ text: String) { write(Array(text.utf8)) }

    /// Writes a full HTTP response with Content-Length.
    public func respond(status: Int = 200, reason: String = "OK", headers: [(String, String)] = [], body: String) {
        var h = "HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.utf8.count)\r\n"
        for (k, v) in headers { h += "\(k): \(v)\r\n" }
        write(h + "\r\n" + body)
    }

    /// Closes with a TCP reset (RST) instead of an orderly FIN.
    public func reset() {
        var l = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    /// Blocks until the client closes (or 10 s pass) without sending anything.
    public func hang(seconds: Double = 10) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            var buf = [UInt8](repeating: 0, count: 4096)
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 100) > 0 {
                if recv(fd, &buf, buf.count, 0) <= 0 { return }
            }
        }
    }

    public func close() {
        if closed { return }
        closed = true
        Glibc.close(fd)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A connected TCP socket, non-blocking underneath, with poll(2)-based deadlines on
/// every operation. IPv4 and IPv6.
public final class TCPSocket: ByteStream, @unchecked Sendable {
    // @unchecked: `fd` never changes after init; the OS makes concurrent read/write/
    // shutdown on one descriptor safe; `closed` is atomic; shutdown and close of `fd` are
    // serialized by `fdClosed`.
    public let fd: Int32
    public let endpoint: String
    private let closed = Atomic<Bool>(false)

    private init(fd: Int32, endpoint: String) {
        self.fd = fd
        self.endpoint = endpoint
    }

    deinit { close() }

    /// Resolves `host` and connects to the first address that answers, trying each in
    /// turn until `deadline`.
    public static func connect(host: String, port: UInt16, deadline: Deadline) throws -> TCPSocket {
        let endpoint = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let addresses: [SocketAddress]
        do {
            addresses = try Resolver.resolve(host: host, port: port, deadline: deadline)
        } catch {
            throw error
        }
        var lastError = NetworkError(.nameResolutionFailed, endpoint: endpoint, detail: "no address")
        for (i, address) in addresses.enumerated() {
            // Give each remaining address a fair share of what is left, the last one all of it.
            let remaining = Double(deadline.remainingMilliseconds) / 1000
            let share = i == addresses.count - 1 ? remaining : remaining / Double(addresses.count - i)
            do {
                return try connect(address, endpoint: endpoint, deadline: min(deadline, .after(seconds: max(share, 0.5))))
            } catch let error as NetworkError {
                lastError = error
                if error.code == .timedOut && deadline.hasPassed { break }
            }
        }
        throw lastError
    }

    static func connect(_ address: SocketAddress, endpoint: String, deadline: Deadline) throws -> TCPSocket {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw NetworkError(.io, endpoint: endpoint, detail: errnoText()) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = address.storage
        let rc = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
        }
        if rc != 0 && errno != EINPROGRESS {
            let e = errno
            Glibc.close(fd)
            throw connectError(e, endpoint: endpoint)
        }
        if rc != 0 {
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let n = poll(&p, 1, deadline.remainingMilliseconds)
            if n == 0 {
                Glibc.close(fd)
                throw NetworkError(.timedOut, endpoint: endpoint, detail: "connecting")
            }
            var soError: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len)
            if n < 0 || soError != 0 {
                Glibc.close(fd)
                throw connectError(n < 0 ? errno : soError, endpoint: endpoint)
            }
        }
        return TCPSocket(fd: fd, endpoint: endpoint)
    }

    static func connectError(_ e: Int32, endpoint: String) -> NetworkError {
        switch e {
        case ECONNREFUSED: return NetworkError(.connectionRefused, endpoint: endpoint)
        case ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL: return NetworkError(.hostUnreachable, endpoint: endpoint, detail: errnoText(e))
        case ETIMEDOUT: return NetworkError(.timedOut, endpoint: endpoint, detail: "connecting")
        default: return NetworkError(.io, endpoint: endpoint, detail: errnoText(e))
        }
    }

    /// Waits until the socket is readable (`POLLIN`) or writable (`POLLOUT`).
    /// - Returns: false when the deadline passed first.
    func wait(_ events: Int32, deadline: Deadline) throws -> Bool {
        while true {
            if closed.load(ordering: .relaxed) { throw NetworkError(.cancelled, endpoint: endpoint) }
            var p = pollfd(fd: fd, events: Int16(events), revents: 0)
            let n = poll(&p, 1, deadline.remainingMilliseconds)
            if n > 0 { return true }
            if n == 0 { return false }
            if errno == EINTR { continue }
            throw NetworkError(.io, endpoint: endpoint, detail: errnoText())
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n = recv(fd, base, buffer.count, 0)
            if n >= 0 { return n }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                guard try wait(POLLIN, deadline: deadline) else {
                    throw NetworkError(.timedOut, endpoint: endpoint, detail: "waiting for data")
                }
            case EINTR: continue
            case ECONNRESET: throw NetworkError(.connectionReset, endpoint: endpoint)
            default:
                if closed.load(ordering: .relaxed) { throw NetworkError(.cancelled, endpoint: endpoint) }
                throw NetworkError(.io, endpoint: endpoint, detail: errnoText())
            }
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer, deadline: Deadline) throws {
        guard let base = bytes.baseAddress else { return }
        var sent = 0
        while sent < bytes.count {
            let n = send(fd, base + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            if n > 0 {
                sent += n
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                guard try wait(POLLOUT, deadline: deadline) else {
                    throw NetworkError(.timedOut, endpoint: endpoint, detail: "sending")
                }
            case EINTR: continue
            case ECONNRESET, EPIPE: throw NetworkError(.connectionReset, endpoint: endpoint)
            default:
                if closed.load(ordering: .relaxed) { throw NetworkError(.cancelled, endpoint: endpoint) }
                throw NetworkError(.io, endpoint: endpoint, detail: errnoText())
            }
        }
    }

    public func shutdown() {
        closed.store(true, ordering: .relaxed)
        // Never after close(): the number may already be another connection's (a late
        // abort() here once shut down an unrelated TLS connection of the same process).
        fdClosed.withLock { isClosed in if !isClosed { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) } }
    }

    public func close() {
        closed.store(true, ordering: .relaxed)
        // Shut down and close exactly once even if shutdown() ran first; under the lock so
        // a concurrent shutdown() cannot reach a number that has been closed and reused.
        fdClosed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
            _ = Glibc.close(fd)
        }
    }

    /// Whether `fd` has been closed; held while shutting down or closing it.
    private let fdClosed = Mutex<Bool>(false)

    public var isDeadWhenIdle: Bool {
        if closed.load(ordering: .relaxed) { return true }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let n = poll(&p, 1, 0)
        // An idle keep-alive connection is readable only if the server closed it (EOF)
        // or sent something unsolicited; either way it cannot be reused.
        return n != 0
    }
}

func errnoText(_ e: Int32 = errno) -> String {
    String(cString: strerror(e))
}

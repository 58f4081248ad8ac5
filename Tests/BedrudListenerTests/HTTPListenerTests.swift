import BedrudListener
import Foundation
import Synchronization
import Testing

/// `HTTPListener`: serve's open port against hostile clients, over real sockets on
/// 127.0.0.1. Every case answers as HTTP says and leaves the handler untouched.
@Suite struct HTTPListenerTests {
    /// Requests the handler saw.
    final class Seen: Sendable { let count = Atomic<Int>(0) }

    /// A raw client: sends bytes, reads what comes back until the server closes or
    /// `timeout` passes.
    static func exchange(_ port: UInt16, _ bytes: [UInt8], timeout: Double = 5) -> (head: String, closedAfter: Double) {
        guard let fd = connected(port) else { return ("connect failed", 0) }
        defer { close(fd) }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            sent += n
        }
        let start = Date()
        var got: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { break }
            got += buf[..<n]
            if got.count > 65536 { break }
        }
        let head = String(decoding: got.prefix(while: { $0 != 13 }), as: UTF8.self)
        return (head, Date().timeIntervalSince(start))
    }

    /// A TCP socket connected to 127.0.0.1:`port`, or nil.
    static func connected(_ port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard ok == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    static func listener(_ limits: HTTPListener.Limits = .init(), seen: Seen) throws -> HTTPListener {
        try HTTPListener(host: "127.0.0.1", port: 0, limits: limits) { request in
            seen.count.add(1, ordering: .relaxed)
            return HTTPServerResponse(status: 200, text: "\(request.method) \(request.path) \(request.body.count) \(request.header("X-Test") ?? "-")")
        }
    }

    @Test func anOrdinaryRequestReachesTheHandlerWithItsBodyAndHeaders() throws {
        let seen = Seen()
        let l = try Self.listener(seen: seen)
        defer { l.stop() }
        let r = Self.exchange(l.port, Array("POST /bedrud/webhook HTTP/1.1\r\nHost: x\r\nX-Test: yes\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello".utf8))
        #expect(r.head == "HTTP/1.1 200 OK")
        #expect(seen.count.load(ordering: .relaxed) == 1)
    }

    @Test func aDeclaredHundredMegabyteBodyIs413BeforeItIsRead() throws {
        let seen = Seen()
        let l = try Self.listener(seen: seen)
        defer { l.stop() }
        let r = Self.exchange(l.port, Array("POST /bedrud/webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n".utf8))
        #expect(r.head.hasPrefix("HTTP/1.1 413"), "\(r.head)")
        #expect(seen.count.load(ordering: .relaxed) == 0)
        #expect(l.refusedTooLarge.load(ordering: .relaxed) == 1)
    }

    @Test func aChunkedBodyPastTheCapClosesTheConnection() throws {
        let seen = Seen()
        let l = try Self.listener(seen: seen)
        defer { l.stop() }
        var body = Array("POST /bedrud/webhook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for _ in 0..<3 { body += Array("10000\r\n".utf8) + [UInt8](repeating: 97, count: 65536) + Array("\r\n".utf8) }
        body += Array("0\r\n\r\n".utf8)
        let r = Self.exchange(l.port, body)
        #expect(!r.head.hasPrefix("HTTP/1.1 200"), "\(r.head)")
        #expect(seen.count.load(ordering: .relaxed) == 0)
    }

    @Test func tenThousandHeadersAre431() throws {
        let seen = Seen()
        let l = try Self.listener(seen: seen)
        defer { l.stop() }
        var req = "POST /bedrud/webhook HTTP/1.1\r\nHost: x\r\n"
        for i in 0..<10_000 { req += "X-H\(i): v\r\n" }
        let r = Self.exchange(l.port, Array((req + "Content-Length: 0\r\n\r\n").utf8))
        #expect(r.head == "HTTP/1.1 431 Request Header Fields Too Large", "\(r.head)")
        #expect(seen.count.load(ordering: .relaxed) == 0)
    }

    @Test func aClientThatNeverFinishesItsHeadersIsClosedAfterTheIdleTimeout() throws {
        let seen = Seen()
        var limits = HTTPListener.Limits()
        limits.idleTimeoutSeconds = 1
        let l = try Self.listener(limits, seen: seen)
        defer { l.stop() }
        let r = Self.exchange(l.port, Array("POST /bedrud/webhook HTTP/1.1\r\nHost: x\r\n".utf8), timeout: 10)
        #expect(r.closedAfter < 5, "closed after \(r.closedAfter) s")
        #expect(seen.count.load(ordering: .relaxed) == 0)
    }

    @Test func connectionsPastThePerAddressLimitAreNotServed() throws {
        let seen = Seen()
        var limits = HTTPListener.Limits()
        limits.maxConnectionsPerAddress = 4
        let l = try Self.listener(limits, seen: seen)
        defer { l.stop() }
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<4 { if let fd = Self.connected(l.port) { held.append(fd) } }
        #expect(held.count == 4)
        usleep(200_000)  // the library accepts the four
        let fifth = Self.exchange(l.port, Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        #expect(fifth.head == "", "a fifth connection from the same address is closed unanswered: \(fifth.head)")
        for fd in held { close(fd) }
        held = []
        usleep(200_000)
        let later = Self.exchange(l.port, Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        #expect(later.head == "HTTP/1.1 200 OK", "served again once they are gone: \(later.head)")
    }
}

import BedrudProtocol
import Foundation

/// Turns ``ICEServer`` URLs into IP literals for libnice. IP literals pass through; host
/// names are resolved with `getaddrinfo` on a short-lived thread (it blocks), with a
/// deadline after which that server is skipped.
enum ICEServerResolver {
    static func resolve(_ servers: [ICEServer], timeoutSeconds: Double = 5) async -> [ResolvedICEServer] {
        let log = Logger("rtc.ice")
        var out: [ResolvedICEServer] = []
        for server in servers {
            for text in server.urls {
                let url: ICEServerURL
                do {
                    url = try ICEServerURL(parsing: text)
                } catch {
                    log.warning(error.description)
                    continue
                }
                if url.scheme == .stuns {
                    log.info("STUN over TLS (\(url)) is not supported by libnice; skipped")
                    continue
                }
                let ip: String?
                if ICECandidate.isIPAddress(url.host) {
                    ip = url.host
                } else {
                    ip = await lookup(url.host, timeoutSeconds: timeoutSeconds)
                }
                guard let ip else {
                    log.warning("ICE server \(url) could not be resolved; skipped")
                    continue
                }
                out.append(ResolvedICEServer(url: url, ip: ip, username: server.username, credential: server.credential))
            }
        }
        return out
    }

    /// The first IPv4 (else IPv6) address of `host`, or nil on failure or timeout.
    static func lookup(_ host: String, timeoutSeconds: Double) async -> String? {
        let once = ResumeOnce()
        return await withCheckedContinuation { (c: CheckedContinuation<String?, Never>) in
            once.set(c)
            let t = Thread {
                once.resume(getAddress(host))
            }
            t.start()
            let deadline = DispatchTime.now() + timeoutSeconds
            DispatchQueue.global().asyncAfter(deadline: deadline) { once.resume(nil) }
        }
    }

    private static func getAddress(_ host: String) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var res: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &res) == 0, let first = res else { return nil }
        defer { freeaddrinfo(first) }
        var v4: String?, v6: String?
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let ai = p {
            var buf = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            if ai.pointee.ai_family == AF_INET, v4 == nil, let sa = ai.pointee.ai_addr {
                sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var a = sin.pointee.sin_addr
                    if inet_ntop(AF_INET, &a, &buf, socklen_t(buf.count)) != nil { v4 = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } }
                }
            } else if ai.pointee.ai_family == AF_INET6, v6 == nil, let sa = ai.pointee.ai_addr {
                sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin in
                    var a = sin.pointee.sin6_addr
                    if inet_ntop(AF_INET6, &a, &buf, socklen_t(buf.count)) != nil { v6 = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } }
                }
            }
            p = ai.pointee.ai_next
        }
        return v4 ?? v6
    }
}

/// Resumes a continuation exactly once, whichever of the lookup or the deadline comes first.
private final class ResumeOnce: @unchecked Sendable {
    // @unchecked: all state is guarded by `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<String?, Never>?
    private var pending: String??

    func set(_ c: CheckedContinuation<String?, Never>) {
        lock.lock()
        if let p = pending {
            lock.unlock()
            c.resume(returning: p)
            return
        }
        continuation = c
        lock.unlock()
    }

    func resume(_ value: String?) {
        lock.lock()
        if let c = continuation {
            continuation = nil
            pending = .some(nil)  // mark done
            lock.unlock()
            c.resume(returning: value)
            return
        }
        if pending == nil { pending = .some(value) }
        lock.unlock()
    }
}

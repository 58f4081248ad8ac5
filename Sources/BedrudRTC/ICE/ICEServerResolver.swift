import BedrudProtocol
import BedrudRuntime
import Dispatch
import FoundationEssentials
import Glibc

/// Turns ``ICEServer`` URLs into IP literals for libnice. IP literals pass through; host
/// names are resolved with `getaddrinfo` (which blocks) on short-lived threads, all at
/// once, under one deadline for the lot: a name that misses it is left out of this
/// agent, so it cannot hold up the first answer. LiveKit always hands out `ice_servers`
/// (public STUN names when nothing is configured) and fails a negotiation after 15 s;
/// resolving them one after another, 5 s each, could pass that. Host candidates need
/// no server, so the answer goes out with them; a late lookup's result is kept for the
/// next connection (the publisher PC, a reconnect).
enum ICEServerResolver {
    /// The one deadline for all lookups of a ``resolve(_:timeoutSeconds:lookup:)`` call.
    static let defaultTimeoutSeconds = 2.0

    /// Blocking name lookup: the first IPv4 (else IPv6) address, or nil.
    typealias Lookup = @Sendable (String) -> String?

    static func resolve(
        _ servers: [ICEServer], timeoutSeconds: Double = defaultTimeoutSeconds, lookup: @escaping Lookup = { getAddress($0) }
    ) async -> [ResolvedICEServer] {
        let log = Logger("rtc.ice")
        var parsed: [(url: ICEServerURL, server: ICEServer)] = []
        for server in servers {
            for text in server.urls {
                do {
                    let url = try ICEServerURL(parsing: text)
                    if url.scheme == .stuns {
                        log.info("STUN over TLS (\(url)) is not supported by libnice; skipped")
                        continue
                    }
                    parsed.append((url, server))
                } catch {
                    log.warning(error.description)
                }
            }
        }
        var names: [String] = []
        for (url, _) in parsed where !ICECandidate.isIPAddress(url.host) && !names.contains(url.host) { names.append(url.host) }
        let addresses = await lookupAll(names, timeoutSeconds: timeoutSeconds, lookup: lookup)
        var out: [ResolvedICEServer] = []
        for (url, server) in parsed {
            guard let ip = ICECandidate.isIPAddress(url.host) ? url.host : addresses[url.host] else {
                log.warning("ICE server \(url) could not be resolved within \(timeoutSeconds) s; skipped for this connection")
                continue
            }
            out.append(ResolvedICEServer(url: url, ip: ip, username: server.username, credential: server.credential))
        }
        return out
    }

    /// Looks up every name at once; returns what is known when all have answered or the
    /// deadline passes, whichever is first. Answers (late ones too) go into ``cache``.
    static func lookupAll(_ names: [String], timeoutSeconds: Double, lookup: @escaping Lookup) async -> [String: String] {
        var known: [String: String] = [:]
        var missing: [String] = []
        for n in names {
            if let ip = cache.get(n) { known[n] = ip } else { missing.append(n) }
        }
        guard !missing.isEmpty else { return known }
        let gather = Gather(expecting: missing.count)
        let found: [String: String] = await withCheckedContinuation { (c: CheckedContinuation<[String: String], Never>) in
            gather.set(c)
            for name in missing {
                OSThread.start(name: "bedrud-ice-dns") {
                    let ip = lookup(name)
                    if let ip { cache.put(name, ip) }
                    gather.answer(name, ip)
                }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeoutSeconds) { gather.finish() }
        }
        return known.merging(found) { a, _ in a }
    }

    /// Resolved names, kept for `cacheSeconds` (a TURN name LiveKit hands out stays the same
    /// for the session; DNS TTLs are rarely shorter).
    static let cache = AddressCache(cacheSeconds: 300)

    /// `getaddrinfo`: the first IPv4 (else IPv6) address of `host`, or nil. Blocks.
    static func getAddress(_ host: String) -> String? {
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

/// Collects lookup answers and resumes the waiting continuation exactly once: when every
/// name has answered or at the deadline, whichever comes first.
private final class Gather: @unchecked Sendable {
    // @unchecked: all state is guarded by `lock`.
    private let lock = PosixLock()
    private var continuation: CheckedContinuation<[String: String], Never>?
    private var found: [String: String] = [:]
    private var left: Int
    private var done = false

    init(expecting n: Int) { left = n }

    func set(_ c: CheckedContinuation<[String: String], Never>) {
        lock.lock()
        continuation = c
        lock.unlock()
    }

    func answer(_ name: String, _ ip: String?) {
        lock.lock()
        if let ip { found[name] = ip }
        left -= 1
        let finished = left == 0
        lock.unlock()
        if finished { finish() }
    }

    func finish() {
        lock.lock()
        guard !done, let c = continuation else {
            lock.unlock()
            return
        }
        done = true
        continuation = nil
        let result = found
        lock.unlock()
        c.resume(returning: result)
    }
}

/// Name → address with an expiry; thread-safe.
final class AddressCache: @unchecked Sendable {
    // @unchecked: all state is guarded by `lock`.
    private let lock = PosixLock()
    private var entries: [String: (ip: String, until: Date)] = [:]
    private let cacheSeconds: Double

    init(cacheSeconds: Double) { self.cacheSeconds = cacheSeconds }

    func get(_ name: String) -> String? {
        lock.lock()
        defer { lock.unlock() }
        guard let e = entries[name], e.until > Date() else { return nil }
        return e.ip
    }

    func put(_ name: String, _ ip: String) {
        lock.lock()
        if entries.count > 64 { entries = entries.filter { $0.value.until > Date() } }
        entries[name] = (ip, Date(timeIntervalSinceNow: cacheSeconds))
        lock.unlock()
    }

    func removeAll() {
        lock.lock()
        entries = [:]
        lock.unlock()
    }
}

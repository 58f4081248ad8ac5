import Foundation
import Testing
import TestSupport
@testable import BedrudRTC

/// ICE server names are resolved all at once under one short deadline, so names that
/// never resolve cannot hold up the first answer (LiveKit fails a negotiation after
/// 15 s). Lookups are injected: no test here touches DNS.
@Suite("ICE server resolution")
struct ICEServerResolverTests {
    /// A lookup that answers `answers` after `delay` seconds and never answers the rest.
    final class FakeDNS: @unchecked Sendable {
        // @unchecked: guarded by `lock`; `hang` is only waited on.
        private let lock = NSLock()
        private(set) var asked: [String] = []
        let answers: [String: String]
        let delay: Double
        let hang = DispatchSemaphore(value: 0)
        /// With a barrier, each lookup waits (up to 5 s) until this many are in flight at once.
        let barrier: Int
        private var inFlight = 0
        /// The most lookups that were in flight at the same time.
        private(set) var maxInFlight = 0
        init(_ answers: [String: String], delay: Double = 0, barrier: Int = 0) {
            self.answers = answers
            self.delay = delay
            self.barrier = barrier
        }
        func lookup(_ name: String) -> String? {
            lock.lock()
            asked.append(name)
            inFlight += 1
            maxInFlight = max(maxInFlight, inFlight)
            lock.unlock()
            defer { lock.lock(); inFlight -= 1; lock.unlock() }
            let until = Date().addingTimeInterval(5)
            while barrier > 0, lock.withLock({ maxInFlight < barrier }), Date() < until { usleep(1000) }
            guard let ip = answers[name] else {
                _ = hang.wait(timeout: .now() + 30)  // "unresolvable": the lookup just hangs
                return nil
            }
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            return ip
        }
        /// Lets hanging lookups end (so their threads do not outlive the test).
        func release() { for _ in 0..<8 { hang.signal() } }
    }

    static func unique(_ s: String) -> String { "\(s)-\(UUID().uuidString.prefix(8)).test" }

    @Test("Two unresolvable stun: names cost one short deadline, not a join; the rest is kept")
    func unresolvableNamesDoNotHoldUpTheAnswer() async {
        let slow1 = Self.unique("stun1"), slow2 = Self.unique("stun2"), turn = Self.unique("turn")
        let dns = FakeDNS([turn: "192.0.2.10"])
        defer { dns.release() }
        let servers = [
            ICEServer(urls: ["stun:\(slow1):19302", "stun:\(slow2):19302"]),
            ICEServer(urls: ["turn:\(turn):3478?transport=udp", "turns:\(turn):443?transport=tcp"], username: "u", credential: "c"),
            ICEServer(urls: ["stun:127.0.0.1:3478"]),
        ]
        let start = Date()
        let resolved = await ICEServerResolver.resolve(servers, timeoutSeconds: 0.5) { dns.lookup($0) }
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed < 2, "took \(elapsed) s")
        #expect(elapsed >= 0.45, "returned before the deadline although two names had not answered")
        #expect(resolved.map(\.ip) == ["192.0.2.10", "192.0.2.10", "127.0.0.1"])
        #expect(resolved.map { "\($0.url.scheme)" } == ["turn", "turns", "stun"])
        // One lookup per distinct name, all started at once.
        #expect(Set(dns.asked) == [slow1, slow2, turn] && dns.asked.count == 3)
    }

    @Test("Lookups run in parallel, and the call returns as soon as all answered, not at its deadline")
    func parallel() async {
        let names = (0..<3).map { Self.unique("n\($0)") }
        // Each lookup answers only once all three are in flight together: made one after
        // another, the first would wait 5 s alone.
        let dns = FakeDNS(Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, "192.0.2.\($0 + 1)") }), barrier: 3)
        let start = Date()
        let resolved = await ICEServerResolver.resolve([ICEServer(urls: names.map { "stun:\($0)" })], timeoutSeconds: 60) { dns.lookup($0) }
        let elapsed = Date().timeIntervalSince(start)
        #expect(resolved.map(\.ip) == ["192.0.2.1", "192.0.2.2", "192.0.2.3"])
        #expect(dns.maxInFlight == 3, "lookups were not all in flight at once")
        #expect(elapsed < 30, "waited for the 60 s deadline although every name had answered (\(elapsed) s)")
    }

    @Test("A name that answers after the deadline is used by the next connection without waiting")
    func lateAnswersAreKept() async throws {
        let late = Self.unique("late")
        let dns = FakeDNS([late: "192.0.2.99"], delay: 0.4)
        let first = await ICEServerResolver.resolve([ICEServer(urls: ["stun:\(late)"])], timeoutSeconds: 0.1) { dns.lookup($0) }
        #expect(first.isEmpty)
        // Wait (with a deadline) for the late answer to land in the cache.
        try await waitUntil("the late answer in the cache", timeout: 5, every: 0.02) { ICEServerResolver.cache.get(late) != nil }
        let start = Date()
        let second = await ICEServerResolver.resolve([ICEServer(urls: ["stun:\(late)"])], timeoutSeconds: 0.1) { dns.lookup($0) }
        #expect(second.map(\.ip) == ["192.0.2.99"])
        #expect(Date().timeIntervalSince(start) < 0.05)
        #expect(dns.asked == [late], "asked again although the answer was cached")
    }

    @Test("IP literals and bad URLs need no lookup: the call returns at once")
    func literalsOnly() async {
        let dns = FakeDNS([:])
        let start = Date()
        let resolved = await ICEServerResolver.resolve([ICEServer(urls: ["stun:127.0.0.1:3478", "turn:[::1]:3478", "bogus", "stuns:127.0.0.1:5349"])], timeoutSeconds: 5) { dns.lookup($0) }
        #expect(resolved.map(\.ip) == ["127.0.0.1", "::1"])
        #expect(dns.asked.isEmpty && Date().timeIntervalSince(start) < 0.5)
    }
}

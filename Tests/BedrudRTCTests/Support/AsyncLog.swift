import Foundation

/// A thread-safe append-only log that tests wait on with a deadline: `first(where:)`
/// looks at what is already there, then waits for new entries until `timeout`.
final class AsyncLog<Element: Sendable>: @unchecked Sendable {
    // @unchecked: all state is guarded by `lock`.
    private let lock = NSLock()
    private var items: [Element] = []
    private var waiters: [(id: Int, predicate: (Element) -> Bool, continuation: CheckedContinuation<Element, any Error>)] = []
    private var nextID = 0
    private var closed = false

    func append(_ e: Element) {
        lock.lock()
        items.append(e)
        var ready: [(CheckedContinuation<Element, any Error>)] = []
        waiters.removeAll { w in
            if w.predicate(e) {
                ready.append(w.continuation)
                return true
            }
            return false
        }
        lock.unlock()
        for c in ready { c.resume(returning: e) }
    }

    /// Ends waiting: pending and later waits fail at once.
    func close() {
        lock.lock()
        closed = true
        let w = waiters
        waiters.removeAll()
        lock.unlock()
        for x in w { x.continuation.resume(throwing: TestTimeout(what: "log closed")) }
    }

    var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }

    func count(where p: (Element) -> Bool) -> Int { all.filter(p).count }

    /// The first entry (old or new) matching `predicate`, or a ``TestTimeout`` after `timeout` seconds.
    func first(where predicate: @escaping @Sendable (Element) -> Bool, timeout: Double, _ what: String = "event") async throws -> Element {
        try await withCheckedThrowingContinuation { c in
            register(predicate, c, timeout: timeout, what: what)
        }
    }

    private func register(_ predicate: @escaping @Sendable (Element) -> Bool, _ c: CheckedContinuation<Element, any Error>, timeout: Double, what: String) {
        lock.lock()
        if let hit = items.first(where: predicate) {
            lock.unlock()
            c.resume(returning: hit)
            return
        }
        if closed {
            lock.unlock()
            c.resume(throwing: TestTimeout(what: what + " (log closed)"))
            return
        }
        let id = nextID
        nextID += 1
        waiters.append((id, predicate, c))
        lock.unlock()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
            lock.lock()
            let i = waiters.firstIndex { $0.id == id }
            let w = i.map { waiters.remove(at: $0) }
            lock.unlock()
            w?.continuation.resume(throwing: TestTimeout(what: what))
        }
    }
}

struct TestTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}


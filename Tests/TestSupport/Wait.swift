import Foundation

/// The one way tests wait for state they can only observe from outside (a server's
/// `/_dev/state` counter, a file, another component's counter): checks `probe` every
/// `interval` seconds until it returns a value, and throws, naming `what`, once `timeout`
/// seconds have passed. A probe that throws is tried again (the last error is reported),
/// except with `WaitAbandoned`, which ends the wait at once (the process being watched
/// has exited). Use it instead of sleeping for a guessed time or a loop with a deadline.
@discardableResult
public func waitFor<T: Sendable>(
    _ what: String, timeout: Double, every interval: Double = 0.05, _ probe: () async throws -> T?
) async throws -> T {
    let deadline = Date().addingTimeInterval(timeout)
    var lastError: (any Error)?
    while true {
        do {
            if let value = try await probe() { return value }
        } catch let abandoned as WaitAbandoned {
            throw TestSupportError("\(what) will not happen: \(abandoned.reason)")
        } catch {
            lastError = error
        }
        guard Date() < deadline else {
            throw TestSupportError("\(what) did not happen within \(timeout) s" + (lastError.map { "; last error: \($0)" } ?? ""))
        }
        try await Task.sleep(for: .seconds(interval))
    }
}

/// Thrown by a `waitFor` probe when what it waits for can no longer happen.
public struct WaitAbandoned: Error {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
}

/// `waitFor` for a condition.
public func waitUntil(_ what: String, timeout: Double, every interval: Double = 0.05, _ condition: () async throws -> Bool) async throws {
    try await waitFor(what, timeout: timeout, every: interval) { try await condition() ? true : nil }
}

/// Waits until the wall clock has passed `unixSeconds` (e.g. a token's `exp`, read from
/// the token), and throws if that is more than `atMost` seconds away: the event is the
/// clock reaching that instant, so this is the one place a test may sleep for a time.
public func waitUntilWallClock(passes unixSeconds: Double, atMost: Double = 60) async throws {
    let wait = unixSeconds - Date().timeIntervalSince1970
    guard wait <= atMost else { throw TestSupportError("\(unixSeconds) is \(wait) s away, more than \(atMost) s") }
    // Strictly past it, as a server comparing `now > exp` must see it.
    let target = unixSeconds + 0.05
    while Date().timeIntervalSince1970 <= target {
        try await Task.sleep(for: .seconds(max(0.01, target - Date().timeIntervalSince1970)))
    }
}

/// `waitUntil` for synchronous code (a callback on a data-plane thread, a test body that
/// must not suspend): blocks the calling thread between checks. A name of its own and
/// `noasync`: as an overload of `waitUntil`, a trailing synchronous closure chose it in async
/// tests, whose blocked threads were the cooperative pool's (two on two cores), so another
/// test's room could not move until the wait ran out.
@available(*, noasync, message: "use waitUntil, which suspends instead of blocking a pool thread")
public func waitUntilBlocking(_ what: String, timeout: Double, every interval: Double = 0.002, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { throw TestSupportError("\(what) did not happen within \(timeout) s") }
        usleep(useconds_t(interval * 1_000_000))
    }
}

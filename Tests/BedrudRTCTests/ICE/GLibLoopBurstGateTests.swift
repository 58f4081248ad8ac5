import Testing
@testable import BedrudRTC

/// When the network loop waits after a wake-up so that one wake-up takes a burst of
/// datagrams (``BurstGate``): a transcript of wake-ups and datagram counts, in 100 ms
/// windows, against ``GLibLoop/burstRate`` (150 a second).
@Suite struct BurstGateTests {
    static let ms: UInt64 = 1_000_000

    /// Feeds `perWindow` datagrams spread over wake-ups every 20 ms for `windows` windows
    /// from `start`; returns the decisions of the wake-ups after the first window closed.
    static func run(_ gate: BurstGate, from start: UInt64, windows: Int, perWindow: Int) -> [Bool] {
        var decisions: [Bool] = []
        let wakes = 5  // per 100 ms
        for w in 0..<windows {
            for k in 0..<wakes {
                let d = gate.waitNow(at: start + UInt64(w) * 100 * ms + UInt64(k) * 20 * ms)
                if w > 0 { decisions.append(d) }
                gate.datagrams += perWindow / wakes
            }
        }
        return decisions
    }

    @Test func oneTrackNeverWaitsAndARoomDoes() {
        // One track: 50 datagrams a second, 5 per window: the wait would only add a sleep.
        #expect(Self.run(BurstGate(), from: 1_000 * Self.ms, windows: 4, perWindow: 5).allSatisfy { !$0 })
        // Two tracks, 100 a second: still below.
        #expect(Self.run(BurstGate(), from: 1_000 * Self.ms, windows: 4, perWindow: 10).allSatisfy { !$0 })
        // Four tracks, 200 a second: waits from the first full window on.
        #expect(Self.run(BurstGate(), from: 1_000 * Self.ms, windows: 4, perWindow: 20).allSatisfy { $0 })
    }

    @Test func aRoomThatFallsQuietStopsWaiting() {
        let gate = BurstGate()
        #expect(Self.run(gate, from: 1_000 * Self.ms, windows: 3, perWindow: 80).allSatisfy { $0 })
        // Everyone left: the next wake-up, 2 s later, closes a 2 s window of 16 datagrams
        // (the last burst's), 8 a second.
        gate.datagrams = 16
        #expect(!gate.waitNow(at: 3_300 * Self.ms))
        // Until the window closes the decision holds, whatever comes in.
        gate.datagrams = 1_000
        #expect(!gate.waitNow(at: 3_350 * Self.ms))
        #expect(gate.waitNow(at: 3_400 * Self.ms))
    }
}

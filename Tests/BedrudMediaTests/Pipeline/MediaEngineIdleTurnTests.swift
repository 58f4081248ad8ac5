import Testing
@testable import BedrudMedia

/// How often the media thread takes a turn when nothing arrives: what an idle room costs.
@Suite("Idle turns")
struct MediaEngineIdleTurnTests {
    @Test("An empty room takes a turn a second; a participant who is present but silent brings back the 250 ms turn, and leaving ends it")
    func emptyRoomTurnsOnceASecond() {
        let rec = VirtualRecording()
        let t0 = VirtualRecording.origin
        #expect(rec.engine.nextDueNanos(now: t0) == t0 + 1_000_000_000)
        _ = rec.add("alice", at: t0)
        rec.engine.process(now: t0)
        #expect(rec.engine.nextDueNanos(now: t0) == t0 + 250_000_000)
        let t1 = t0 + 2_000_000_000
        rec.engine.apply(.participantLeft(identity: "alice"), now: t1)
        rec.engine.process(now: t1)
        #expect(rec.engine.nextDueNanos(now: t1) == t1 + 1_000_000_000)
    }
}

import BedrudProtocol
import Testing
import TestSupport

@testable import BedrudMedia

@Suite struct JitterBufferTests {
    /// Inserts (seq, arrival ms) pairs and releases at each arrival; returns the
    /// sequence of outputs as numbers (negative = that many lost). The numbers are
    /// unwrapped as the engine does (`RTPCounterUnwrapper`) and shown without its
    /// first modulus, so 65535 is followed by 65536.
    func run(_ input: [(UInt16, UInt64)], wait: UInt64 = 60, until: UInt64 = 10_000, capacity: Int = 64) -> [Int64] {
        var jb = JitterBuffer(capacity: capacity, waitNanos: wait * 1_000_000)
        var sequences = RTPCounterUnwrapper.sequenceNumbers()
        var timestamps = RTPCounterUnwrapper.timestamps()
        var out: [Int64] = []
        let payload: [UInt8] = [0xF8, 0x01]
        func take(_ o: JitterOutput) {
            switch o {
            case .packet(let p, let bytes):
                #expect(Array(bytes) == payload)
                out.append(p.sequence - 0x1_0000)
            case .lost(let n): out.append(-Int64(n))
            }
        }
        for (seq, ms) in input {
            let now = ms * 1_000_000
            jb.release(now: now, take)
            let ts = timestamps.unwrap(UInt32(seq) &* 960)
            let unwrapped = sequences.unwrap(UInt32(seq))
            while case .needsRoom = payload.withUnsafeBytes({
                jb.insert(sequence: unwrapped, timestamp: ts, arrivalNanos: now, ssrc: 1, payload: $0)
            }) { jb.forceReleaseOne(take) }
            jb.release(now: now, take)
        }
        jb.release(now: until * 1_000_000, take)
        return out
    }

    @Test func reordersWithinTheWait() {
        #expect(run([(1, 0), (3, 20), (2, 30), (4, 60)]) == [1, 2, 3, 4])
    }

    @Test func dropsDuplicatesAndLatePackets() {
        var jb = JitterBuffer(waitNanos: 0)
        let p: [UInt8] = [1]
        _ = p.withUnsafeBytes { jb.insert(sequence: 5, timestamp: 0, arrivalNanos: 0, ssrc: 1, payload: $0) }
        #expect(p.withUnsafeBytes { jb.insert(sequence: 5, timestamp: 0, arrivalNanos: 0, ssrc: 1, payload: $0) } == .duplicate)
        jb.release(now: 0) { _ in }
        #expect(p.withUnsafeBytes { jb.insert(sequence: 5, timestamp: 0, arrivalNanos: 0, ssrc: 1, payload: $0) } == .late)
        #expect(jb.duplicates == 1 && jb.late == 1)
    }

    @Test func declaresLossOnlyAfterTheWait() {
        // 2 never comes; 3 arrives at 20 ms; the hole is given up at 80 ms.
        var jb = JitterBuffer(waitNanos: 60_000_000)
        var out: [String] = []
        let p: [UInt8] = [1]
        for (s, t) in [(UInt16(1), UInt64(0)), (3, 20)] {
            _ = p.withUnsafeBytes { jb.insert(sequence: Int64(s), timestamp: Int64(s) * 960, arrivalNanos: t * 1_000_000, ssrc: 1, payload: $0) }
        }
        jb.release(now: 79_000_000) { o in if case .packet(let q, _) = o { out.append("p\(q.sequence)") } else { out.append("lost") } }
        #expect(out == ["p1"])
        jb.release(now: 80_000_000) { o in if case .packet(let q, _) = o { out.append("p\(q.sequence)") } else { out.append("lost") } }
        #expect(out == ["p1", "lost", "p3"])
    }

    @Test func unwrapsSequenceNumbers() {
        let out = run([(65534, 0), (65535, 20), (1, 40), (0, 45), (2, 60)])
        #expect(out == [65534, 65535, 65536, 65537, 65538])
    }

    @Test func counterUnwrapperHandles32BitTimestamps() {
        var u = RTPCounterUnwrapper.timestamps()
        let m = Int64(1) << 32  // the first value is the counter plus one modulus
        #expect(u.unwrap(UInt32.max - 959) == m + Int64(UInt32.max) - 959)
        #expect(u.unwrap(0) == m + Int64(UInt32.max) + 1)
        #expect(u.unwrap(UInt32.max) == m + Int64(UInt32.max))  // a late packet from before the wrap
        #expect(u.unwrap(960) == m + Int64(UInt32.max) + 961)
    }

    /// The one loss count: a jump too far ahead to wait for (nothing held) is handed on
    /// as `.lost` of exactly the skipped numbers, right before the packet behind it, as a
    /// hole given up after the wait is.
    @Test func aJumpAheadIsHandedOnAsLostBeforeThePacket() {
        let out = run([(1, 0), (2, 20), (200, 40), (201, 60), (203, 80), (204, 100)])
        #expect(out == [1, 2, -197, 200, 201, -1, 203, 204])
    }

    @Test func forcesReleaseWhenFull() {
        // With 8 slots, packet 20 cannot wait behind the hole at 2.
        let out = run([(1, 0)] + (3...20).map { (UInt16($0), UInt64($0) * 2) }, wait: 10_000, capacity: 8)
        #expect(out.first == 1)
        #expect(out.contains(-1))
        #expect(Array(out.filter { $0 > 0 }) == [1] + (3...20).map { Int64($0) })
    }

    @Test func seededRandomInputNeverLosesOrderOrCrashes() {
        var rng = SplitMix(seed: 42)
        var input: [(UInt16, UInt64)] = []
        var seq: UInt16 = 65000
        for i in 0..<3000 {
            let r = rng.next() % 100
            if r < 5 { seq &+= 1; continue }  // lost
            let jitter = rng.next() % 40
            input.append((seq, UInt64(i) * 20 + jitter))
            if r > 95 { input.append((seq, UInt64(i) * 20 + jitter + 3)) }  // duplicate
            seq &+= 1
        }
        input.sort { $0.1 < $1.1 }
        let out = run(input).filter { $0 > 0 }
        #expect(out == out.sorted())
        #expect(Set(out).count == out.count)
    }
}

/// `lost`: sequence numbers never received after the wait, per stream; the
/// numbers a sender used while our own connection was down are the outage's gap.
@Suite struct JitterBufferOutageTests {
    /// 1…50, a real hole at 20–21, our connection lost after 50, then 201…250 (a resume:
    /// same SSRC, the SFU kept numbering), and a hole at 230.
    func run(outage: Bool) -> (lost: Int, skipped: Int) {
        var jb = JitterBuffer(capacity: 64, waitNanos: 60_000_000)
        let payload: [UInt8] = [0xF8, 0x01]
        var now: UInt64 = 0
        let before = Array(UInt16(1)...50).filter { $0 != 20 && $0 != 21 }
        let after = Array(UInt16(201)...250).filter { $0 != 230 }
        for seq in before + after {
            if seq == 201 {
                if outage { jb.connectionLost() }
                now += 3_000_000_000
            }
            now += 20_000_000
            let ts = Int64(seq) * 960
            while case .needsRoom = payload.withUnsafeBytes({ jb.insert(sequence: Int64(seq), timestamp: ts, arrivalNanos: now, ssrc: 7, payload: $0) }) {
                jb.forceReleaseOne { _ in }
            }
            jb.release(now: now) { _ in }
        }
        jb.release(now: now + 1_000_000_000) { _ in }
        return (jb.lostPackets, jb.outageSkipped)
    }

    @Test func theOutageIsNotLoss() {
        let r = run(outage: true)
        #expect(r.lost == 3, "the two holes before and the one after")
        #expect(r.skipped == 150)
    }

    @Test func withoutAnOutageTheJumpIsLoss() {
        let r = run(outage: false)
        #expect(r.lost == 153)
        #expect(r.skipped == 0)
    }
}

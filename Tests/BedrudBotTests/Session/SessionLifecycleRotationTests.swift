@testable import BedrudBot
import BedrudCore
import Testing

/// `SessionLifecycle`'s rotation as transcripts: `--split` is a timer, `--split-size` a
/// size sample, SIGHUP an input; each rotation starts a new split period; nothing
/// rotates when not recording or once the session is stopping.
@Suite struct SessionLifecycleRotationTests {
    typealias L = SessionLifecycle

    static func rules(split: Double? = nil, size: Int64 = 0, duration: Double? = nil) -> L.Rules {
        var r = L.Rules()
        r.split = split
        r.splitBytes = size
        r.duration = duration
        r.minFreeBytes = 0  // no free-space samples in these transcripts
        return r
    }

    @Test func splitRotatesOnEveryPeriod() {
        var l = L(rules: Self.rules(split: 3, duration: 7), recording: true)
        #expect(l.handle(.started, at: 0) == [.arm(.duration, seconds: 7), .arm(.split, seconds: 3)])
        #expect(l.handle(.timerFired(.split), at: 2.9) == [], "an early fire is ignored")
        #expect(l.handle(.timerFired(.split), at: 3) == [.rotate(.duration), .arm(.split, seconds: 3)])
        #expect(l.handle(.timerFired(.split), at: 6) == [.rotate(.duration), .arm(.split, seconds: 3)])
        // The duration ends the session: the split timer is cancelled with the rest.
        #expect(l.handle(.timerFired(.duration), at: 7) == [.cancel(.split), .leave(.duration, detail: "duration of 7s reached")])
        #expect(l.handle(.timerFired(.split), at: 9) == [])
        #expect(l.rotations == 2)
    }

    @Test func sighupRotatesNowAndRestartsTheSplitPeriod() {
        var l = L(rules: Self.rules(split: 10), recording: true)
        _ = l.handle(.started, at: 0)
        #expect(l.handle(.hangup, at: 4) == [.rotate(.signal), .arm(.split, seconds: 10)])
        #expect(l.handle(.timerFired(.split), at: 10) == [], "the period restarted at the SIGHUP")
        #expect(l.handle(.timerFired(.split), at: 14) == [.rotate(.duration), .arm(.split, seconds: 10)])
        // Without --split, SIGHUP rotates and arms nothing.
        var plain = L(rules: Self.rules(), recording: true)
        #expect(plain.handle(.started, at: 0) == [])
        #expect(plain.handle(.hangup, at: 1) == [.rotate(.signal)])
        #expect(plain.handle(.hangup, at: 1.2) == [.rotate(.signal)], "every SIGHUP is a rotation")
    }

    @Test func splitSizeRotatesWhenAFileReachesIt() {
        var l = L(rules: Self.rules(size: 1_000_000), recording: true)
        _ = l.handle(.started, at: 0)
        #expect(l.handle(.segmentBytes(999_999), at: 1) == [])
        #expect(l.handle(.segmentBytes(1_000_000), at: 2) == [.rotate(.size)])
        // A sample taken before the media thread rotated may still be the old file's.
        #expect(l.handle(.segmentBytes(1_000_100), at: 3) == [])
        #expect(l.handle(.segmentBytes(20_000), at: 4) == [])
        #expect(l.handle(.segmentBytes(1_200_000), at: 9) == [.rotate(.size)])
        // With --split too, a size rotation starts a new split period.
        var both = L(rules: Self.rules(split: 60, size: 500), recording: true)
        _ = both.handle(.started, at: 0)
        #expect(both.handle(.segmentBytes(600), at: 5) == [.rotate(.size), .arm(.split, seconds: 60)])
        // 0 = no size limit.
        var off = L(rules: Self.rules(), recording: true)
        _ = off.handle(.started, at: 0)
        #expect(off.handle(.segmentBytes(1 << 40), at: 1) == [])
    }

    @Test func nothingRotatesWithoutRecordingOrWhileStopping() {
        var listen = L(rules: Self.rules(split: 3, size: 10), recording: false)
        #expect(listen.handle(.started, at: 0) == [])
        #expect(listen.handle(.hangup, at: 1) == [])
        #expect(listen.handle(.segmentBytes(100), at: 2) == [])
        var l = L(rules: Self.rules(split: 3), recording: true)
        _ = l.handle(.started, at: 0)
        #expect(l.handle(.signal(15), at: 1) == [.cancel(.split), .leave(.signal, detail: "terminated (SIGTERM)")])
        #expect(l.handle(.hangup, at: 1.5) == [])
        _ = l.handle(.roomEnded(.left), at: 2)
        #expect(l.handle(.hangup, at: 2.5) == [])
        #expect(l.rotations == 0)
    }
}

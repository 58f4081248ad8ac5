import BedrudProtocol
import Testing

@testable import BedrudMedia

/// Gap durations per cause are never negative.
@Suite struct ParticipantTimelineGapTests {

    /// Two 2.5 ms fills while nothing was known, then the cause (a mute) learned: the
    /// stretch moves to `mute` whole, and `noPackets` is 0, not -1 (2 + 2 ms added as
    /// rounded ms, 5 ms taken away).
    @Test func reattributedGapTimeNeverGoesNegative() {
        var t = ParticipantTimeline(settings: .init(config: MediaPipelineConfig(), startNanos: 0), addedAt: 0)
        var actions: [TimelineAction] = []
        t.startFile(at: 0, stereo: false) { actions.append($0) }
        t.fill(samples: 120, cause: .noPackets) { actions.append($0) }
        t.fill(samples: 120, cause: .noPackets) { actions.append($0) }
        t.fill(samples: 120, cause: .mute) { actions.append($0) }
        #expect(t.gapMillis[.noPackets] == 0)
        #expect(t.gapMillis[.mute] == 7)
        #expect(actions == [
            .startFile(at: 0, audioStart: 0, stereo: false, segment: 1), .fill(samples: 120, fromGranule: 0, cause: .noPackets),
            .fill(samples: 120, fromGranule: 120, cause: .noPackets), .fill(samples: 120, fromGranule: 240, cause: .mute),
        ])
    }
}

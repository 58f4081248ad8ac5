import BedrudProtocol
import COpus
import Foundation
import Testing

@testable import BedrudMedia

/// Gap durations per cause are never negative (issue 13 §6).
@Suite struct GapAccountingTests {

    /// Two 2.5 ms fills while nothing was known, then the cause (a mute) learned: the
    /// stretch moves to `mute` whole, and `noPackets` is 0, not -1 (2 + 2 ms added as
    /// rounded ms, 5 ms taken away).
    @Test func reattributedGapTimeNeverGoesNegative() {
        let rec = VirtualRecording()
        let p = ParticipantRecorder(
            spec: MediaTrackSpec(trackSid: "TR_a", participantIdentity: "a", participantName: "a"), streamID: 0,
            config: MediaPipelineConfig(), pan: 0)
        p.fileStart = 0
        rec.engine.fillGap(p, samples: 120, cause: .noPackets)
        rec.engine.fillGap(p, samples: 120, cause: .noPackets)
        rec.engine.fillGap(p, samples: 120, cause: .mute)
        #expect(p.stats.gapMillis[.noPackets] == 0)
        #expect(p.stats.gapMillis[.mute] == 7)
    }
}

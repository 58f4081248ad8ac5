import Testing

@testable import BedrudMedia

/// ``MixPassthrough``'s decisions, as transcripts: a scripted room (who is heard where,
/// which packets are queued, how far the session is final) and the actions it takes.
@Suite struct MixPassthroughTests {
    /// A room on paper: heard spans per voice, 20 ms packets per voice from `grid`, loud
    /// spans the limiter would touch.
    struct Room: MixPassthrough.View {
        var finalEdge: Int64 = 0
        var cursor: Int64 = 0
        var encoderDelay: Int64 = 120
        var speech: [Int: [Range<Int64>]] = [:]
        var packets: [Int: [Int64]] = [:]
        var loud: [Range<Int64>] = []

        func heardSet(_ from: Int64, _ to: Int64) -> Set<Int> {
            Set(speech.filter { $0.value.contains { $0.overlaps(from..<to) } }.keys)
        }
        func heard(from: Int64, to: Int64) -> Int? {
            let s = heardSet(from, to)
            return s.count == 1 ? s.first : nil
        }
        func otherHeard(than source: Int?, from: Int64, to: Int64) -> Bool {
            !heardSet(from, to).subtracting(source.map { [$0] } ?? []).isEmpty
        }
        func packet(of source: Int, startingIn range: ClosedRange<Int64>) -> MixPassthrough.Packet? {
            (packets[source] ?? []).filter { range.contains($0) }.min().map { MixPassthrough.Packet(start: $0, samples: 960) }
        }
        func unlimited(from: Int64, to: Int64) -> Bool { !loud.contains { $0.overlaps(from..<to) } }
        /// Packets that would not start afresh (CELT ones, say), by start.
        var stale: Set<Int64> = []
        func startsAfresh(_ p: MixPassthrough.Packet, of source: Int, align: Int64) -> Bool { !stale.contains(p.start) }

        /// Packets of `source` every 20 ms from `first` to `end`.
        mutating func sends(_ source: Int, from first: Int64, to end: Int64) {
            packets[source, default: []] += Array(stride(from: first, to: end, by: 960))
        }
    }

    /// Runs the decider as the mixer would (an encode moves the cursor, a run's end puts
    /// it where the stream is) while the edge moves in 20 ms steps; the transcript lists
    /// every action but the encodes, which it counts.
    static func transcript(_ room: Room, until end: Int64) -> (lines: [String], encoded: Int) {
        var r = room
        var d = MixPassthrough()
        var lines: [String] = []
        var encoded = 0
        while r.finalEdge < end {
            r.finalEdge += 960
            loop: while true {
                switch d.next(r) {
                case .wait: break loop
                case .encode(let n):
                    r.cursor += Int64(n)
                    encoded += 1
                case .start(let s, let p, let align, let shift):
                    r.cursor += align
                    lines.append("start \(s) at \(p.start) align \(align) shift \(shift)")
                case .pass(let s, let p):
                    if lines.last?.hasPrefix("pass \(s)") == true { lines[lines.count - 1] = "pass \(s) to \(p.end)" } else { lines.append("pass \(s) to \(p.end)") }
                case .end(let at):
                    r.cursor = at + r.encoderDelay
                    lines.append("end at \(at)")
                }
            }
        }
        return (lines, encoded)
    }

    @Test func aLoneVoiceStartsOnItsQuietPacketsAndRunsUntilAnotherIsHeard() {
        var room = Room()
        // Both send from 0; voice 1 speaks 0.5–3 s, voice 2 3.5–4 s.
        room.sends(1, from: 0, to: 4 * 48_000)
        room.sends(2, from: 0, to: 4 * 48_000)
        room.speech[1] = [24_000..<144_000]
        room.speech[2] = [168_000..<192_000]
        let t = Self.transcript(room, until: 4 * 48_000)
        // The run starts on the quiet packet within 80 ms of the voice (the output stands
        // 120 samples behind the cursor: one 2.5 ms frame aligns it, no shift); it goes on
        // through voice 1's silence after 3 s (passing a packet costs less than encoding)
        // and hands over to voice 2 on its quiet packets, 80 ms before it speaks.
        #expect(t.lines == [
            "start 1 at 21120 align 120 shift 0",
            "pass 1 to 165120",
            "end at 165120",
            "start 2 at 165120 align 0 shift 0",
            "pass 2 to 188160",
        ], "\(t.lines)")
    }

    @Test func aRunEndsWhereASecondVoiceComesInAndNoRunStartsWhileTwoTalk() {
        var room = Room()
        room.sends(1, from: 0, to: 3 * 48_000)
        room.sends(2, from: 0, to: 3 * 48_000)
        room.speech[1] = [9_600..<96_000]
        room.speech[2] = [48_000..<144_000]  // over voice 1 from 1 s to 2 s
        let t = Self.transcript(room, until: 3 * 48_000)
        // Voice 1's run ends when voice 2 comes within the lookahead; while both talk the
        // mix is encoded; voice 2 alone after 2 s never pauses, so no run starts (a run
        // begins only on a quiet packet).
        #expect(t.lines == ["start 1 at 6720 align 120 shift 0", "pass 1 to 48000", "end at 48000"], "\(t.lines)")
        #expect(t.encoded > 90)
    }

    @Test func packetsOffTheGridAreAlignedToTheNearestTwoAndAHalfMilliseconds() {
        var room = Room()
        room.sends(1, from: 37, to: 2 * 48_000)  // 37 samples off the grid
        room.speech[1] = [9_600..<90_000]
        let t = Self.transcript(room, until: 2 * 48_000)
        // The output is at 6600 when the voice comes within the lookahead; its packet at
        // 6757 is 157 samples on: one 2.5 ms frame gets within 37 of it, so the run sits
        // 37 samples (0.8 ms) early, and the run's end puts the encoder back on time.
        #expect(t.lines == ["start 1 at 6757 align 120 shift -37", "pass 1 to 91237"], "\(t.lines)")
    }

    @Test func aMissingPacketOrALoudFrameEndsTheRun() {
        var room = Room()
        room.sends(1, from: 0, to: 48_000)
        room.sends(1, from: 48_000 + 960, to: 2 * 48_000)  // the packet at 1 s is lost
        room.speech[1] = [9_600..<2 * 48_000]
        room.loud = [72_000..<72_100]
        let t = Self.transcript(room, until: 2 * 48_000)
        #expect(t.lines.prefix(3) == ["start 1 at 6720 align 120 shift 0", "pass 1 to 48000", "end at 48000"], "\(t.lines)")
        // No new run while the voice talks on without a pause, so the loud frame is encoded (limited).
        #expect(t.lines.count == 3, "\(t.lines)")
    }

    @Test func itWaitsForThePacketAndTheLookaheadToBeFinal() {
        var room = Room()
        room.sends(1, from: 0, to: 48_000)
        room.speech[1] = [2_000..<40_000]
        var d = MixPassthrough()
        room.finalEdge = 3_000  // less than the lookahead after the first packet
        #expect(d.next(room) == .wait)
        room.finalEdge = 960 + 3_840 + 120
        #expect(d.next(room) == .start(source: 1, packet: .init(start: 0, samples: 960), align: 120, shift: 0))
        #expect(d.next(room) == .wait)  // the next packet's lookahead is not final yet
        room.finalEdge += 960
        #expect(d.next(room) == .pass(source: 1, packet: .init(start: 960, samples: 960)))
        #expect(d.stop() == 1_920)
        #expect(d.mode == .encoding)
    }
}

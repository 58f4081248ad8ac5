/// One packet held by the jitter buffer; the payload lives in the buffer's arena.
struct BufferedPacket {
    var sequence: Int64 = 0
    var timestamp: Int64 = 0
    var arrivalNanos: UInt64 = 0
    var ssrc: UInt32 = 0
    var arenaOffset: Int = 0
    var length: Int = 0
    var occupied = false
}

/// What the jitter buffer hands on, in sequence order.
enum JitterOutput {
    /// The next packet; its payload is valid only during the callback.
    case packet(BufferedPacket, UnsafeRawBufferPointer)
    /// `count` sequence numbers in a row were given up (lost, or skipped by a jump ahead,
    /// or sent during an outage of our connection): the next packet follows them.
    case lost(count: Int)
}

/// The reorder/jitter buffer of one track (one SSRC at a time).
///
/// Orders packets by unwrapped sequence number (the caller unwraps, once for both of a
/// participant's windows), drops duplicates and packets that come after their slot was
/// released, and waits at most `waitNanos` (measured from the arrival of the first packet
/// behind a hole) for a missing packet before declaring it lost. It is the one place
/// that counts loss: every sequence number skipped between two released packets is
/// handed on as `.lost` just before the packet behind it (a jump ahead included), and
/// counted in `lostPackets` unless an outage of our own connection covers it.
/// Slots and payload arena are allocated once; nothing allocates per packet.
///
/// Thread contract: owned by the media thread.
struct JitterBuffer: ~Copyable {
    let capacity: Int
    private let mask: Int
    private let slots: UnsafeMutablePointer<BufferedPacket>
    private let arena: UnsafeMutableRawPointer
    let arenaSize: Int
    private var arenaCursor = 0
    /// Next sequence number to release; nil until the first packet.
    private(set) var nextSequence: Int64?
    private var highestSequence: Int64 = 0
    private(set) var buffered = 0
    var waitNanos: UInt64
    /// Nothing is released before this time (start-burst hold); 0 = no hold.
    var holdUntilNanos: UInt64 = 0
    private(set) var currentSSRC: UInt32?

    // Counters (read by stats).
    private(set) var duplicates = 0
    private(set) var late = 0
    /// Sequence numbers given up after the wait, counted per stream (SSRC); numbers that
    /// fall in an outage of our own connection are not loss (see `connectionLost`).
    private(set) var lostPackets = 0
    /// Sequence numbers skipped across an outage of our connection (reported as the
    /// reconnect gap, not as `lostPackets`).
    private(set) var outageSkipped = 0
    /// While our connection is down: the highest number seen before the loss.
    private var outageAfter: Int64?
    /// The numbers the sender used while we were away: after `outageAfter`, before the
    /// first packet received after the outage.
    private var outageRange: Range<Int64>?
    private(set) var forcedReleases = 0
    private(set) var resets = 0
    /// Numbers skipped by a jump ahead, handed on as `.lost` before the next packet.
    private var skippedAhead = 0

    init(capacity: Int = 64, arenaBytes: Int = 32 * 1024, waitNanos: UInt64 = 60_000_000) {
        var c = 8
        while c < capacity { c <<= 1 }
        self.capacity = c
        mask = c - 1
        slots = .allocate(capacity: c)
        slots.initialize(repeating: BufferedPacket(), count: c)
        arenaSize = max(4096, arenaBytes)
        arena = .allocate(byteCount: arenaSize, alignment: 16)
        self.waitNanos = waitNanos
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
        arena.deallocate()
    }

    var isEmpty: Bool { buffered == 0 }

    /// Forgets the stream's history (new SSRC). Call `drain` first.
    mutating func resetStream(ssrc: UInt32) {
        nextSequence = nil
        skippedAhead = 0
        currentSSRC = ssrc
        resets += 1
        outageAfter = nil
        outageRange = nil
    }

    /// Our connection is lost (a reconnect began): whatever the sender numbers until the
    /// next packet that reaches us is the outage's, not loss. A resume keeps the stream
    /// (same SSRC), so the jump shows up here; a rejoin starts a new stream and has none.
    mutating func connectionLost() {
        guard nextSequence != nil, outageAfter == nil else { return }
        outageAfter = highestSequence
    }

    /// Counts `range` (given up) as loss, except the part the outage covers.
    private mutating func giveUp(_ range: Range<Int64>) -> Int {
        var inOutage = 0
        if let o = outageRange {
            inOutage = Int(max(0, min(range.upperBound, o.upperBound) - max(range.lowerBound, o.lowerBound)))
        }
        outageSkipped += inOutage
        return range.count - inOutage
    }

    enum InsertResult { case stored, duplicate, late, needsRoom }

    /// Stores a packet whose sequence number and timestamp were unwrapped by the caller
    /// (`RTPCounterUnwrapper`, reset with `resetStream`).
    /// `.needsRoom` means the packet is too far ahead of the oldest buffered one: the
    /// caller must `forceRelease` and insert again.
    mutating func insert(
        sequence seq: Int64, timestamp: Int64, arrivalNanos: UInt64, ssrc: UInt32, payload: UnsafeRawBufferPointer
    ) -> InsertResult {
        if let after = outageAfter, seq > after {
            // The first packet after the outage marks its end.
            outageRange = (after + 1)..<seq
            outageAfter = nil
        }
        if nextSequence == nil {
            nextSequence = seq
            highestSequence = seq
        }
        guard let next = nextSequence else { return .late }
        if seq < next {
            late += 1
            return .late
        }
        if seq - next >= Int64(capacity) {
            guard buffered == 0 else { return .needsRoom }
            // Nothing held: jump ahead. The skipped numbers count as lost unless the jump
            // is too large to be loss (a restarted sender).
            let lost = giveUp(next..<seq)
            if lost < 3000 { lostPackets += lost } else { resets += 1 }
            skippedAhead += Int(seq - next)
            nextSequence = seq
        }
        if !arenaHasRoom(for: payload.count, seq: seq) {
            return buffered == 0 ? .late : .needsRoom
        }
        let i = Int(seq & Int64(mask))
        if slots[i].occupied {
            duplicates += 1
            return .duplicate
        }
        var off = arenaCursor
        if off + payload.count > arenaSize { off = 0 }
        if let b = payload.baseAddress, payload.count > 0 { (arena + off).copyMemory(from: b, byteCount: payload.count) }
        arenaCursor = off + payload.count
        slots[i] = BufferedPacket(
            sequence: seq, timestamp: timestamp, arrivalNanos: arrivalNanos, ssrc: ssrc, arenaOffset: off,
            length: payload.count, occupied: true)
        buffered += 1
        if seq > highestSequence { highestSequence = seq }
        return .stored
    }

    /// True when writing `length` bytes at the arena cursor would not overwrite a packet
    /// still held. A packet larger than the arena never fits.
    private func arenaHasRoom(for length: Int, seq: Int64) -> Bool {
        guard length <= arenaSize / 2 else { return false }
        var start = arenaCursor
        if start + length > arenaSize { start = 0 }
        let end = start + length
        guard buffered > 0, let next = nextSequence else { return true }
        var s = next
        var seen = 0
        while seen < buffered && s <= highestSequence {
            let p = slots[Int(s & Int64(mask))]
            if p.occupied && p.sequence == s {
                seen += 1
                if p.arenaOffset < end && start < p.arenaOffset + p.length { return false }
            }
            s += 1
        }
        return true
    }

    /// Releases everything that is due at `now`: consecutive packets, and holes whose
    /// wait has run out.
    mutating func release(now: UInt64, _ body: (JitterOutput) -> Void) {
        guard now >= holdUntilNanos else { return }
        while buffered > 0, let next = nextSequence {
            let i = Int(next & Int64(mask))
            if slots[i].occupied && slots[i].sequence == next {
                emit(i, body)
                continue
            }
            // A hole: find the first packet behind it.
            var s = next + 1
            while s <= highestSequence {
                let j = Int(s & Int64(mask))
                if slots[j].occupied && slots[j].sequence == s { break }
                s += 1
            }
            let j = Int(s & Int64(mask))
            guard now >= slots[j].arrivalNanos &+ waitNanos else { return }
            declareLost(upTo: s, body)
        }
    }

    /// When `release` would next hand something on: nil when nothing is held; the hold
    /// time, the head's arrival (a packet is ready) or the wait's end of the hole at the head.
    func nextReleaseNanos() -> UInt64? {
        guard buffered > 0, let next = nextSequence else { return nil }
        var s = next
        while s <= highestSequence {
            let j = Int(s & Int64(mask))
            if slots[j].occupied && slots[j].sequence == s { break }
            s += 1
        }
        let p = slots[Int(s & Int64(mask))]
        let due = s == next ? p.arrivalNanos : p.arrivalNanos &+ waitNanos
        return max(due, holdUntilNanos)
    }

    /// Releases the oldest packet (or hole) now, whatever the wait: called when the
    /// buffer is out of room.
    mutating func forceReleaseOne(_ body: (JitterOutput) -> Void) {
        guard buffered > 0, let next = nextSequence else { return }
        forcedReleases += 1
        let i = Int(next & Int64(mask))
        if slots[i].occupied && slots[i].sequence == next {
            emit(i, body)
            return
        }
        var s = next + 1
        while s <= highestSequence {
            let j = Int(s & Int64(mask))
            if slots[j].occupied && slots[j].sequence == s { break }
            s += 1
        }
        declareLost(upTo: s, body)
    }

    /// Releases everything held, holes declared lost (end of stream or SSRC change).
    mutating func drain(_ body: (JitterOutput) -> Void) {
        while buffered > 0 { forceReleaseOne(body) }
    }

    private mutating func declareLost(upTo s: Int64, _ body: (JitterOutput) -> Void) {
        guard let next = nextSequence, s > next else { return }
        let n = Int(s - next)
        lostPackets += giveUp(next..<s)
        nextSequence = s
        body(.lost(count: n))
    }

    private mutating func emit(_ i: Int, _ body: (JitterOutput) -> Void) {
        if skippedAhead > 0 {
            body(.lost(count: skippedAhead))
            skippedAhead = 0
        }
        let p = slots[i]
        slots[i].occupied = false
        buffered -= 1
        nextSequence = p.sequence + 1
        body(.packet(p, UnsafeRawBufferPointer(start: arena + p.arenaOffset, count: p.length)))
    }
}

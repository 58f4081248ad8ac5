/// The recent packets of every decoded track, each at its place on the mix's timeline,
/// kept until the mixer has decided about them: while one person talks alone, the mixer
/// writes that person's packets into `room.opus` as they are instead of encoding the mix
/// (``RoomMixer``).
///
/// Fixed storage: `capacity` entries and a circular arena of `arenaBytes`. A new packet
/// that needs room evicts the oldest; a packet the queue had to drop is simply not passed
/// through (the mixer encodes that frame instead). Nothing allocates after `init`.
/// Thread contract: owned by the media thread.
final class MixPacketQueue {
    struct Entry {
        /// The track (the engine's stream id).
        var source: Int32
        /// The session sample where the packet's decoded audio starts.
        var start: Int64
        var samples: Int32
        var offset: Int32
        var length: Int32
    }

    private let arena: UnsafeMutablePointer<UInt8>
    private let arenaBytes: Int
    private var entries: [Entry]
    private var head = 0
    private(set) var count = 0
    private var write = 0
    private(set) var evicted = 0

    init(capacity: Int = 1024, arenaBytes: Int = 128 * 1024) {
        self.arenaBytes = arenaBytes
        arena = .allocate(capacity: arenaBytes)
        entries = Array(repeating: Entry(source: 0, start: 0, samples: 0, offset: 0, length: 0), count: capacity)
    }

    deinit { arena.deallocate() }

    private func entry(_ i: Int) -> Entry { entries[(head + i) % entries.count] }

    private func dropOldest() {
        head = (head + 1) % entries.count
        count -= 1
    }

    /// Keeps a copy of `payload`, whose decoded audio starts at session sample `start`.
    func push(source: Int, start: Int64, samples: Int, payload: UnsafeRawBufferPointer) {
        let n = payload.count
        guard n > 0, n <= 1500, let base = payload.baseAddress else { return }
        if write + n > arenaBytes { write = 0 }
        // FIFO in the arena too: the oldest entries are the ones in the way.
        while count > 0 {
            let o = entry(0)
            let a = Int(o.offset), b = a + Int(o.length)
            guard count == entries.count || (a < write + n && write < b) else { break }
            dropOldest()
            evicted += 1
        }
        (arena + write).update(from: base.assumingMemoryBound(to: UInt8.self), count: n)
        entries[(head + count) % entries.count] = Entry(
            source: Int32(truncatingIfNeeded: source), start: start, samples: Int32(samples), offset: Int32(write), length: Int32(n))
        count += 1
        write += n
    }

    /// Forgets the packets that end before session sample `position` (from the front:
    /// packets arrive roughly in session order; a straggler goes with the capacity).
    func discard(endingBefore position: Int64) {
        while count > 0 {
            let o = entry(0)
            guard o.start + Int64(o.samples) < position else { break }
            dropOldest()
        }
    }

    /// The first packet of `source` that starts in `range`, as an index for
    /// ``withPacket(_:_:)``.
    func find(source: Int, startingIn range: ClosedRange<Int64>) -> (index: Int, entry: Entry)? {
        let s = Int32(truncatingIfNeeded: source)
        var best: (Int, Entry)?
        for i in 0..<count {
            let e = entry(i)
            if e.source == s, range.contains(e.start), best == nil || e.start < best!.1.start { best = (i, e) }
        }
        return best
    }

    func withPacket<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let e = entry(index)
        return body(UnsafeRawBufferPointer(start: arena + Int(e.offset), count: Int(e.length)))
    }
}

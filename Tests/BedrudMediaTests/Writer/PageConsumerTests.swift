import BedrudProtocol
import Testing
import TestSupport

@testable import BedrudMedia

/// The writer thread's queue (``ThreadedPageWriter``): what it costs in memory while the
/// disk keeps up, and that it still holds a long burst when the disk does not.
@Suite struct ThreadedPageWriterTests {
    /// Writes `count` pages of stream 1, each 228 bytes, calling `between` after each with
    /// the bytes written so far.
    static func write(_ w: ThreadedPageWriter, from first: Int, count: Int, expected: inout [UInt8], between: (Int) throws -> Void = { _ in }) rethrows {
        for n in first..<first + count {
            let p = PageWriterThreadTests.page(serial: 1, sequence: n, n)
            p.header.withUnsafeBytes { h in p.body.withUnsafeBytes { b in w.writePage(1, header: h, body: b) } }
            expected += p.header + p.body
            w.notifyIfPending()
            try between(expected.count)
        }
    }

    /// Resident memory per track: a 4 MiB queue walked end to end made all of it resident
    /// within minutes, and a 30 s benchmark saw that as memory per track. Drained page by
    /// page, the queue now stays within its first 64 KiB and an entry; the bytes are the
    /// same and in order.
    @Test func aWriterThatKeepsUpUsesOnlyTheFrontOfItsQueue() throws {
        let w = ThreadedPageWriter(capacityBytes: 4 << 20, syncIntervalSeconds: 0)
        let sink = MemorySink()
        w.open(1, sink: sink)
        var expected: [UInt8] = []
        // 1,000 pages of 240 queued bytes: 240 KB, almost four times the rewind point.
        try Self.write(w, from: 0, count: 1000, expected: &expected) { want in
            try waitUntilBlocking("\(want) bytes written", timeout: 5, { w.bytesWritten == want })
        }
        #expect(w.usedExtentBytes <= ThreadedPageWriter.rewindOffset + 256, "used \(w.usedExtentBytes) bytes of the queue")
        w.close(1, clean: true)
        w.finish()
        #expect(sink.bytes == expected && sink.closedCleanly)
        #expect(w.droppedPages == 0)
    }

    /// Pages written as fast as the media thread can, while the writer drains them: the
    /// queue goes back to its front whenever the writer has caught up, and every page
    /// still arrives whole and in order.
    @Test func pagesArriveWholeAndInOrderAcrossRewinds() throws {
        let w = ThreadedPageWriter(capacityBytes: 1 << 20, syncIntervalSeconds: 0, maxWaitMillis: 5000)
        let sink = MemorySink()
        w.open(1, sink: sink)
        var expected: [UInt8] = []
        // Past the rewind point first, drained, so the burst starts in the middle.
        try Self.write(w, from: 0, count: 400, expected: &expected)
        let drained = expected.count
        try waitUntilBlocking("\(drained) bytes written", timeout: 5, { w.bytesWritten == drained })
        // 3,000 pages without a pause: 720 KB.
        try Self.write(w, from: 400, count: 3000, expected: &expected)
        w.close(1, clean: true)
        w.finish()
        #expect(sink.bytes == expected && sink.closedCleanly)
        #expect(w.droppedPages == 0)
    }
}

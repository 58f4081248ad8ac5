import BedrudProtocol
import Foundation
import Testing
import TestSupport

@testable import BedrudMedia

/// `PageWriterThread` (several rooms in one process): the page writers of several rooms on one
/// shared writer thread (``PageWriterThread``), each with its own queue and files.
@Suite struct PageWriterThreadTests {
    /// An Ogg page of stream `serial` (header with one 200-byte segment; the writer reads
    /// only the header's fields, not its CRC), its body distinct per writer and page, so a
    /// page in the wrong file shows.
    static func page(serial: Int, sequence: Int, _ n: Int) -> (header: [UInt8], body: [UInt8]) {
        var h: [UInt8] = [0x4F, 0x67, 0x67, 0x53, 0, sequence == 0 ? 2 : 0]
        h += withUnsafeBytes(of: Int64(n * 960).littleEndian, Array.init)
        h += withUnsafeBytes(of: Int32(serial).littleEndian, Array.init)
        h += withUnsafeBytes(of: UInt32(sequence).littleEndian, Array.init)
        h += [0, 0, 0, 0, 1, 200]
        return (h, (0..<200).map { UInt8(truncatingIfNeeded: $0 &+ n &* 7 &+ serial) })
    }

    @Test func twoWritersOnOneThreadKeepTheirOwnFilesAndFinishApart() async throws {
        let thread = PageWriterThread(name: "test.writer", budget: 4)
        defer { thread.shutdown() }
        let writers = (0..<2).map { _ in ThreadedPageWriter(syncIntervalSeconds: 0, thread: thread) }
        #expect(thread.writerCount == 2)
        let sinks = (0..<2).map { _ in (MemorySink(), MemorySink()) }
        var expected: [[UInt8]] = Array(repeating: [], count: 4)
        for (w, writer) in writers.enumerated() {
            writer.open(1, sink: sinks[w].0)
            writer.open(2, sink: sinks[w].1)
        }
        // More pages than one turn's budget, interleaved: the thread takes turns.
        for n in 0..<300 {
            for (w, writer) in writers.enumerated() {
                let stream = 1 + n % 2
                let p = Self.page(serial: w * 10 + stream, sequence: n / 2, n)
                p.header.withUnsafeBytes { h in p.body.withUnsafeBytes { b in writer.writePage(stream, header: h, body: b) } }
                expected[w * 2 + n % 2] += p.header + p.body
            }
            if n % 50 == 0 { for w in writers { w.notifyIfPending() } }
        }
        for w in writers {
            w.close(1, clean: true)
            w.close(2, clean: false)
            w.notifyIfPending()
        }
        // The first writer finishes while the second one's pages may still be queued.
        writers[0].finish()
        #expect(sinks[0].0.isClosed && sinks[0].0.closedCleanly && sinks[0].1.isClosed && !sinks[0].1.closedCleanly)
        #expect(sinks[0].0.bytes == expected[0] && sinks[0].1.bytes == expected[1])
        writers[1].finish()
        #expect(sinks[1].0.bytes == expected[2] && sinks[1].1.bytes == expected[3])
        for w in writers {
            #expect(w.droppedPages == 0 && w.failedOperations == 0)
            #expect(w.bytesWritten == 300 * 228)
        }
        try await waitUntil("finished writers leave the thread", timeout: 5) { thread.writerCount == 0 }
    }
}

import COgg
import Foundation
import Testing

@testable import BedrudMedia

/// `PageStreamRecovery`: a failed write is never skipped. Pages are kept within a bound, the span
/// beyond it becomes a gap whose audio after it is still at the right time, and a file
/// that cannot be finished is not closed as finished. No filesystem: a sink that fails
/// on command.
@Suite struct PageStreamRecoveryTests {
    /// A sink that fails (all or nothing, like ``FileSink``) while `failing` is set.
    final class FlakySink: PageSink {
        var bytes: [UInt8] = []
        var failing = false
        /// Bytes of room left (nil: unlimited); a write that does not fit fails whole.
        var room: Int?
        var closed: Bool?
        func write(_ b: UnsafeRawBufferPointer) throws {
            if failing || (room.map { b.count > $0 } ?? false) { throw MediaIOError("Cannot write", path: "test.opus.part", errno: ENOSPC) }
            room = room.map { $0 - b.count }
            bytes.append(contentsOf: b)
        }
        func sync() throws {}
        func close(clean: Bool) throws { closed = clean }
    }

    /// Hands an ``OggStreamWriter``'s pages to the recovery, as the writer thread does.
    final class Feed: PageConsumer {
        let recovery: PageStreamRecovery
        init(_ r: PageStreamRecovery) { recovery = r }
        func open(_ streamID: Int, sink: PageSink) {}
        func writePage(_ streamID: Int, header: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) {
            var page = [UInt8](header)
            page.append(contentsOf: body)
            page.withUnsafeMutableBytes { recovery.page($0) }
        }
        func close(_ streamID: Int, clean: Bool) {}
    }

    /// A 20 ms CELT packet whose one data byte says which packet it is (valid Opus framing).
    static func packet(_ i: Int) -> [UInt8] { [31 << 3, UInt8(i & 0xFF), UInt8((i >> 8) & 0xFF)] }

    /// The audio packets of a file with the granule position at which each one starts.
    static func packets(_ file: [UInt8]) -> [(bytes: [UInt8], start: Int64)] {
        var sync = ogg_sync_state()
        var os = ogg_stream_state()
        ogg_sync_init(&sync)
        defer { ogg_sync_clear(&sync); ogg_stream_clear(&os) }
        let buf = ogg_sync_buffer(&sync, file.count)!
        file.withUnsafeBytes { buf.update(from: $0.bindMemory(to: CChar.self).baseAddress!, count: file.count) }
        ogg_sync_wrote(&sync, file.count)
        var page = ogg_page()
        var out: [(bytes: [UInt8], start: Int64)] = []
        var started = false
        var position: Int64 = 0
        var index = 0
        while ogg_sync_pageout(&sync, &page) == 1 {
            if !started { ogg_stream_init(&os, ogg_page_serialno(&page)); started = true }
            ogg_stream_pagein(&os, &page)
            var op = ogg_packet()
            while ogg_stream_packetout(&os, &op) == 1 {
                index += 1
                guard index > 2 else { continue }  // OpusHead, OpusTags
                let bytes = Array(UnsafeBufferPointer(start: op.packet, count: op.bytes))
                out.append((bytes, position))
                position += Int64(bytes.withUnsafeBytes { OpusPacketInfo.parse($0)?.samples } ?? 0)
            }
        }
        return out
    }

    struct Stream {
        let sink = FlakySink()
        let recovery: PageStreamRecovery
        let feed: Feed
        let ogg: OggStreamWriter
        var next = 0
        init(limits: PageStreamRecovery.Limits) {
            recovery = PageStreamRecovery(sink: sink, limits: limits)
            feed = Feed(recovery)
            ogg = OggStreamWriter(serial: 7, streamID: 1, consumer: feed, flushSamples: 48000)
            ogg.writeHeaders(head: OpusHead(channelCount: 1, preSkip: 312).bytes, tags: OpusTags(vendor: "test", comments: []).bytes)
        }
        /// Adds `n` packets of 20 ms (packet i ends at granule (i+1)·960).
        mutating func add(_ n: Int) {
            for _ in 0..<n {
                let p = Self.packet(next)
                next += 1
                p.withUnsafeBytes { ogg.packet($0, granule: Int64(next) * 960, samples: 960) }
            }
        }
        mutating func end() {
            var eos: (UInt8, UInt8) = ((31 << 3) & ~3 | 3, 1)
            withUnsafeBytes(of: &eos) { ogg.packet($0, granule: Int64(next) * 960, samples: 120, eos: true) }
        }
        static func packet(_ i: Int) -> [UInt8] { PageStreamRecoveryTests.packet(i) }
    }

    @Test func aShortFailureLosesNothing() throws {
        var s = Stream(limits: .init(samples: 5 * 48000, bytes: 1 << 20))
        s.add(100)
        s.sink.failing = true
        s.add(100)  // 2 s: within the bound
        #expect(s.recovery.isFailing)
        #expect(s.recovery.takeReports() == [.failing(errno: ENOSPC)])
        #expect(!s.recovery.retry(), "still failing")
        s.sink.failing = false
        #expect(s.recovery.retry())
        #expect(s.recovery.takeReports() == [.recovered])
        s.add(50)
        s.end()
        #expect(try s.recovery.close(clean: true))
        #expect(s.sink.closed == true)
        let report = OggOpusVerifier.verify(s.sink.bytes)
        #expect(report.isValid, "\(report.problems)")
        let packets = Self.packets(s.sink.bytes)
        #expect(packets.count == 251)
        for (i, p) in packets.prefix(250).enumerated() {
            #expect(p.bytes == Self.packet(i) && p.start == Int64(i) * 960, "packet \(i)")
        }
        #expect(s.recovery.pagesDropped == 0)
    }

    @Test func beyondTheBoundIsAGapAndTheAudioAfterItKeepsItsTime() throws {
        var s = Stream(limits: .init(samples: 2 * 48000, bytes: 1 << 20))
        s.add(100)  // 0–2 s written
        s.sink.failing = true
        s.add(300)  // 2–8 s: 2 s kept, the rest dropped
        #expect(s.recovery.pagesDropped > 0)
        s.sink.failing = false
        #expect(s.recovery.retry())
        s.add(100)  // 8–10 s written after the gap
        s.end()
        #expect(try s.recovery.close(clean: true))
        let reports = s.recovery.takeReports()
        guard case .gap(let a, let b) = reports.first(where: { if case .gap = $0 { true } else { false } }) else {
            Issue.record("no gap report: \(reports)")
            return
        }
        // The kept pages end at a page boundary between 4 and 5 s; the gap runs to 8 s.
        #expect(a >= 4 * 48000 && a <= 5 * 48000, "\(a)")
        #expect(b == 8 * 48000, "\(b)")
        let report = OggOpusVerifier.verify(s.sink.bytes)
        #expect(report.isValid, "\(report.problems)")
        #expect(abs(report.durationMillis - (10_000 - 312.0 / 48)) < 1, "\(report.durationMillis)")
        // Every real packet that is in the file is where it was captured.
        let real = Self.packets(s.sink.bytes).filter { $0.bytes.count == 3 }
        for p in real {
            let i = Int(p.bytes[1]) | Int(p.bytes[2]) << 8
            #expect(p.start == Int64(i) * 960, "packet \(i) at \(p.start)")
        }
        #expect(real.contains { Int($0.bytes[1]) | Int($0.bytes[2]) << 8 == 400 }, "the audio after the gap is there")
        #expect(!real.contains { (Int($0.bytes[1]) | Int($0.bytes[2]) << 8) == 399 }, "the dropped span is gone")
    }

    @Test func theEndDroppedIsWrittenAsAGapWithEOS() throws {
        var s = Stream(limits: .init(samples: 1 * 48000, bytes: 1 << 20))
        s.add(50)
        s.sink.failing = true
        s.add(200)
        s.end()
        s.sink.failing = false  // the session freed its reserve
        #expect(try s.recovery.close(clean: true))
        #expect(s.sink.closed == true)
        let report = OggOpusVerifier.verify(s.sink.bytes)
        #expect(report.isValid, "\(report.problems)")
        #expect(report.hasEOS)
        #expect(abs(report.durationMillis - (5_000 - 312.0 / 48)) < 1, "\(report.durationMillis)")
    }

    @Test func aFileThatCannotBeFinishedIsNotClosedAsFinished() throws {
        var s = Stream(limits: .init(samples: 1 * 48000, bytes: 1 << 20))
        s.add(50)
        s.sink.failing = true
        s.add(100)
        s.end()
        #expect(try !s.recovery.close(clean: true))
        #expect(s.sink.closed == false, "left as .part for repair")
        // What did reach the sink is whole pages only: the first second, nothing of the rest.
        #expect(Self.packets(s.sink.bytes).count == 50)
        var offset = 0
        while offset + 27 <= s.sink.bytes.count {
            let n = Int(s.sink.bytes[offset + 26])
            offset += 27 + n + s.sink.bytes[(offset + 27)..<(offset + 27 + n)].reduce(0) { $0 + Int($1) }
        }
        #expect(offset == s.sink.bytes.count, "the file ends where a page ends")
    }

    @Test func littleRoomAtTheEndStillFinishesTheFileWithAGap() throws {
        var s = Stream(limits: .init(samples: 3 * 48000, bytes: 1 << 20))
        s.add(50)  // 1 s written
        s.sink.failing = true
        s.add(100)  // 2 s kept in memory
        s.end()
        // The reserve freed: room for a page of concealment, not for the kept pages.
        s.sink.failing = false
        s.sink.room = 100
        #expect(try s.recovery.close(clean: true))
        #expect(s.sink.closed == true)
        let report = OggOpusVerifier.verify(s.sink.bytes)
        #expect(report.isValid && report.hasEOS, "\(report.problems)")
        #expect(abs(report.durationMillis - (3_000 - 312.0 / 48)) < 1, "\(report.durationMillis)")
        #expect(s.recovery.takeReports().contains(.gap(startGranule: 48000, endGranule: 3 * 48000)))
    }

    @Test func theByteBoundHoldsToo() {
        var s = Stream(limits: .init(samples: 60 * 48000, bytes: 2000))
        s.add(20)
        s.sink.failing = true
        s.add(500)
        #expect(s.recovery.pendingBytes <= 2000 + 4096, "\(s.recovery.pendingBytes)")
        #expect(s.recovery.pagesDropped > 0)
    }

    @Test func fillerPagesCoverTheirSpan() throws {
        let long = try #require(FillerPage.make(serial: 1, sequence: 5, fromGranule: 0, toGranule: 20 * 48000, stereo: false, eos: false))
        #expect(long.endGranule == 255 * 960, "at most 255 packets a page")
        let odd = try #require(FillerPage.make(serial: 1, sequence: 5, fromGranule: 0, toGranule: 1000, stereo: true, eos: true))
        #expect(odd.endGranule == 1000, "the EOS page trims its overhang")
        #expect(FillerPage.make(serial: 1, sequence: 5, fromGranule: 10, toGranule: 10, stereo: false, eos: false) == nil)
    }
}

import COgg

/// One Ogg stream's pages on their way into a sink, kept valid when the sink fails.
///
/// A write that fails is never skipped:
/// - the page that failed, and every later page of the stream, are kept in memory
///   (`pending`) and written, in order, once a retry succeeds;
/// - the memory is bounded (``Limits``: a few seconds of audio, and bytes). Pages beyond
///   the bound are dropped, and the span they covered is written as a gap when the sink
///   works again: concealment packets (RFC 7845 §4.1) with the right granule positions,
///   so the audio after the gap plays at the time it was captured. Later pages get their
///   sequence numbers (and CRCs) renumbered to follow the filler, so the file has no
///   hole a reader could see. Each such gap is reported (``Report/gap``) for the
///   `gap` event with cause `write_error`.
/// - When the stream ends while pages are still unwritten, ``close(clean:now:)`` makes
///   one last attempt; a stream that cannot be finished is closed unclean (its `*.part`
///   stays for `repair`), never renamed as if it were whole.
///
/// The span dropped always starts and ends at a packet boundary (a page that ends with
/// a packet continued on the next page is kept, or dropped, together with that next page).
///
/// Thread contract: owned by the writer thread (or whichever single thread writes the
/// stream). The common path (the sink works) copies nothing and allocates nothing.
public final class PageStreamRecovery {
    /// How much of a failing stream is kept in memory.
    public struct Limits: Sendable {
        /// Audio kept, in 48 kHz samples (granule positions) after the last page written.
        public var samples: Int64
        /// Bytes kept (pages).
        public var bytes: Int
        public init(samples: Int64 = 3 * 48000, bytes: Int = 32 << 10) {
            self.samples = samples
            self.bytes = bytes
        }
    }

    /// What happened, for the writer's owner (rare: never one per page while writing works).
    public enum Report: Equatable, Sendable {
        /// Writing stopped working; pages are kept from now on. `errno` of the failure.
        case failing(errno: Int32)
        /// Everything kept was written; the stream is writing normally again.
        case recovered
        /// Granule span `[start, end)` was written as concealment because its pages did not fit the bound.
        case gap(startGranule: Int64, endGranule: Int64)
    }

    public let sink: PageSink
    public let limits: Limits
    /// Reports since the owner last took them.
    public private(set) var reports: [Report] = []
    /// Pages written to the sink, and pages dropped (their span written as a gap).
    public private(set) var pagesWritten = 0
    public private(set) var pagesDropped = 0
    /// Bytes written to the sink (pages and filler).
    public private(set) var bytesWritten = 0
    /// The errno of the last failed write.
    public private(set) var lastErrno: Int32 = 0

    // Pages kept: their bytes back to back, and each page's length.
    private var pending: [UInt8] = []
    private var pendingLengths: [Int] = []
    private var pendingHead = 0  // pages of `pendingLengths` already written
    /// Granule position at the end of what was written or kept (the start of a gap).
    private var lastGranule: Int64 = 0
    /// The last page written or kept ends in the middle of a packet.
    private var lastEndsMidPacket = false
    /// Sequence number the next page written or kept gets.
    private var nextSequence: Int64 = 0
    /// Added to every incoming page's sequence number (filler pages shift what follows).
    private var sequenceDelta: Int64 = 0
    private var serial: Int32 = 0
    private var stereo = false
    // Dropping: the span from `gapStart` to the last dropped page's granule.
    private var dropping = false
    private var gapStart: Int64 = 0
    private var gapEnd: Int64 = 0
    private var lastDroppedSequence: Int64 = 0
    private var droppedEndsMidPacket = false
    private var droppedEOS = false
    private var finishedByFiller = false

    public init(sink: PageSink, limits: Limits = Limits()) {
        self.sink = sink
        self.limits = limits
    }

    /// True while pages are kept or dropped (the sink has not worked since its last failure).
    public var isFailing: Bool { !pendingLengths.isEmpty || dropping }
    /// Bytes held in memory now.
    public var pendingBytes: Int { pending.count }

    /// Takes the reports gathered so far.
    public func takeReports() -> [Report] {
        defer { reports.removeAll(keepingCapacity: true) }
        return reports
    }

    // MARK: - Pages

    /// Takes one page (header and body back to back). The bytes may be patched in place
    /// (sequence number and CRC) before they are written.
    public func page(_ bytes: UnsafeMutableRawBufferPointer) {
        guard let info = PageInfo(bytes) else { return }
        if finishedByFiller { return }
        if info.bos {
            serial = info.serial
            // OpusHead (RFC 7845 §5.1): channel count at byte 9 of the packet.
            let body = info.headerLength
            if bytes.count > body + 9, bytes[body] == 0x4F /* O */ { stereo = bytes[body + 9] >= 2 }
        }
        if dropping {
            drop(info)
            return
        }
        let seq = Int64(info.sequence) + sequenceDelta
        if seq != Int64(info.sequence) { PageInfo.setSequence(bytes, UInt32(truncatingIfNeeded: seq)) }
        if !pendingLengths.isEmpty {
            let kept = info.granule >= 0 ? info.granule - lastWrittenGranule : 0
            if (kept > limits.samples || pending.count + bytes.count > limits.bytes) && !lastEndsMidPacket {
                startDropping(info)
                return
            }
            keep(bytes, info, sequence: seq)
            return
        }
        do {
            try sink.write(UnsafeRawBufferPointer(bytes))
            pagesWritten += 1
            bytesWritten += bytes.count
            advance(info, sequence: seq)
            lastWrittenGranule = lastGranule
            lastWrittenSequence = seq
            lastWrittenEndsMidPacket = info.endsMidPacket
        } catch {
            lastErrno = (error as? MediaIOError)?.errno ?? 0
            reports.append(.failing(errno: lastErrno))
            keep(bytes, info, sequence: seq)
        }
    }

    /// Granule position, sequence number and packet state of the last page that reached the sink.
    private var lastWrittenGranule: Int64 = 0
    private var lastWrittenSequence: Int64 = -1
    private var lastWrittenEndsMidPacket = false

    private func advance(_ info: PageInfo, sequence: Int64) {
        if info.granule >= 0 { lastGranule = info.granule }
        lastEndsMidPacket = info.endsMidPacket
        nextSequence = sequence + 1
    }

    private func keep(_ bytes: UnsafeMutableRawBufferPointer, _ info: PageInfo, sequence: Int64) {
        if pending.capacity == 0 { pending.reserveCapacity(limits.bytes + 8192) }
        pending.append(contentsOf: bytes)
        pendingLengths.append(bytes.count)
        advance(info, sequence: sequence)
    }

    private func startDropping(_ info: PageInfo) {
        dropping = true
        gapStart = lastGranule
        gapEnd = lastGranule
        drop(info)
    }

    private func drop(_ info: PageInfo) {
        pagesDropped += 1
        if info.granule >= 0 { gapEnd = info.granule }
        lastDroppedSequence = Int64(info.sequence)
        droppedEndsMidPacket = info.endsMidPacket
        if info.eos { droppedEOS = true }
    }

    // MARK: - Retrying

    /// Tries to write what is kept, then the gap of what was dropped.
    /// - Returns: true when nothing is left to write.
    @discardableResult
    public func retry() -> Bool {
        guard isFailing else { return true }
        while pendingHead < pendingLengths.count {
            let offset = pendingOffset
            let n = pendingLengths[pendingHead]
            let ok = pending.withUnsafeBytes { raw -> Bool in
                do {
                    try sink.write(UnsafeRawBufferPointer(rebasing: raw[offset..<offset + n]))
                    return true
                } catch {
                    lastErrno = (error as? MediaIOError)?.errno ?? 0
                    return false
                }
            }
            guard ok else { return false }
            if let info = pending.withUnsafeBytes({ PageInfo(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + n])) }) {
                if info.granule >= 0 { lastWrittenGranule = info.granule }
                lastWrittenSequence = Int64(info.sequence)
                lastWrittenEndsMidPacket = info.endsMidPacket
            }
            pendingHead += 1
            pendingOffsetCache += n
            pagesWritten += 1
            bytesWritten += n
        }
        pending.removeAll(keepingCapacity: true)
        pendingLengths.removeAll(keepingCapacity: true)
        pendingHead = 0
        pendingOffsetCache = 0
        if dropping {
            // A packet that continues on a page not seen yet: wait for that page (dropped
            // too) so the gap ends where a packet ends.
            if droppedEndsMidPacket && !droppedEOS { return false }
            guard writeFiller() else { return false }
        }
        reports.append(.recovered)
        return true
    }

    private var pendingOffsetCache = 0

    /// Turns the pages still kept into part of the gap (from the end of what was written).
    /// - Returns: false when that cannot be done at a packet boundary.
    private func abandonPending() -> Bool {
        guard pendingHead < pendingLengths.count, !lastWrittenEndsMidPacket else { return false }
        var offset = pendingOffset
        var infos: [PageInfo] = []
        for i in pendingHead..<pendingLengths.count {
            let n = pendingLengths[i]
            if let info = pending.withUnsafeBytes({ PageInfo(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + n])) }) { infos.append(info) }
            offset += n
        }
        pending.removeAll(keepingCapacity: true)
        pendingLengths.removeAll(keepingCapacity: true)
        pendingHead = 0
        pendingOffsetCache = 0
        nextSequence = lastWrittenSequence + 1
        let end = dropping ? gapEnd : nil
        let eos = droppedEOS, midPacket = droppedEndsMidPacket
        if !dropping {
            dropping = true
            droppedEOS = false
        }
        gapStart = lastWrittenGranule
        for info in infos {
            if info.granule >= 0 { gapEnd = info.granule }
            if info.eos { droppedEOS = true }
            droppedEndsMidPacket = info.endsMidPacket
            pagesDropped += 1
        }
        if let end {
            gapEnd = end
            droppedEOS = eos
            droppedEndsMidPacket = midPacket
        }
        return true
    }
    private var pendingOffset: Int { pendingOffsetCache }

    /// Writes `[gapStart, gapEnd)` as concealment pages, one page at a time (each whole or
    /// not at all), and ends dropping when all of it is written.
    private func writeFiller() -> Bool {
        let eos = droppedEOS
        let reportedStart = gapStart
        while true {
            let page = FillerPage.make(serial: serial, sequence: nextSequence, fromGranule: gapStart, toGranule: gapEnd,
                                       stereo: stereo, eos: eos)
            guard let page else { break }
            do {
                try page.bytes.withUnsafeBytes { try sink.write($0) }
            } catch {
                lastErrno = (error as? MediaIOError)?.errno ?? 0
                return false
            }
            bytesWritten += page.bytes.count
            lastWrittenSequence = nextSequence
            lastWrittenEndsMidPacket = false
            nextSequence += 1
            gapStart = page.endGranule
            lastGranule = page.endGranule
            lastWrittenGranule = page.endGranule
            if page.endGranule >= gapEnd { break }
        }
        dropping = false
        lastEndsMidPacket = false
        sequenceDelta = nextSequence - (lastDroppedSequence + 1)
        if gapEnd > reportedStart { reports.append(.gap(startGranule: reportedStart, endGranule: gapEnd)) }
        if eos { finishedByFiller = true }
        return true
    }

    // MARK: - Closing

    /// Ends the stream: one last attempt at what is kept, then the sink is closed, clean
    /// only if `clean` and everything was written.
    /// - Returns: whether the file was finished (closed clean).
    @discardableResult
    public func close(clean: Bool) throws -> Bool {
        var done = retry()
        if !done && clean && abandonPending() {
            // Too little room for the kept pages: they join the gap, whose concealment
            // pages are a few bytes a second, so the file can still end properly.
            done = retry()
        }
        let finished = clean && done
        try sink.close(clean: finished)
        return finished
    }
}

// MARK: - Page bytes

/// The fields of an Ogg page header (RFC 3533 §6) the recovery needs.
struct PageInfo {
    let headerLength: Int
    let continued: Bool
    let bos: Bool
    let eos: Bool
    let granule: Int64
    let serial: Int32
    let sequence: UInt32
    let endsMidPacket: Bool

    init?(_ b: UnsafeMutableRawBufferPointer) { self.init(UnsafeRawBufferPointer(b)) }

    init?(_ b: UnsafeRawBufferPointer) {
        guard b.count >= 27, b[0] == 0x4F, b[1] == 0x67, b[2] == 0x67, b[3] == 0x53 else { return nil }
        let segments = Int(b[26])
        guard b.count >= 27 + segments else { return nil }
        headerLength = 27 + segments
        continued = b[5] & 1 != 0
        bos = b[5] & 2 != 0
        eos = b[5] & 4 != 0
        granule = b.loadUnaligned(fromByteOffset: 6, as: Int64.self).littleEndian
        serial = b.loadUnaligned(fromByteOffset: 14, as: Int32.self).littleEndian
        sequence = b.loadUnaligned(fromByteOffset: 18, as: UInt32.self).littleEndian
        endsMidPacket = segments > 0 && b[26 + segments] == 255
    }

    /// Rewrites the page's sequence number and its CRC.
    static func setSequence(_ b: UnsafeMutableRawBufferPointer, _ sequence: UInt32) {
        b.storeBytes(of: sequence.littleEndian, toByteOffset: 18, as: UInt32.self)
        let headerLength = 27 + Int(b[26])
        guard let base = b.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var og = ogg_page(header: base, header_len: headerLength, body: base + headerLength, body_len: b.count - headerLength)
        ogg_page_checksum_set(&og)
    }
}

/// One page of concealment packets that continues a stream over a gap.
struct FillerPage {
    let bytes: [UInt8]
    let endGranule: Int64

    /// Up to 255 packets (one lacing value each) from `fromGranule` toward `toGranule`;
    /// nil when there is nothing to fill. With `eos`, the page that reaches `toGranule`
    /// ends the stream there (RFC 7845 §4.4 end trimming of the last packet's overhang).
    static func make(serial: Int32, sequence: Int64, fromGranule: Int64, toGranule: Int64, stereo: Bool, eos: Bool) -> FillerPage? {
        let span = toGranule - fromGranule
        guard span > 0 || eos else { return nil }
        // Whole 2.5 ms steps; an EOS page may cover a little more and trim it.
        var samples = Int((min(span, 255 * 960) / 120) * 120)
        if eos && Int64(samples) < span && span < 255 * 960 { samples += 120 }
        if eos && samples == 0 { samples = 120 }
        var packets: [(UInt8, UInt8, Int)] = []
        let toc: UInt8 = (31 << 3) | (stereo ? 4 : 0)  // CELT FB 20 ms, the file's channels
        ConcealmentPackets.fill(samples: samples, previousTOC: toc) { pkt, dur in
            if packets.count < 255 { packets.append((pkt[0], pkt.count > 1 ? pkt[1] : 0, dur)) }
        }
        guard !packets.isEmpty else { return nil }
        let covered = packets.reduce(0) { $0 + $1.2 }
        let last = eos && fromGranule + Int64(covered) >= toGranule
        let end = last ? toGranule : fromGranule + Int64(covered)
        var header = [UInt8](repeating: 0, count: 27 + packets.count)
        header[0] = 0x4F; header[1] = 0x67; header[2] = 0x67; header[3] = 0x53
        header[5] = last ? 4 : 0
        withUnsafeBytes(of: end.littleEndian) { for i in 0..<8 { header[6 + i] = $0[i] } }
        withUnsafeBytes(of: serial.littleEndian) { for i in 0..<4 { header[14 + i] = $0[i] } }
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: sequence).littleEndian) { for i in 0..<4 { header[18 + i] = $0[i] } }
        header[26] = UInt8(packets.count)
        var body: [UInt8] = []
        body.reserveCapacity(packets.count * 2)
        for (i, p) in packets.enumerated() {
            // A concealment packet is the TOC byte and one count byte (code 3, zero-length frames).
            body.append(p.0)
            body.append(p.1)
            header[27 + i] = 2
        }
        var bytes = header + body
        bytes.withUnsafeMutableBytes { PageInfo.setSequence($0, UInt32(truncatingIfNeeded: sequence)) }
        return FillerPage(bytes: bytes, endGranule: end)
    }
}

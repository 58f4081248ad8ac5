import COgg

/// What `verify` found in an Ogg Opus file.
public struct OggOpusReport: Sendable, Equatable {
    /// No problem found.
    public var isValid: Bool { problems.isEmpty }
    /// One sentence per problem, in file order (at most 50 kept).
    public var problems: [String] = []
    public var head: OpusHead?
    public var tags: OpusTags?
    public var pages = 0
    public var audioPackets = 0
    /// Playable duration: (final granule position − pre-skip) / 48 kHz.
    public var durationMillis: Double = 0
    /// Runs of concealment packets (RFC 7845 §4.1 gaps): start (ms into the file) and length.
    public var gaps: [Gap] = []
    public var hasEOS = false
    /// Byte offset just past the last complete, intact page of the first stream whose
    /// last packet ends on it (what `repair` keeps).
    var lastGoodEnd = 0
    var lastGoodHasEOS = false
    var lastGoodHeaderOffset = 0
    var headersComplete = false

    public struct Gap: Sendable, Equatable {
        public var startMillis: Double
        public var durationMillis: Double
    }

    public var gapMillis: Double { gaps.reduce(0) { $0 + $1.durationMillis } }

    mutating func problem(_ s: String) { if problems.count < 50 { problems.append(s) } }

    /// A human summary: one line per fact, problems last.
    public var summary: String {
        var lines: [String] = []
        if let h = head {
            lines.append("channels \(h.channelCount), pre-skip \(h.preSkip), input rate \(h.inputSampleRate) Hz")
        }
        if let t = tags {
            lines.append("vendor \(t.vendor)" + t.comments.map { ", \($0.key)=\($0.value)" }.joined())
        }
        lines.append("duration \(formatMillis(durationMillis)), \(pages) pages, \(audioPackets) audio packets")
        lines.append("gaps \(gaps.count) totalling \(formatMillis(gapMillis))")
        lines.append(hasEOS ? "end of stream marked" : "no end-of-stream page")
        lines.append(contentsOf: problems.map { "problem: \($0)" })
        return lines.joined(separator: "\n")
    }
}

func formatMillis(_ ms: Double) -> String {
    let r = (ms * 10).rounded() / 10
    return r == r.rounded() ? "\(Int64(r)) ms" : "\(r) ms"
}

/// Checks an Ogg Opus file (RFC 7845) without decoding it: page framing and CRCs (via
/// libogg), page sequence, the two header packets, that every audio packet is valid Opus
/// (RFC 6716 §3.4), that granule positions match the packets' durations, and the EOS
/// flag. Reports duration and the concealment gaps. Pure: takes bytes.
public enum OggOpusVerifier {
    public static func verify(_ bytes: [UInt8]) -> OggOpusReport {
        var check = OggOpusCheck()
        defer { check.clearStream() }
        var scanner = OggPageScanner(bytes)
        var og = ogg_page()
        scan: while !check.stopped {
            switch scanner.next(into: &og) {
            case .end: break scan
            case .skipped(let n): check.skip(n)
            case .page(let n): check.page(&og, size: n)
            }
        }
        check.finish(fileSize: bytes.count, bytesRead: scanner.bytesRead)
        return check.report
    }
}

/// One pass of ``OggOpusVerifier/verify(_:)`` over a file's pages: the state its checks
/// share, and one function per check. Problems are noted in file order.
private struct OggOpusCheck {
    var report = OggOpusReport()
    /// The checks go no further: the first page begins no stream, or the end-of-stream page was read.
    private(set) var stopped = false
    private var os = ogg_stream_state()
    private var streamReady = false
    private var serial: Int32 = 0
    private var sawOtherStream = false
    /// Bytes of the file consumed by libogg, and where the current page starts.
    private var offset = 0
    private var pageStart = 0
    private var expectedPageNo = 0
    private var headerPackets = 0
    /// Decoded samples of the complete audio packets so far.
    private var samples: Int64 = 0
    private var granuleBase: Int64?
    private var lastGranule: Int64 = -1
    private var gapStart: Int64?

    mutating func clearStream() {
        if streamReady { ogg_stream_clear(&os) }
        streamReady = false
    }

    /// Bytes the scanner skipped between pages: no capture pattern, or a page whose CRC fails.
    mutating func skip(_ n: Int) {
        report.problem("\(n) bytes of damaged or foreign data at offset \(offset) (bad capture pattern or CRC)")
        offset += n
    }

    // MARK: - A page

    /// Runs the page checks on one page of `size` bytes.
    mutating func page(_ og: inout ogg_page, size: Int) {
        pageStart = offset
        offset += size
        guard belongsToStream(&og) else { return }
        checkSequence(&og)
        let granule = ogg_page_granulepos(&og)
        guard ogg_stream_pagein(&os, &og) == 0 else {
            report.problem("page \(report.pages) could not be added to the stream")
            return
        }
        let (completed, pageSamples) = readPackets(&og, granule: granule)
        if headerPackets == 2 && !report.headersComplete && completed > 0 {
            checkTagsPage(granule: granule)
            return
        }
        guard report.headersComplete else { return }
        guard completed > 0 else {
            if granule != -1 { report.problem("page \(report.pages) completes no packet but has granule \(granule)") }
            return
        }
        let eos = ogg_page_eos(&og) != 0
        checkGranule(granule, pageSamples: pageSamples, eos: eos)
        markRepairPoint(&og, eos: eos)
        if eos { stopped = true }
    }

    /// The first page must begin a stream, else the checks stop. Only its stream is checked:
    /// pages of any other are skipped, with one problem for them all.
    mutating func belongsToStream(_ og: inout ogg_page) -> Bool {
        let pageSerial = ogg_page_serialno(&og)
        guard streamReady else {
            guard ogg_page_bos(&og) != 0 else {
                report.problem("the first page is not a beginning-of-stream page")
                stopped = true
                return false
            }
            serial = pageSerial
            ogg_stream_init(&os, serial)
            streamReady = true
            return true
        }
        guard pageSerial == serial else {
            if !sawOtherStream { report.problem("more than one logical stream; only serial \(serial) was checked") }
            sawOtherStream = true
            return false
        }
        return true
    }

    /// Page sequence numbers count on by one; counts the page and notes its EOS flag.
    mutating func checkSequence(_ og: inout ogg_page) {
        report.pages += 1
        let pageNo = Int(ogg_page_pageno(&og))
        if pageNo != expectedPageNo { report.problem("page \(report.pages) has sequence number \(pageNo), expected \(expectedPageNo)") }
        expectedPageNo = pageNo + 1
        if ogg_page_eos(&og) != 0 { report.hasEOS = true }
    }

    // MARK: - Packets

    /// Takes the packets the page completes: OpusHead, OpusTags, then audio. Returns how
    /// many it completed and the samples of its valid audio packets.
    mutating func readPackets(_ og: inout ogg_page, granule: Int64) -> (completed: Int, samples: Int64) {
        var op = ogg_packet()
        var pageSamples: Int64 = 0
        var completed = 0
        var badOnPage = false
        while true {
            let pr = ogg_stream_packetout(&os, &op)
            if pr == 0 { break }
            if pr < 0 {
                report.problem("a packet is missing before page \(report.pages) (lost or damaged page)")
                continue
            }
            completed += 1
            let data = UnsafeRawBufferPointer(start: op.packet, count: op.bytes)
            switch headerPackets {
            case 0: readHead(data, packetsOnPage: ogg_page_packets(&og), granule: granule)
            case 1: readTags(data)
            default: pageSamples += readAudio(data, badOnPage: &badOnPage)
            }
        }
        return (completed, pageSamples)
    }

    /// The first packet is a valid OpusHead, alone on a page of granule 0.
    mutating func readHead(_ data: UnsafeRawBufferPointer, packetsOnPage: Int32, granule: Int64) {
        headerPackets = 1
        if let h = OpusHead.parse(Array(data)) { report.head = h } else { report.problem("the first packet is not a valid OpusHead") }
        if packetsOnPage != 1 || granule != 0 { report.problem("OpusHead must be alone on the first page with granule 0") }
    }

    /// The second packet is valid OpusTags.
    mutating func readTags(_ data: UnsafeRawBufferPointer) {
        headerPackets = 2
        if let t = OpusTags.parse(Array(data)) { report.tags = t } else { report.problem("the second packet is not valid OpusTags") }
    }

    /// An audio packet is valid Opus (one problem per page at most); runs of concealment
    /// requests are the gaps. Returns its samples, 0 for an invalid packet.
    mutating func readAudio(_ data: UnsafeRawBufferPointer, badOnPage: inout Bool) -> Int64 {
        report.audioPackets += 1
        guard let info = OpusPacketInfo.parse(data) else {
            if !badOnPage { report.problem("audio packet \(report.audioPackets) is not a valid Opus packet") }
            badOnPage = true
            return 0
        }
        if info.isConcealmentRequest {
            if gapStart == nil { gapStart = samples }
        } else {
            closeGap(at: samples)
        }
        samples += Int64(info.samples)
        return Int64(info.samples)
    }

    mutating func closeGap(at end: Int64) {
        guard let s = gapStart else { return }
        let pre = Double(report.head?.preSkip ?? 0)
        report.gaps.append(.init(startMillis: (Double(s) - pre) / 48, durationMillis: Double(end - s) / 48))
        gapStart = nil
    }

    // MARK: - Granule positions

    /// The page that completed OpusTags holds no audio and has granule 0. A file is
    /// repairable from its end on.
    mutating func checkTagsPage(granule: Int64) {
        if granule != 0 { report.problem("the OpusTags page must have granule position 0") }
        if report.audioPackets > 0 { report.problem("audio data starts on the OpusTags page") }
        report.headersComplete = true
        report.lastGoodEnd = offset
        report.lastGoodHeaderOffset = pageStart
    }

    /// An audio page's granule position is the samples so far, counted from where the first
    /// audio page puts the stream's start; it never goes backwards, and the last page's may
    /// trim no more than that page's own samples.
    mutating func checkGranule(_ granule: Int64, pageSamples: Int64, eos: Bool) {
        if granuleBase == nil {
            // The first audio page may start the stream later than 0 (RFC 7845 §4.5).
            granuleBase = granule - samples
            if granule < samples && !eos {
                report.problem("the first audio page's granule position \(granule) is smaller than its \(samples) samples")
            }
        }
        let expected = (granuleBase ?? 0) + samples
        if granule < lastGranule {
            report.problem("granule position goes backwards on page \(report.pages)")
        } else if eos {
            if granule > expected || expected - granule > pageSamples {
                report.problem("the final granule position \(granule) does not fit the \(expected) samples (end trim beyond the last page)")
            }
        } else if granule != expected {
            report.problem("page \(report.pages) has granule position \(granule), the packets add up to \(expected)")
        }
        lastGranule = granule
    }

    /// A page whose last packet ends on it is where `repair` may cut the file.
    mutating func markRepairPoint(_ og: inout ogg_page, eos: Bool) {
        let segments = Int(og.header[26])
        guard segments > 0, og.header[26 + segments] < 255 else { return }
        report.lastGoodEnd = offset
        report.lastGoodHasEOS = eos
        report.lastGoodHeaderOffset = pageStart
    }

    // MARK: - The end

    /// After the last page: the last gap closes, the duration and the gaps are measured in
    /// playback time, and the file must end complete.
    mutating func finish(fileSize: Int, bytesRead: Int) {
        closeGap(at: samples)
        measurePlayback()
        checkEnd(fileSize: fileSize, bytesRead: bytesRead)
    }

    /// Duration from the last granule position less pre-skip; gaps clipped to what a player
    /// plays (pre-skip and end trim).
    mutating func measurePlayback() {
        if lastGranule >= 0 {
            let pre = Int64(report.head?.preSkip ?? 0)
            report.durationMillis = Double(max(0, lastGranule - pre)) / 48
        }
        let duration = report.durationMillis
        report.gaps = report.gaps.compactMap { g in
            let s = max(0, g.startMillis), e = min(duration, g.startMillis + g.durationMillis)
            return e > s ? OggOpusReport.Gap(startMillis: s, durationMillis: e - s) : nil
        }
    }

    /// Both headers, an end-of-stream page, and nothing after the last page.
    mutating func checkEnd(fileSize: Int, bytesRead: Int) {
        if headerPackets < 2 { report.problem("the file ends before its Opus headers are complete") }
        if !report.hasEOS { report.problem("the last page is not marked end-of-stream (was the recording interrupted? try repair)") }
        if bytesRead > offset && offset < fileSize {
            let tail = fileSize - offset
            if tail > 0 && report.hasEOS { report.problem("\(tail) bytes follow the end-of-stream page") }
            else if tail > 0 { report.problem("\(tail) bytes at the end are not a complete page") }
        }
    }
}

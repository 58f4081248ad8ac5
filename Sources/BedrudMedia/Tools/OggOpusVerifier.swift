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
        var r = OggOpusReport()
        var scanner = OggPageScanner(bytes)
        var os = ogg_stream_state()
        var streamReady = false
        defer { if streamReady { ogg_stream_clear(&os) } }
        var serial: Int32 = 0
        var offset = 0  // bytes consumed from `bytes` by libogg
        var pageStart = 0
        var expectedPageNo: Int = 0
        var headerPackets = 0
        var samples: Int64 = 0  // decoded samples of complete audio packets so far
        var granuleBase: Int64?
        var lastGranule: Int64 = -1
        var gapStart: Int64?
        var sawOtherStream = false
        var og = ogg_page()
        var op = ogg_packet()
        var stopped = false

        func closeGap(_ r: inout OggOpusReport, at end: Int64) {
            if let s = gapStart {
                let pre = Double(r.head?.preSkip ?? 0)
                r.gaps.append(.init(startMillis: (Double(s) - pre) / 48, durationMillis: Double(end - s) / 48))
                gapStart = nil
            }
        }

        scan: while !stopped {
            let size: Int
            switch scanner.next(into: &og) {
            case .end: break scan
            case .skipped(let n):
                r.problem("\(n) bytes of damaged or foreign data at offset \(offset) (bad capture pattern or CRC)")
                offset += n
                continue scan
            case .page(let n): size = n
            }
            pageStart = offset
            offset += size
            let pageSerial = ogg_page_serialno(&og)
            if !streamReady {
                guard ogg_page_bos(&og) != 0 else {
                    r.problem("the first page is not a beginning-of-stream page")
                    stopped = true
                    break
                }
                serial = pageSerial
                ogg_stream_init(&os, serial)
                streamReady = true
            } else if pageSerial != serial {
                if !sawOtherStream { r.problem("more than one logical stream; only serial \(serial) was checked") }
                sawOtherStream = true
                continue
            }
            r.pages += 1
            let pageNo = Int(ogg_page_pageno(&og))
            if pageNo != expectedPageNo { r.problem("page \(r.pages) has sequence number \(pageNo), expected \(expectedPageNo)") }
            expectedPageNo = pageNo + 1
            if ogg_page_eos(&og) != 0 { r.hasEOS = true }
            let granule = ogg_page_granulepos(&og)
            if ogg_stream_pagein(&os, &og) != 0 {
                r.problem("page \(r.pages) could not be added to the stream")
                continue
            }
            var pageSamples: Int64 = 0
            var completed = 0
            var badPacket = false
            while true {
                let pr = ogg_stream_packetout(&os, &op)
                if pr == 0 { break }
                if pr < 0 {
                    r.problem("a packet is missing before page \(r.pages) (lost or damaged page)")
                    continue
                }
                completed += 1
                let data = UnsafeRawBufferPointer(start: op.packet, count: op.bytes)
                if headerPackets == 0 {
                    headerPackets = 1
                    if let h = OpusHead.parse(Array(data)) { r.head = h } else { r.problem("the first packet is not a valid OpusHead") }
                    if ogg_page_packets(&og) != 1 || granule != 0 { r.problem("OpusHead must be alone on the first page with granule 0") }
                    continue
                }
                if headerPackets == 1 {
                    headerPackets = 2
                    if let t = OpusTags.parse(Array(data)) { r.tags = t } else { r.problem("the second packet is not valid OpusTags") }
                    continue
                }
                guard let info = OpusPacketInfo.parse(data) else {
                    if !badPacket { r.problem("audio packet \(r.audioPackets + 1) is not a valid Opus packet") }
                    badPacket = true
                    r.audioPackets += 1
                    continue
                }
                r.audioPackets += 1
                if info.isConcealmentRequest {
                    if gapStart == nil { gapStart = samples }
                } else {
                    closeGap(&r, at: samples)
                }
                samples += Int64(info.samples)
                pageSamples += Int64(info.samples)
            }
            if headerPackets == 2 && !r.headersComplete && completed > 0 {
                // The page that completed OpusTags must hold no audio and have granule 0.
                if granule != 0 { r.problem("the OpusTags page must have granule position 0") }
                if r.audioPackets > 0 { r.problem("audio data starts on the OpusTags page") }
                r.headersComplete = true
                r.lastGoodEnd = offset
                r.lastGoodHeaderOffset = pageStart
                continue
            }
            guard r.headersComplete else { continue }
            if completed == 0 {
                if granule != -1 { r.problem("page \(r.pages) completes no packet but has granule \(granule)") }
                continue
            }
            if granuleBase == nil {
                // The first audio page may start the stream later than 0 (RFC 7845 §4.5).
                granuleBase = granule - samples
                if granule < samples && ogg_page_eos(&og) == 0 {
                    r.problem("the first audio page's granule position \(granule) is smaller than its \(samples) samples")
                }
            }
            let expected = (granuleBase ?? 0) + samples
            if granule < lastGranule {
                r.problem("granule position goes backwards on page \(r.pages)")
            } else if ogg_page_eos(&og) != 0 {
                if granule > expected || expected - granule > pageSamples {
                    r.problem("the final granule position \(granule) does not fit the \(expected) samples (end trim beyond the last page)")
                }
            } else if granule != expected {
                r.problem("page \(r.pages) has granule position \(granule), the packets add up to \(expected)")
            }
            lastGranule = granule
            let segments = Int(og.header[26])
            if segments > 0, og.header[26 + segments] < 255 {
                r.lastGoodEnd = offset
                r.lastGoodHasEOS = ogg_page_eos(&og) != 0
                r.lastGoodHeaderOffset = pageStart
            }
            if ogg_page_eos(&og) != 0 { stopped = true }
        }
        closeGap(&r, at: samples)
        if lastGranule >= 0 {
            let pre = Int64(r.head?.preSkip ?? 0)
            r.durationMillis = Double(max(0, lastGranule - pre)) / 48
        }
        // Gaps in playback time: clipped to what a player plays (pre-skip and end trim).
        r.gaps = r.gaps.compactMap { g in
            let s = max(0, g.startMillis), e = min(r.durationMillis, g.startMillis + g.durationMillis)
            return e > s ? OggOpusReport.Gap(startMillis: s, durationMillis: e - s) : nil
        }
        if headerPackets < 2 { r.problem("the file ends before its Opus headers are complete") }
        if !r.hasEOS { r.problem("the last page is not marked end-of-stream (was the recording interrupted? try repair)") }
        if scanner.bytesRead > offset && offset < bytes.count {
            let tail = bytes.count - offset
            if tail > 0 && r.hasEOS { r.problem("\(tail) bytes follow the end-of-stream page") }
            else if tail > 0 { r.problem("\(tail) bytes at the end are not a complete page") }
        }
        return r
    }
}

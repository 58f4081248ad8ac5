import COgg

/// The audio packets of an Ogg Opus file (RFC 7845), as they are, with the sample at
/// which each starts, for `play` to publish without re-encoding.
///
/// Packets live in one flat buffer (no array per packet). A packet's start comes from
/// its page's granule position: the packets a page completes end at that granule, so
/// each one starts at `granule − (samples of it and the packets after it on the page)`.
/// The end-of-stream page may end early (end trimming), so its packets follow on from
/// the previous ones. Sample 0 is the first audio packet's start; the first `preSkip`
/// samples are the encoder's priming, not part of the playable length.
public struct OggOpusPackets: Sendable {
    public struct Entry: Sendable, Equatable {
        public var offset: Int
        public var length: Int
        /// First sample (48 kHz) from the first packet's start.
        public var start: Int64
        /// Samples this packet decodes to (RFC 6716 §3.4).
        public var samples: Int
    }

    public let head: OpusHead
    public let storage: [UInt8]
    public let entries: [Entry]
    /// Where the packets end on the timeline (the last packet's start + samples).
    public let endSample: Int64
    /// Damaged pages, invalid Opus packets and granule positions that did not fit,
    /// skipped or corrected while reading (the file still plays).
    public let problems: Int

    /// Playable length in samples: the timeline minus the pre-skip.
    public var playableSamples: Int64 { max(0, endSample - Int64(head.preSkip)) }
    public var isStereo: Bool { head.channelCount > 1 }

    public func packet(_ i: Int) -> ArraySlice<UInt8> { storage[entries[i].offset..<entries[i].offset + entries[i].length] }

    public enum ReadError: Error, Equatable, CustomStringConvertible {
        case notOggOpus
        case multichannel(Int, family: Int)
        case noAudio

        public var description: String {
            switch self {
            case .notOggOpus: return "not an Ogg Opus file (no OpusHead in the first Ogg stream)"
            case .multichannel(let n, let f):
                return "the file has \(n) channels (mapping family \(f)); a WebRTC microphone track carries mono or stereo Opus only"
            case .noAudio: return "the file has no audio packets"
            }
        }
    }

    /// A granule jump longer than this (1 s) is damage, not a pause: played contiguously.
    static let maxGapSamples: Int64 = 48_000

    /// Reads every audio packet of the first logical stream.
    public static func read(_ bytes: [UInt8]) throws(ReadError) -> OggOpusPackets {
        var scanner = OggPageScanner(bytes)
        var os = ogg_stream_state()
        var streamReady = false
        defer { if streamReady { ogg_stream_clear(&os) } }
        var og = ogg_page()
        var op = ogg_packet()
        var serial: Int32 = 0
        var headers = 0
        var head: OpusHead?
        var storage: [UInt8] = []
        storage.reserveCapacity(bytes.count)
        var entries: [Entry] = []
        var problems = 0
        var end: Int64 = 0           // timeline end so far, in file granule units
        var origin: Int64?           // file granule of the first packet's start
        var pageFirst = 0            // index of the first entry this page completed
        var shift: Int64 = 0         // granule discontinuities so far

        scan: while true {
            switch scanner.next(into: &og) {
            case .end: break scan
            case .skipped: problems += 1; continue scan
            case .page: break
            }
            if !streamReady {
                guard ogg_page_bos(&og) != 0 else { throw .notOggOpus }
                serial = ogg_page_serialno(&og)
                ogg_stream_init(&os, serial)
                streamReady = true
            } else if ogg_page_serialno(&og) != serial {
                continue
            }
            let granule = ogg_page_granulepos(&og)
            let eos = ogg_page_eos(&og) != 0
            guard ogg_stream_pagein(&os, &og) == 0 else { problems += 1; continue }
            pageFirst = entries.count
            while true {
                let pr = ogg_stream_packetout(&os, &op)
                if pr == 0 { break }
                if pr < 0 { problems += 1; continue }
                let data = UnsafeRawBufferPointer(start: op.packet, count: op.bytes)
                if headers == 0 {
                    guard let h = OpusHead.parse(Array(data)) else { throw .notOggOpus }
                    guard h.channelCount >= 1, h.channelCount <= 2, h.mappingFamily == 0 else {
                        throw .multichannel(Int(h.channelCount), family: Int(h.mappingFamily))
                    }
                    head = h
                    headers = 1
                    continue
                }
                if headers == 1 { headers = 2; continue }  // OpusTags: nothing to publish
                guard data.count > 0, data.count <= 1275 * 3, let info = OpusPacketInfo.parse(data), info.samples > 0 else {
                    problems += 1
                    continue
                }
                entries.append(Entry(offset: storage.count, length: data.count, start: 0, samples: info.samples))
                storage.append(contentsOf: data)
            }
            guard entries.count > pageFirst else { continue }
            // Place this page's packets on the timeline from its granule position.
            let pageSamples = entries[pageFirst...].reduce(Int64(0)) { $0 + Int64($1.samples) }
            let placed = granule >= 0 && !eos
            var first = placed ? granule - pageSamples - shift : end
            if origin == nil {
                origin = max(0, first)
                end = origin!
            }
            if first < end || first - end > Self.maxGapSamples {
                // Overlaps the packets before, or a jump no encoder writes: play on
                // contiguously, and read later granules relative to this one (one problem
                // per discontinuity, not one per page after it).
                if placed {
                    problems += 1
                    shift += first - end
                }
                first = end
            }
            var s = first
            for i in pageFirst..<entries.count {
                entries[i].start = s - origin!
                s += Int64(entries[i].samples)
            }
            end = s
        }
        guard let head else { throw .notOggOpus }
        guard !entries.isEmpty else { throw .noAudio }
        return OggOpusPackets(head: head, storage: storage, entries: entries, endSample: end - (origin ?? 0), problems: problems)
    }
}

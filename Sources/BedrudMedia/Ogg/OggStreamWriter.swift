import COgg

/// One logical Ogg stream being written (RFC 3533 pages framed by libogg).
///
/// A muxer, not a file writer: finished pages go to a ``PageConsumer`` under a stream id.
/// Owned by one thread (the media thread). libogg's buffers grow to the size of one page
/// and are then reused, so steady-state writing does not allocate.
final class OggStreamWriter {
    private let os: UnsafeMutablePointer<ogg_stream_state>
    private let page: UnsafeMutablePointer<ogg_page>
    private var packetNumber: Int64 = 0
    let streamID: Int
    unowned let consumer: PageConsumer
    /// Samples added since the last page went out; a page is forced once this reaches
    /// `flushSamples`, so a reader (or a crash) never lags more than that.
    private var samplesSincePage = 0
    let flushSamples: Int
    private(set) var pagesWritten = 0
    private(set) var bytesWritten = 0
    private(set) var finished = false

    init(serial: Int32, streamID: Int, consumer: PageConsumer, flushSamples: Int = 48000) {
        os = .allocate(capacity: 1)
        page = .allocate(capacity: 1)
        page.initialize(to: ogg_page())
        ogg_stream_init(os, serial)
        self.streamID = streamID
        self.consumer = consumer
        self.flushSamples = flushSamples
    }

    deinit {
        ogg_stream_clear(os)
        os.deallocate()
        page.deallocate()
    }

    /// Writes OpusHead on its own BOS page and OpusTags on the next (RFC 7845 §3).
    func writeHeaders(head: [UInt8], tags: [UInt8]) {
        submit(head, granule: 0, bos: true, eos: false)
        flush()
        submit(tags, granule: 0, bos: false, eos: false)
        flush()
    }

    private func submit(_ bytes: [UInt8], granule: Int64, bos: Bool, eos: Bool) {
        bytes.withUnsafeBytes { packet($0, granule: granule, samples: 0, bos: bos, eos: eos) }
    }

    /// Adds one packet. `granule` is the stream's granule position after this packet.
    func packet(_ bytes: UnsafeRawBufferPointer, granule: Int64, samples: Int, bos: Bool = false, eos: Bool = false) {
        guard !finished else { return }
        var op = ogg_packet()
        op.packet = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
        op.bytes = bytes.count
        op.b_o_s = bos ? 1 : 0
        op.e_o_s = eos ? 1 : 0
        op.granulepos = granule
        op.packetno = packetNumber
        packetNumber += 1
        withUnsafeMutablePointer(to: &op) { _ = ogg_stream_packetin(os, $0) }
        samplesSincePage += samples
        if eos {
            flush()
            finished = true
        } else if samplesSincePage >= flushSamples {
            flush()
        } else {
            while ogg_stream_pageout(os, page) != 0 { emit() }
        }
    }

    /// Forces every buffered packet out as pages.
    func flush() {
        while ogg_stream_flush(os, page) != 0 { emit() }
    }

    private func emit() {
        let p = page.pointee
        consumer.writePage(
            streamID, header: UnsafeRawBufferPointer(start: p.header, count: p.header_len),
            body: UnsafeRawBufferPointer(start: p.body, count: p.body_len))
        pagesWritten += 1
        bytesWritten += p.header_len + p.body_len
        samplesSincePage = 0
    }
}

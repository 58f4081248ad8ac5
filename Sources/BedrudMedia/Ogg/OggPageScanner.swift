import COgg

/// Finds the Ogg pages in a file's bytes with libogg's sync layer, feeding it 64 KiB at a
/// time: the one page loop of `verify` (``OggOpusVerifier``) and of `play` and the report's
/// levels (``OggOpusPackets``). A page handed out
/// points into the scanner's buffer and is valid until the next call.
struct OggPageScanner: ~Copyable {
    enum Step {
        /// A whole page of this many bytes (CRC checked) is in the `ogg_page`.
        case page(bytes: Int)
        /// This many bytes were skipped: damaged, foreign or not a page.
        case skipped(bytes: Int)
        /// Every byte has been read.
        case end
    }

    private var sync = ogg_sync_state()
    private let bytes: [UInt8]
    private var fed = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        ogg_sync_init(&sync)
    }

    deinit {
        var state = sync  // the same buffer pointer; deinit's self is immutable
        ogg_sync_clear(&state)
    }

    /// Bytes handed to libogg so far (pages found plus what it still holds).
    var bytesRead: Int { fed }

    /// The next page (into `page`), a run of bytes that is not one, or the end.
    mutating func next(into page: inout ogg_page) -> Step {
        while true {
            let res = ogg_sync_pageseek(&sync, &page)
            if res > 0 { return .page(bytes: Int(res)) }
            if res < 0 { return .skipped(bytes: Int(-res)) }
            guard fed < bytes.count else { return .end }
            let n = min(65536, bytes.count - fed)
            guard let buf = ogg_sync_buffer(&sync, n) else { return .end }
            let from = fed
            bytes.withUnsafeBytes { src in
                if let s = src.baseAddress { UnsafeMutableRawPointer(buf).copyMemory(from: s + from, byteCount: n) }
            }
            ogg_sync_wrote(&sync, n)
            fed += n
        }
    }
}

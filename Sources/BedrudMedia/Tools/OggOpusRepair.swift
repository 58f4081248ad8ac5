#if canImport(Glibc)
import Glibc
#endif
import COgg

/// Reads and writes whole files for the tools (plain POSIX; the tools are not on a hot path).
enum FileBytes {
    static func read(_ path: String, limit: Int = 1 << 32) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw MediaIOError("Cannot open", path: path, errno: errno) }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaIOError("Cannot read", path: path, errno: errno)
            }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
            if out.count > limit { throw MediaIOError(message: "\(path) is larger than \(limit) bytes; not an audio recording?") }
        }
        return out
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        let sink = try FileSink(path: path)
        try bytes.withUnsafeBytes { try sink.write($0) }
        try sink.close(clean: true)
    }
}

extension OggOpusVerifier {
    /// Verifies the file at `path`.
    public static func verify(path: String) throws -> OggOpusReport {
        verify(try FileBytes.read(path))
    }
}

/// What `repair` did.
public struct OggOpusRepairResult: Sendable {
    /// The finished file.
    public var outputPath: String
    /// Bytes dropped from the end (an incomplete page, a packet cut in half).
    public var bytesDropped: Int
    /// Whether the EOS flag had to be set on the last page.
    public var markedEndOfStream: Bool
    /// The verification of the repaired file.
    public var report: OggOpusReport
}

/// Finishes an Ogg Opus file left behind by a crash (RFC 7845 streams written as
/// `*.part`): keeps everything up to the last complete, intact page that ends on a
/// packet boundary, marks that page end-of-stream (recomputing its CRC), writes the
/// result under the final name and removes the `.part` file.
public enum OggOpusRepair {
    /// Repairs bytes in memory. Throws when not even the two header pages survived.
    public static func repair(_ bytes: [UInt8]) throws -> (bytes: [UInt8], dropped: Int, markedEOS: Bool) {
        let scan = OggOpusVerifier.verify(bytes)
        guard scan.headersComplete, scan.head != nil else {
            throw MediaIOError(message: "Nothing to recover: the file ends before its Opus headers are complete.")
        }
        var out = Array(bytes[0..<scan.lastGoodEnd])
        var marked = false
        if !scan.lastGoodHasEOS {
            let h = scan.lastGoodHeaderOffset
            let segments = Int(out[h + 26])
            let headerLen = 27 + segments
            var bodyLen = 0
            for i in 0..<segments { bodyLen += Int(out[h + 27 + i]) }
            out[h + 5] |= 0x04  // header_type_flag: end of stream
            out.withUnsafeMutableBufferPointer { buf in
                guard let base = buf.baseAddress else { return }
                var page = ogg_page(header: base + h, header_len: headerLen, body: base + h + headerLen, body_len: bodyLen)
                ogg_page_checksum_set(&page)
            }
            marked = true
        }
        return (out, bytes.count - out.count, marked)
    }

    /// Repairs `path` (normally `NAME.opus.part`) into `outputPath` (default: `path`
    /// without `.part`), then removes `path`.
    public static func repair(path: String, outputPath: String? = nil) throws -> OggOpusRepairResult {
        let input = try FileBytes.read(path)
        let fixed = try repair(input)
        var target = outputPath ?? path
        if outputPath == nil {
            if target.hasSuffix(".part") { target.removeLast(5) } else { target += ".repaired.opus" }
        }
        try FileBytes.write(fixed.bytes, to: target)
        if target != path { unlink(path) }
        return OggOpusRepairResult(
            outputPath: target, bytesDropped: fixed.dropped, markedEndOfStream: fixed.markedEOS,
            report: OggOpusVerifier.verify(fixed.bytes))
    }
}

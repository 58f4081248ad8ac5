#if canImport(Glibc)
import Glibc
#endif
import COgg

/// Reads and writes whole files for the tools (plain POSIX; the tools are not on a hot path).
package enum FileBytes {
    package static func read(_ path: String, limit: Int = 1 << 32) throws -> [UInt8] {
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

    /// Writes a new file (`O_EXCL`, mode 0640), synced.
    static func write(_ bytes: [UInt8], toNew path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
        if fd < 0 { throw MediaIOError("Cannot create", path: path, errno: errno) }
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { failure = n < 0 ? errno : EIO; return }
                off += n
            }
        }
        if failure == 0 && fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure != 0 {
            unlink(path)
            throw MediaIOError("Cannot write", path: path, errno: failure)
        }
    }

    static func syncDirectory(of path: String) {
        let dir = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let dfd = open(dir.isEmpty ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
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
    /// The finished file (the input itself when it was already finished).
    public var outputPath: String
    /// Bytes dropped from the end (an incomplete page, a packet cut in half).
    public var bytesDropped: Int
    /// Whether the EOS flag had to be set on the last page.
    public var markedEndOfStream: Bool
    /// True when the input was a finished, valid recording: nothing was written or removed.
    public var unchanged: Bool
    /// The verification of the repaired file, as read back from disk.
    public var report: OggOpusReport
}

/// Finishes an Ogg Opus file left behind by a crash (RFC 7845 streams written as
/// `*.part`): keeps everything up to the last complete, intact page that ends on a
/// packet boundary and marks that page end-of-stream (recomputing its CRC).
///
/// Safe to run on anything: a file that is already a finished, valid recording is left
/// exactly as it is. The result is written next to the original under a temporary
/// name, synced, read back and verified, and only then linked to its final name (never
/// replacing a file that is there); the `.part` input is removed after that. A damaged
/// file that is not a `.part` is never removed: the result is `NAME.repaired.opus`.
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
    /// without `.part`; for a damaged file without `.part`, `NAME.repaired.opus`).
    public static func repair(path: String, outputPath: String? = nil) throws -> OggOpusRepairResult {
        let input = try FileBytes.read(path)
        let isPart = path.hasSuffix(".part")
        let scan = OggOpusVerifier.verify(input)
        if !isPart && outputPath == nil && scan.isValid {
            return OggOpusRepairResult(outputPath: path, bytesDropped: 0, markedEndOfStream: false, unchanged: true, report: scan)
        }
        let fixed = try repair(input)
        var target = outputPath ?? path
        if outputPath == nil {
            if isPart { target.removeLast(5) } else { target = (target.hasSuffix(".opus") ? String(target.dropLast(5)) : target) + ".repaired.opus" }
        }
        if access(target, F_OK) == 0 {
            throw MediaIOError(message: "\(target) exists already; repair never replaces a file (move it away to repair \(path) again)")
        }
        // Write beside the target, sync, read back, verify; only then give it its name.
        let temporary = target + ".repairing"
        try FileBytes.write(fixed.bytes, toNew: temporary)
        let written: [UInt8]
        do { written = try FileBytes.read(temporary) } catch { unlink(temporary); throw error }
        let report = OggOpusVerifier.verify(written)
        guard written == fixed.bytes, report.isValid else {
            unlink(temporary)
            throw MediaIOError(message: "the repaired copy of \(path) did not verify (\(report.problems.first ?? "it differs from what was written")); \(path) is untouched")
        }
        if link(temporary, target) != 0 {
            let e = errno
            unlink(temporary)
            throw MediaIOError("Cannot create", path: target, errno: e)
        }
        unlink(temporary)
        FileBytes.syncDirectory(of: target)
        if isPart && target != path { unlink(path) }
        return OggOpusRepairResult(
            outputPath: target, bytesDropped: fixed.dropped, markedEndOfStream: fixed.markedEOS, unchanged: false, report: report)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Room kept on the disk for finishing a session when the disk fills up.
///
/// A recording that finds the disk full must still close its files properly: the pages
/// kept in memory, the EOS pages, the last lines of `events.jsonl`, `transcript.vtt`
/// and `summary.json`. So the session folder starts with a file of ``defaultBytes``
/// zeros (`.disk-reserve`, really written, so it holds blocks on any filesystem) that is
/// deleted when the session stops because of a full disk, or at the end of every
/// session. A crash leaves it behind; `repair` removes it.
///
/// Thread-safe: created by the session, released from any task.
final class DiskReserve: Sendable {
    static let fileName = ".disk-reserve"
    /// Enough for a few seconds of every stream's kept pages, the EOS pages and the text files.
    static let defaultBytes = 128 << 10
    let path: String
    private let held = Mutex<Bool>(false)

    /// Writes the reserve into `folder`. When the disk has no room even for that, there
    /// is no reserve (``isHeld`` false) and the session records as far as it can.
    init(folder: String, bytes: Int = DiskReserve.defaultBytes) {
        path = folder + "/" + Self.fileName
        // A disk with less room than that gets a smaller reserve (the EOS pages and the
        // text files need a few KiB), rather than none.
        for size in [bytes, bytes / 4, bytes / 16] where size > 0 {
            if Self.create(path, bytes: size) {
                held.withLock { $0 = true }
                return
            }
        }
    }

    private static func create(_ path: String, bytes: Int) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        var ok = true
        let chunk = [UInt8](repeating: 0, count: 16 << 10)
        var left = bytes
        chunk.withUnsafeBytes { raw in
            while left > 0 && ok {
                let n = Glibc.write(fd, raw.baseAddress!, min(left, raw.count))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { ok = false } else { left -= n }
            }
        }
        if ok && fsync(fd) != 0 && errno != EINVAL { ok = false }
        close(fd)
        if !ok { unlink(path) }
        return ok
    }

    var isHeld: Bool { held.withLock { $0 } }

    /// Deletes the reserve (its room is free again). Idempotent.
    func release() {
        held.withLock { h in
            if h { unlink(path) }
            h = false
        }
    }
}

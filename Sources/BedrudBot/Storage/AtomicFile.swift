#if canImport(Glibc)
import Glibc
#endif
import BedrudProtocol

/// Writes a file whole or not at all, the one way the bot does it: the bytes go to a
/// temporary file beside it (created afresh, with the file's mode), are flushed to disk
/// (`fsync`), and the temporary file is then put in place in one step, so a reader or a
/// crash sees the old file or the new one, never part of either.
///
/// - Replacing (`summary.json` after `on_finish`, `report.html`, the config file, a stored
///   session): `rename(2)` over the old file; a stale temporary file of an earlier crash
///   is removed first, and the temporary file is removed again if any step fails.
/// - Creating only (a session's finished files): `link(2)`, which never replaces a file
///   that is already there; a temporary file that exists is someone else's and is left
///   alone (the write fails), and on a failure what was written stays in the temporary
///   file.
enum AtomicFile {
    /// A step that failed, with its `errno`.
    struct Failure: Error, CustomStringConvertible, Sendable {
        enum Step: Sendable {
            /// The temporary file could not be created.
            case create
            /// Writing or flushing the bytes failed (a full disk).
            case write
            /// The rename (or link) into place failed.
            case place
        }

        let path: String
        let temporary: String
        let replacing: Bool
        let step: Step
        let code: Int32

        /// `strerror` of ``code``.
        var reason: String { String(cString: strerror(code)) }

        var description: String {
            switch step {
            case .create: return "cannot create \(temporary): \(reason)"
            case .place where replacing: return "cannot replace \(path): \(reason)"
            case .write, .place:
                return "cannot write \(path): \(reason)" + (replacing ? "" : " (what was written is in \(temporary))")
            }
        }
    }

    /// A hidden temporary beside `path`, named for this process (`.config.1234.tmp`): what
    /// the config file and the secrets are written through, so two processes never share one.
    static func hiddenTemporary(for path: String) -> String {
        PathText.deletingLastComponent(path) + "/.\(PathText.lastComponent(path)).\(getpid()).tmp"
    }

    /// Writes `bytes` to `path` through `temporary` (in the same folder), with `mode`.
    /// - Parameters:
    ///   - replacing: rename over an existing `path`; otherwise an existing `path` is an
    ///     error (`EEXIST`) and is left as it is.
    ///   - syncFolder: also flush the folder, so the rename itself survives a power cut
    ///     (secrets and config: written rarely, lost expensively).
    static func write<Bytes: Collection<UInt8>>(_ bytes: Bytes, to path: String, through temporary: String, mode: mode_t,
                                                replacing: Bool, syncFolder: Bool = false) throws(Failure) {
        func failure(_ step: Failure.Step, _ code: Int32) -> Failure {
            Failure(path: path, temporary: temporary, replacing: replacing, step: step, code: code)
        }
        if replacing { unlink(temporary) }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure(.create, errno) }
        _ = fchmod(fd, mode)  // whatever the umask
        var code = bytes.withContiguousStorageIfAvailable { writeAll(fd, UnsafeRawBufferPointer($0)) }
            ?? Array(bytes).withUnsafeBytes { writeAll(fd, $0) }
        if code == 0, fsync(fd) != 0 { code = errno }
        close(fd)
        guard code == 0 else {
            if replacing { unlink(temporary) }
            throw failure(.write, code)
        }
        if replacing {
            guard rename(temporary, path) == 0 else {
                let e = errno
                unlink(temporary)
                throw failure(.place, e)
            }
        } else {
            guard link(temporary, path) == 0 else { throw failure(.place, errno) }
            unlink(temporary)
        }
        if syncFolder {
            let dfd = open(PathText.deletingLastComponent(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dfd >= 0 {
                fsync(dfd)
                close(dfd)
            }
        }
    }

    /// Writes all of `raw`, retrying interrupted writes; 0, or the `errno` of the failure
    /// (`EIO` for a write that wrote nothing).
    private static func writeAll(_ fd: Int32, _ raw: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < raw.count {
            let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return n < 0 ? errno : EIO }
            offset += n
        }
        return 0
    }
}

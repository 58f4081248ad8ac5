#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where the bytes of one Ogg file go. Writers take a sink, never a path.
///
/// Thread contract: after it is handed to a ``PageConsumer``, only that consumer's
/// thread (the writer thread) calls it.
public protocol PageSink: AnyObject {
    /// Appends bytes, all of them or none: a write that fails part-way (a full disk)
    /// takes back what it wrote, so a file never ends in half a page. Throws
    /// ``MediaIOError`` (with the errno) when they could not be stored.
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// Makes what was written durable (fsync for files).
    func sync() throws
    /// Ends the file. `clean` means the stream was finished (EOS written): a file sink
    /// renames `*.part` to its final name; an unclean close leaves `*.part` for `repair`.
    func close(clean: Bool) throws
}

/// The error a sink or a tool reports: what happened, to which file, and the errno.
public struct MediaIOError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public let errno: Int32
    init(_ what: String, path: String, errno: Int32) {
        self.errno = errno
        // Only a failed write is about the folder; a file that cannot be read is about the file.
        let reading = what == "Cannot open" || what == "Cannot read"
        let hint = reading ? (errno == EACCES ? " Check the file's permissions." : "") : " Check that the directory exists and is writable."
        self.description = "\(what) \(path): \(String(cString: strerror(errno))).\(hint)"
    }
    init(message: String) {
        self.description = message
        self.errno = 0
    }
}

/// A sink that writes `path.part` with plain write(2) calls (no user-space buffering, so a
/// `kill -9` loses nothing the process already wrote) and renames it to `path` on a
/// clean close.
public final class FileSink: PageSink {
    public let path: String
    public var partPath: String { path + ".part" }
    private var fd: Int32
    /// Bytes in the file: where a failed write is cut back to.
    private var size: off_t = 0

    /// - Parameters:
    ///   - mode: permissions of the new file (applied exactly, whatever the umask).
    ///   - exclusive: fail with `EEXIST` instead of truncating a file that is already
    ///     there (two writers never share a file).
    public init(path: String, mode: mode_t = 0o644, exclusive: Bool = false) throws {
        self.path = path
        fd = open(path + ".part", O_WRONLY | O_CREAT | (exclusive ? O_EXCL : O_TRUNC) | O_CLOEXEC, mode)
        if fd < 0 { throw MediaIOError("Cannot create", path: path + ".part", errno: errno) }
        _ = fchmod(fd, mode)
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard fd >= 0, var p = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let n = Glibc.write(fd, p, left)
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                // All or nothing: cut off the part of this write that did land.
                if left != bytes.count { _ = ftruncate(fd, size); _ = lseek(fd, size, SEEK_SET) }
                throw MediaIOError("Cannot write", path: partPath, errno: e)
            }
            left -= n
            p += n
        }
        size += off_t(bytes.count)
    }

    public func sync() throws {
        if fd >= 0, fsync(fd) != 0 { throw MediaIOError("Cannot sync", path: partPath, errno: errno) }
    }

    public func close(clean: Bool) throws {
        guard fd >= 0 else { return }
        let syncFailed = fsync(fd) != 0 ? errno : 0
        Glibc.close(fd)
        fd = -1
        if syncFailed != 0 { throw MediaIOError("Cannot sync", path: partPath, errno: syncFailed) }
        if clean {
            if rename(partPath, path) != 0 { throw MediaIOError("Cannot rename", path: partPath, errno: errno) }
            // Make the rename itself durable.
            let dir = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            let dfd = open(dir.isEmpty ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dfd >= 0 {
                _ = fsync(dfd)
                Glibc.close(dfd)
            }
        }
    }
}

/// A sink that keeps the bytes in memory (tests, benchmarks). Readable from any thread.
public final class MemorySink: PageSink, @unchecked Sendable {
    // @unchecked: all state sits behind the Mutex.
    private let state = Mutex<(bytes: [UInt8], closed: Bool, clean: Bool)>(([], false, false))
    public init() {}
    public func write(_ bytes: UnsafeRawBufferPointer) throws { state.withLock { $0.bytes.append(contentsOf: bytes) } }
    public func sync() throws {}
    public func close(clean: Bool) throws { state.withLock { $0.closed = true; $0.clean = clean } }
    public var bytes: [UInt8] { state.withLock { $0.bytes } }
    public var isClosed: Bool { state.withLock { $0.closed } }
    public var closedCleanly: Bool { state.withLock { $0.clean } }
}

/// A sink that only counts bytes (the benchmark's "disk").
public final class CountingSink: PageSink {
    public private(set) var byteCount = 0
    public init() {}
    public func write(_ bytes: UnsafeRawBufferPointer) throws { byteCount += bytes.count }
    public func sync() throws {}
    public func close(clean: Bool) throws {}
}

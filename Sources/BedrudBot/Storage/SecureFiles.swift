#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// File operations for secrets: owner-only permissions, atomic replacement, and a
/// refusal to read a secret that other users could read.
public enum SecureFiles {
    public struct UnsafePermissions: Error, CustomStringConvertible, Sendable {
        public let path: String
        public let mode: UInt32
        public let isDirectory: Bool
        public let otherOwner: Bool
        public var description: String {
            if otherOwner {
                return "Refusing to use \(path): it belongs to another user. Fix it with: chown $(id -u) \(path)"
            }
            let want = isDirectory ? "700" : "600"
            return "Refusing to use \(path): its permissions (\(String(mode & 0o777, radix: 8))) let other users read it. Fix it with: chmod \(want) \(path)"
        }
    }

    /// Throws ``UnsafePermissions`` if group or others have any access, or it is not ours.
    public static func checkPrivate(_ path: String) throws {
        var st = stat()
        guard stat(path, &st) == 0 else { return }
        let isDir = (st.st_mode & S_IFMT) == S_IFDIR
        if st.st_uid != geteuid() {
            throw UnsafePermissions(path: path, mode: UInt32(st.st_mode), isDirectory: isDir, otherOwner: true)
        }
        if st.st_mode & 0o077 != 0 {
            throw UnsafePermissions(path: path, mode: UInt32(st.st_mode), isDirectory: isDir, otherOwner: false)
        }
    }

    /// Creates `path` (and parents) with mode 0700 if missing; checks it if present.
    public static func ensurePrivateDirectory(_ path: String) throws {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            guard isDir.boolValue else { throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: path]) }
            try checkPrivate(path)
            return
        }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chmod(path, 0o700)
    }

    /// Reads a secret file, refusing one others can read.
    public static func readPrivate(_ path: String) throws -> Data? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        try checkPrivate(path)
        return FileManager.default.contents(atPath: path)
    }

    /// Writes `data` to `path` atomically with mode 0600: a temporary file in the same
    /// folder, fsync, rename over the old one, fsync the folder.
    public static func writePrivate(_ data: Data, to path: String) throws {
        let dir = (path as NSString).deletingLastPathComponent
        let tmp = dir + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var ok = true
        data.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = write(fd, raw.baseAddress! + off, raw.count - off)
                if n <= 0 { ok = false; return }
                off += n
            }
        }
        fchmod(fd, 0o600)
        if fsync(fd) != 0 { ok = false }
        close(fd)
        guard ok, rename(tmp, path) == 0 else {
            let e = errno
            unlink(tmp)
            throw POSIXError(POSIXErrorCode(rawValue: e) ?? .EIO)
        }
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            fsync(dfd)
            close(dfd)
        }
    }

    /// Reads a password file: the first line, without its line ending. Refuses files
    /// that others can read.
    public static func readPassword(_ path: String) throws -> String {
        guard let data = try readPrivate(path) else {
            throw ConfigError(file: path, "password file not found")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw ConfigError(file: path, "password file is not UTF-8 text") }
        let first = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let pw = first.hasSuffix("\r") ? String(first.dropLast()) : first
        guard !pw.isEmpty else { throw ConfigError(file: path, "password file is empty") }
        return pw
    }
}

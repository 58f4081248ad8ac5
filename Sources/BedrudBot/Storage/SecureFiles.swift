#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import BedrudProtocol
import Dispatch

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
        var isDir = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            guard isDir else { throw CocoaError(.fileWriteFileExists, userInfo: ["NSFilePath": path]) }
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

    /// Writes `data` to `path` atomically with mode 0600 (``AtomicFile``): a hidden
    /// temporary file in the same folder, fsync, rename over the old one, fsync the folder.
    public static func writePrivate(_ data: Data, to path: String) throws {
        let tmp = AtomicFile.hiddenTemporary(for: path)
        do throws(AtomicFile.Failure) {
            try AtomicFile.write(data, to: path, through: tmp, mode: 0o600, replacing: true, syncFolder: true)
        } catch {
            throw POSIXError(POSIXErrorCode(rawValue: error.code) ?? .EIO)
        }
    }

    /// The most of a password file read: 4 KiB. A password is one line; a bigger file
    /// is a mistake (the wrong path), refused without reading it all.
    public static let maxPasswordFileBytes = 4096

    /// Checks a password file's owner and permissions without reading it: throws
    /// ``UnsafePermissions`` when others may read it, or a ``ConfigError`` for a file in
    /// the service manager's credentials folder that breaks ``credentialProblem``. A file
    /// that does not exist passes (reading it says so). `join` calls this whenever an
    /// instance names a password file, even when a stored session makes reading it
    /// unnecessary, so a bad mode is found at once and not at the next login.
    public static func checkPasswordFile(_ path: String, credentialsDirectory: String? = nil) throws {
        if let dir = credentialsDirectory, let real = resolvedInside(path, folder: dir) {
            var st = stat()
            guard stat(real, &st) == 0 else { return }
            if let problem = credentialProblem(mode: UInt32(st.st_mode), owner: UInt32(st.st_uid), me: UInt32(geteuid())) {
                throw ConfigError(file: path, problem)
            }
            return
        }
        try checkPrivate(path)
    }

    /// Reads a password file: the first line, without its line ending. Refuses files
    /// that others can read, except in the service manager's credentials folder
    /// (`credentialsDirectory`, from `$CREDENTIALS_DIRECTORY`): see ``credentialProblem``.
    /// Reads at most ``maxPasswordFileBytes``; a longer file is an error.
    public static func readPassword(_ path: String, credentialsDirectory: String? = nil) throws -> String {
        try checkPasswordFile(path, credentialsDirectory: credentialsDirectory)
        let real = credentialsDirectory.flatMap { resolvedInside(path, folder: $0) } ?? path
        let fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            throw ConfigError(file: path, errno == ENOENT ? "password file not found" : "cannot read the password file: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { throw ConfigError(file: path, "the password file is not a regular file") }
        let limit = maxPasswordFileBytes
        let bytes = try readCapped(fd, limit: limit, path: path, what: "password file")
        guard bytes.count <= limit else {
            throw ConfigError(file: path, "the password file is larger than \(limit) bytes; it should hold the password on its first line and nothing else")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw ConfigError(file: path, "password file is not UTF-8 text") }
        let first = text.unicodeScalars.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map { String(String.UnicodeScalarView($0)) } ?? ""
        let pw = first.hasSuffix("\r") ? String(Substring(first.unicodeScalars.dropLast())) : first
        guard !pw.isEmpty else { throw ConfigError(file: path, "password file is empty") }
        return pw
    }

    /// Reads `fd` to its end, but never more than `limit + 1` bytes, so that a file at the
    /// limit can be told from a longer one (a file may grow while it is read). Read by the
    /// config file and password file readers; a failed read is a ``ConfigError`` naming
    /// `path`: "cannot read the `what`: …".
    static func readCapped(_ fd: Int32, limit: Int, path: String, what: String) throws -> ArraySlice<UInt8> {
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count <= limit {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, limit + 1 - count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw ConfigError(file: path, "cannot read the \(what): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
        }
        return bytes[..<count]
    }

    // MARK: - Credentials from the service manager

    /// `path` with every link resolved, if it lies inside `folder` (also resolved);
    /// nil when it is elsewhere or does not exist.
    static func resolvedInside(_ path: String, folder: String) -> String? {
        guard folder.hasPrefix("/"), let dir = realpath(folder, nil) else { return nil }
        defer { free(dir) }
        guard let file = realpath(path, nil) else { return nil }
        defer { free(file) }
        let d = String(cString: dir), f = String(cString: file)
        return f.hasPrefix(d == "/" ? "/" : d + "/") ? f : nil
    }

    /// Why a file in the credentials folder may not be used, or nil if it may.
    ///
    /// systemd's `LoadCredential=` writes a credential 0400 owned by root and lets the
    /// service's user read it through an ACL, which `stat` shows as group read (mode 0440);
    /// on a file system without ACLs it makes the file the service user's instead. A
    /// Kubernetes Secret volume gives root-owned files with the pod's `fsGroup`. The folder
    /// itself is what keeps other users out (systemd: private to the unit; a pod: its own
    /// mount), so here a file is refused only if it is not a regular file, anyone at all
    /// ("other") may read it, anyone but its owner may change it, or it belongs to someone
    /// other than root or us.
    public static func credentialProblem(mode: UInt32, owner: UInt32, me: UInt32) -> String? {
        if mode & UInt32(S_IFMT) != UInt32(S_IFREG) { return "not a regular file" }
        if owner != 0 && owner != me {
            return "it belongs to another user (uid \(owner)); a credential must belong to root or to this user"
        }
        if mode & 0o007 != 0 || mode & 0o020 != 0 {
            return "its permissions (\(String(mode & 0o777, radix: 8))) let other users read or change it; make it 0400 or 0440"
        }
        return nil
    }
}

#if canImport(Glibc)
import Glibc
#endif
import BedrudMedia
import BedrudProtocol
import FoundationEssentials
import Dispatch
import Synchronization

/// One recording session's folder, owned by one writer for its whole life.
///
/// Two bots started in the same second with the same `--output` must never share a
/// folder or a file, so nothing here checks and then creates:
/// - the folder is made with `mkdir(2)`, which fails with `EEXIST` if another process got
///   there first; the next name (`-2`, `-3`, …) is tried then;
/// - every file in it is created with `O_EXCL`;
/// - the writer holds an exclusive `flock(2)` on the folder until it is done, so `repair`
///   (or anything else that takes the lock) can tell a live session from a crashed one.
///
/// Also the ``RecordingSinkFactory`` of the session's Ogg files (names from
/// ``RecordingFileName``; duplicates get `-2`, `-3`). Thread-safe: sinks are made on the
/// media thread, text files by the session.
public final class SessionFolder: RecordingSinkFactory, Sendable {
    public let path: String
    public let fileMode: mode_t
    private let lockFD: Mutex<Int32>
    private let state = Mutex<(used: Set<String>, paths: [RecordingOutput: String], current: [RecordingOutput: String],
                               made: [RecordingOutput: [String]])>((["room", "events", "summary", "transcript"], [:], [:], [:]))

    /// The error of a folder that another writer holds.
    public struct Busy: Error, CustomStringConvertible, Sendable {
        public let path: String
        public var description: String { "\(path) is being written by another bedrud-bot right now (its folder lock is held)" }
    }

    private init(path: String, lockFD: Int32, fileMode: mode_t) {
        self.path = path
        self.lockFD = Mutex(lockFD)
        self.fileMode = fileMode
    }

    deinit { lockFD.withLock { if $0 >= 0 { close($0) } } }

    /// Creates a new session folder at `base` (or `base-2`, `base-3`, … when taken),
    /// with any missing parents, and locks it.
    public static func create(base: String, directoryMode: mode_t, fileMode: mode_t) throws -> SessionFolder {
        let parent = PathText.deletingLastComponent(base)
        try makeParents(parent.isEmpty ? "." : parent, mode: directoryMode)
        var candidate = base
        var n = 2
        let directoryMode = directoryMode | 0o700  // the writer itself must be able to enter it
        while mkdir(candidate, directoryMode) != 0 {
            let e = errno
            guard e == EEXIST, n < 10_000 else {
                throw CommandFailure(.config, "cannot create the recording folder \(candidate): \(String(cString: strerror(e)))")
            }
            candidate = "\(base)-\(n)"
            n += 1
        }
        _ = chmod(candidate, directoryMode)
        guard let fd = try lock(candidate, wait: false) else { throw Busy(path: candidate) }
        return SessionFolder(path: candidate, lockFD: fd, fileMode: fileMode)
    }

    /// Takes over an existing folder (the developer recorder, `repair`): locks it, and
    /// throws ``Busy`` when a live writer holds it.
    public static func adopt(_ path: String, fileMode: mode_t = 0o640) throws -> SessionFolder {
        guard let fd = try lock(path, wait: false) else { throw Busy(path: path) }
        return SessionFolder(path: path, lockFD: fd, fileMode: fileMode)
    }

    /// Whether a live writer holds `path` (without taking the lock).
    public static func isBusy(_ path: String) -> Bool {
        guard let fd = try? lock(path, wait: false) else { return true }
        close(fd)
        return false
    }

    /// Opens `path` and takes an exclusive flock; nil when someone else holds it.
    static func lock(_ path: String, wait: Bool) throws -> Int32? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CommandFailure(.notFound, "cannot open the folder \(path): \(String(cString: strerror(errno)))")
        }
        if flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0 {
            close(fd)
            return nil
        }
        return fd
    }

    static func makeParents(_ dir: String, mode: mode_t) throws {
        var isDir = false
        if FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) {
            guard isDir else { throw CommandFailure(.config, "cannot record into \(dir): it is not a folder") }
            return
        }
        try makeParents(PathText.deletingLastComponent(dir), mode: mode)
        if mkdir(dir, mode) != 0 && errno != EEXIST {
            throw CommandFailure(.config, "cannot create the recording folder \(dir): \(String(cString: strerror(errno)))")
        }
    }

    /// Releases the lock: the session is finished.
    public func release() {
        lockFD.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    // MARK: - Files

    /// The path each Ogg output was given (final names, without `.part`).
    public var paths: [RecordingOutput: String] { state.withLock { $0.paths } }

    public func makeSink(for output: RecordingOutput) throws -> PageSink {
        guard case .participant(let identity, let name) = output else {
            let file = path + "/room.opus"
            state.withLock {
                $0.paths[output] = file
                $0.current[output] = file
                $0.made[output, default: []].append(file)
            }
            return try FileSink(path: file, mode: fileMode, exclusive: true)
        }
        let wanted = RecordingFileName.make(name.isEmpty ? identity : name)
        for _ in 0..<100 {
            let base = state.withLock { st -> String in
                // Compared without case: a folder copied to a Mac or a USB stick keeps both files.
                var b = wanted
                var i = 2
                while st.used.contains(b.lowercased()) {
                    b = "\(wanted)-\(i)"
                    i += 1
                }
                st.used.insert(b.lowercased())
                return b
            }
            let file = path + "/" + base + ".opus"
            do {
                let sink = try FileSink(path: file, mode: fileMode, exclusive: true)
                state.withLock {
                    $0.paths[output] = file
                    $0.current[output] = file
                    $0.made[output, default: []].append(file)
                }
                return sink
            } catch let e as MediaIOError where e.errno == EEXIST {
                continue  // a file of that name is there already: never write into it
            }
        }
        throw CommandFailure(.failure, "no free file name for \(wanted) in \(path)")
    }

    /// Every file each output was given, in the order they were made (a participant who
    /// came back as a new session has a second first file, `Alice-2.opus`; a rotated
    /// output its segments): the n-th `fileStarted` of an output is its n-th file here.
    public var madePaths: [RecordingOutput: [String]] { state.withLock { $0.made } }

    /// The file of each output's segment being written now (final names, without `.part`).
    public var currentPaths: [RecordingOutput: String] { state.withLock { $0.current } }

    /// Segment `segment` of a rotated output: the first file's name with the number
    /// before the extension, three digits or more (`Alice.opus`, `Alice.002.opus`, …,
    /// `room.002.opus`). Created with `O_EXCL`: an existing file is never written into.
    public func makeSink(for output: RecordingOutput, segment: Int) throws -> PageSink {
        guard segment > 1 else { return try makeSink(for: output) }
        guard let first = state.withLock({ $0.paths[output] }) else {
            throw CommandFailure(.failure, "no first file to number segment \(segment) after")
        }
        let wanted = String(Self.segmentPath(first, segment: segment).dropLast(5))
        for i in 1...100 {
            // A participant whose name is `Alice.002` took that name first: `Alice.002-2`.
            let stem = i == 1 ? wanted : "\(wanted)-\(i)"
            let name = PathText.lastComponent(stem).lowercased()
            guard state.withLock({ $0.used.insert(name).inserted }) else { continue }
            let file = stem + ".opus"
            do {
                let sink = try FileSink(path: file, mode: fileMode, exclusive: true)
                state.withLock {
                    $0.current[output] = file
                    $0.made[output, default: []].append(file)
                }
                return sink
            } catch let e as MediaIOError where e.errno == EEXIST {
                continue
            }
        }
        throw CommandFailure(.failure, "no free file name for segment \(segment) of \(PathText.lastComponent(first))")
    }

    /// `…/Alice.opus` → `…/Alice.002.opus`.
    public static func segmentPath(_ first: String, segment: Int) -> String {
        let stem = first.hasSuffix(".opus") ? String(first.dropLast(5)) : first
        return stem + "." + (segment < 1000 ? String(cFormat: "%03d", segment) : String(segment)) + ".opus"
    }

    /// Creates `name` in the folder for writing (`O_EXCL`, ``fileMode``). The caller owns
    /// the descriptor.
    public func createFile(_ name: String, append: Bool = false) throws -> Int32 {
        let p = path + "/" + name
        let fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | (append ? O_APPEND : 0), fileMode)
        guard fd >= 0 else { throw CommandFailure(.failure, "cannot create \(p): \(String(cString: strerror(errno)))") }
        _ = fchmod(fd, fileMode)
        return fd
    }

    /// Writes a whole text file: `name.part` (exclusive), fsync, then renamed to `name`
    /// without replacing anything that is there. Throws with the reason when any step fails.
    public func writeFinished(_ name: String, _ text: String) throws {
        try Self.writeFinished(path + "/" + name, text, mode: fileMode)
    }

    /// ``writeFinished(_:_:)`` for any path (`repair` rebuilding a crashed session's files).
    public static func writeFinished(_ final: String, _ text: String, mode: mode_t, temporarySuffix: String = ".part") throws {
        do throws(AtomicFile.Failure) {
            try AtomicFile.write(text.utf8, to: final, through: final + temporarySuffix, mode: mode, replacing: false)
        } catch {
            throw CommandFailure(.failure, error.description)
        }
    }
}

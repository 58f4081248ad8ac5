#if canImport(Glibc)
import Glibc
#endif
import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Dispatch
import Synchronization

/// Writes `events.jsonl`: one JSON object per line, each with the absolute UTC time and
/// the offset from the session start, flushed line by line so a crash loses nothing that
/// was written (docs/EVENTS.md). Also collects what `transcript.vtt` and `summary.json`
/// need. Room events and media events arrive on two tasks; every line and every note
/// goes through `lock`, so lines are never interleaved.
///
/// With `echo` (`join --json`), every line also goes to standard output, byte for byte the
/// same; with no `path` (`--json` without `--record`) it goes only there.
public final class TranscriptWriter: Sendable {
    public let path: String?
    /// Where inline (`data:`) chat attachments are saved: the session folder when recording.
    public let attachments: AttachmentStore?
    private let fd: Int32
    private let echo: Console?
    private let startUnixNanos: Int64
    private let startMonotonicNanos: UInt64
    /// The monotonic clock (a test's fixed clock makes the lines reproducible).
    private let clock: @Sendable () -> UInt64
    private struct Notes {
        var turns: [(identity: String, name: String, startMs: Int64, endMs: Int64)] = []
        var chats: [(offsetMs: Int64, name: String, text: String)] = []
        /// Reactions and polls, as WebVTT NOTE blocks (bounded: a flood cannot grow it).
        var notes: [(offsetMs: Int64, text: String)] = []
        var lines = 0
        /// Lines that could not be written yet (a full disk), in order, each whole.
        var pending: [[UInt8]] = []
        var pendingBytes = 0
        var droppedLines = 0
        var failingSince: UInt64 = 0
    }
    /// Lines kept in memory while the disk is full, at most this many bytes.
    static let pendingLimitBytes = 256 << 10
    private let lock = Mutex<Notes>(Notes())

    public var lines: Int { lock.withLock { $0.lines } }
    /// Lines that could not be written and did not fit in memory (lost).
    public var droppedLines: Int { lock.withLock { $0.droppedLines } }
    /// Lines waiting in memory for room on the disk.
    public var pendingLines: Int { lock.withLock { $0.pending.count } }
    /// Monotonic time since which lines have failed to be written (nil: they are written).
    public var failingSinceNanos: UInt64? { lock.withLock { $0.failingSince == 0 ? nil : $0.failingSince } }

    /// - Parameters:
    ///   - startUnixNanos: wall-clock time of session start (offset 0).
    ///   - startMonotonicNanos: the same instant on the monotonic clock.
    ///   - path: the `events.jsonl` to create, or nil to write only to `echo`.
    ///   - echo: also write every line to this console's standard output (`join --json`).
    public init(path: String?, startUnixNanos: Int64, startMonotonicNanos: UInt64, mode: mode_t = 0o640, echo: Console? = nil,
                attachments: AttachmentStore? = nil, clock: @escaping @Sendable () -> UInt64 = MonotonicClock.nanos) throws {
        self.path = path
        self.clock = clock
        self.attachments = attachments
        self.startUnixNanos = startUnixNanos
        self.startMonotonicNanos = startMonotonicNanos
        self.echo = echo
        if let path {
            // O_EXCL: a second writer never appends into someone else's transcript.
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, mode)
            guard fd >= 0 else { throw CommandFailure(.failure, "cannot write \(path): \(String(cString: strerror(errno)))") }
            _ = fchmod(fd, mode)
        } else {
            fd = -1
        }
    }

    /// The writer a `join` run needs: the session folder's `events.jsonl` when recording,
    /// standard output with `--json`, both, or neither (nil).
    static func make(directory: String?, json: Console?, startUnixNanos: Int64, startMonotonicNanos: UInt64, mode: mode_t) throws -> TranscriptWriter? {
        guard directory != nil || json != nil else { return nil }
        return try TranscriptWriter(path: directory.map { $0 + "/events.jsonl" }, startUnixNanos: startUnixNanos,
                                    startMonotonicNanos: startMonotonicNanos, mode: mode, echo: json,
                                    attachments: directory.map { AttachmentStore(directory: $0, mode: mode) })
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Milliseconds since session start, now.
    public func offsetNow() -> Int64 { Int64((clock() &- startMonotonicNanos) / 1_000_000) }

    static func iso(_ unixNanos: Int64) -> String {
        var t = time_t(unixNanos / 1_000_000_000)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        let ms = Int((unixNanos / 1_000_000) % 1000)
        return String(cFormat: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tmv.tm_year + 1900, tmv.tm_mon + 1, tmv.tm_mday, tmv.tm_hour, tmv.tm_min, tmv.tm_sec, ms)
    }

    /// Appends one event and returns its offset. `offsetMs` defaults to now; events
    /// reported after they happened (a speaking turn when it ends, a gap when audio
    /// resumes, a file's start) pass their own, and their line also gets `written_ms`,
    /// the offset at which it was written: lines are in the order written, which is not
    /// `offset_ms` order (docs/EVENTS.md). The line is the ``TranscriptLine`` written by
    /// ``JSONWriter`` (``JSONWriter/Style/eventLine``); its texts from outside were cut when
    /// the event was built (``BoundedText``).
    @discardableResult
    func write(_ event: TranscriptEvent, offsetMs: Int64? = nil) -> Int64 {
        let now = offsetNow()
        let off = offsetMs ?? now
        let whole = TranscriptLine(event: event, time: Self.iso(startUnixNanos + off * 1_000_000), offsetMs: off, writtenMs: offsetMs != nil ? now : nil)
        guard let line = Self.line(whole) else { return off }
        var bytes = Array(line.utf8)
        bytes.append(10)
        // Several rooms in one process: the line on stdout says which room it is of
        // (encoded here, not under the lock).
        let echoed = echo.map { echo in
            guard let label = echo.label else { return line }
            var labelled = whole
            labelled.sessionRoom = label
            return Self.line(labelled) ?? line
        }
        lock.withLock { notes in
            if let echo, let echoed { echo.json(echoed) }
            guard fd >= 0 else {
                notes.lines += 1
                return
            }
            // Never half a line, never out of order: earlier lines that failed go first.
            if notes.pending.isEmpty || flushPending(&notes), writeWhole(bytes) {
                notes.lines += 1
                return
            }
            if notes.failingSince == 0 { notes.failingSince = MonotonicClock.nanos() }
            if notes.pendingBytes + bytes.count <= Self.pendingLimitBytes {
                notes.pending.append(bytes)
                notes.pendingBytes += bytes.count
            } else {
                notes.droppedLines += 1
            }
        }
        return off
    }

    /// The text of a line not written by a session's writer (``MultiRoomRun``'s own lines).
    static func text(_ line: TranscriptLine) -> String { Self.line(line) ?? "" }

    /// A line as one JSON object on one line: sorted keys, the original text escaped by
    /// JSON, and C1 controls and bidi overrides as \uXXXX too, so `cat events.jsonl` on a
    /// terminal is as safe as the bot's own output. Nil for a line JSON cannot express (a
    /// level or score that is NaN).
    static func line(_ line: TranscriptLine) -> String? {
        guard let text = try? JSONWriter.string(line, style: .eventLine) else { return nil }
        return TerminalText.escapingJSON(text)
    }

    /// Writes the lines kept in memory; true when none are left.
    @discardableResult
    public func flushPending() -> Bool { lock.withLock { flushPending(&$0) } }

    private func flushPending(_ notes: inout Notes) -> Bool {
        var done = 0
        while done < notes.pending.count, writeWhole(notes.pending[done]) { done += 1 }
        notes.lines += done
        for line in notes.pending.prefix(done) { notes.pendingBytes -= line.count }
        notes.pending.removeFirst(done)
        if notes.pending.isEmpty { notes.failingSince = 0 }
        return notes.pending.isEmpty
    }

    /// Appends one line whole or not at all: a write that fails part-way (a full disk) is
    /// cut back off, so the file never ends in half a line.
    private func writeWhole(_ bytes: [UInt8]) -> Bool {
        let start = lseek(fd, 0, SEEK_END)
        let ok = bytes.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        if !ok && start >= 0 { _ = ftruncate(fd, start) }
        return ok
    }

    public func noteTurn(identity: String, name: String, startMs: Int64, endMs: Int64) {
        lock.withLock { $0.turns.append((identity, name, startMs, endMs)) }
    }

    public func noteChat(offsetMs: Int64, name: String, text: String) {
        lock.withLock { $0.chats.append((offsetMs, name, text)) }
    }

    /// Notes kept for transcript.vtt at most (reactions can come in floods).
    static let maxNotes = 10_000

    /// A reaction or poll line for transcript.vtt (a NOTE block: players do not show it).
    public func noteLine(offsetMs: Int64, text: String) {
        lock.withLock { if $0.notes.count < Self.maxNotes { $0.notes.append((offsetMs, text)) } }
    }

    public func sync() {
        guard fd >= 0 else { return }
        flushPending()
        fsync(fd)
    }

    // MARK: - transcript.vtt

    static func vttTime(_ ms: Int64) -> String {
        let m = max(0, ms)
        return String(cFormat: "%02d:%02d:%02d.%03d", m / 3_600_000, (m / 60_000) % 60, (m / 1000) % 60, m % 1000)
    }

    /// Text for a cue: cut to `limit` Unicode scalars (a name to
    /// ``RoomEventFormatter/nameLimit``, chat to ``RoomEventFormatter/lineLimit``), WebVTT's
    /// own markup escaped, then control characters and bidi overrides made visible
    /// (``TerminalText``), so a cue is always one short line of plain text.
    static func vttEscape(_ s: String, limit: Int = RoomEventFormatter.nameLimit) -> String {
        TerminalText.line(s, limit: limit).replacingScalars("&", with: "&amp;").replacingScalars("<", with: "&lt;").replacingScalars(">", with: "&gt;")  // so no cue text holds "-->"
    }

    /// WebVTT of the speaking turns (`<v Name>`), with chat messages as short cues.
    public func vtt() -> String {
        let (turns, chats, notes) = lock.withLock { ($0.turns, $0.chats, $0.notes) }
        return Self.vtt(turns: turns, chats: chats, notes: notes)
    }

    /// WebVTT from speaking turns and chat messages (also used by `repair` to rebuild it
    /// from `events.jsonl`).
    static func vtt(turns: [(identity: String, name: String, startMs: Int64, endMs: Int64)],
                    chats: [(offsetMs: Int64, name: String, text: String)],
                    notes: [(offsetMs: Int64, text: String)] = []) -> String {
        var cues: [(Int64, Int64, String)] = turns.map { ($0.startMs, max($0.endMs, $0.startMs + 100), "<v \(Self.vttEscape($0.name))>(speaking)") }
        cues += chats.map { ($0.offsetMs, $0.offsetMs + 3000, "<v \(Self.vttEscape($0.name))>[chat] \(Self.vttEscape($0.text, limit: RoomEventFormatter.lineLimit))") }
        // A NOTE is a comment block (WebVTT §4.1): "NOTE", its text on the same line, no
        // "-->" (escaped away) and no blank line (the text is one line). Ordered by time
        // with the cues, with the time in its text since a note has no timing of its own.
        let noteCues = notes.map { ($0.offsetMs, Int64.min, "NOTE \(Self.vttTime($0.offsetMs)) \(Self.vttEscape($0.text, limit: RoomEventFormatter.lineLimit))") }
        cues += noteCues
        cues.sort { $0.0 < $1.0 }
        var out = "WEBVTT\n\n"
        var number = 0
        for c in cues {
            if c.1 == Int64.min {
                out += c.2 + "\n\n"
                continue
            }
            number += 1
            out += "\(number)\n\(Self.vttTime(c.0)) --> \(Self.vttTime(c.1))\n\(c.2)\n\n"
        }
        return out
    }
}

#if canImport(Glibc)
import Glibc
#endif
import BedrudProtocol
import BedrudRuntime
import FoundationEssentials
import Synchronization

/// Standard output for results, standard error for everything a person reads while
/// waiting (progress, warnings, errors). Thread-safe.
///
/// Under `-q` (``quiet``) only what a command was asked for (a list, `--json`, a verify
/// report) and errors are printed: no room events, progress notes or warnings, so a
/// successful cron run prints nothing and mails nobody.
///
/// With `--log-format json` (``jsonLogs``) every line for a person on standard error (log
/// lines, notes, warnings, the final error) is one JSON object instead:
/// `{"category":…,"level":…,"message":…,"time":…}`, with the original text, escaped by JSON.
public final class Console: Sendable {
    /// Serialises every write; holds the live block of `join` (``TerminalBlock``), so no
    /// line printed while it is drawn runs into it.
    private let lock = Mutex<TerminalBlock>(TerminalBlock())
    public let quiet: Bool
    public let jsonLogs: Bool
    /// The room this console's lines belong to when one process records several rooms
    /// (`join A B`): text lines start with `[label] `, JSON log lines carry `"room"`.
    /// Nil for the process's own console.
    public let label: String?
    /// A labelled console writes through the process's console (one lock, one live block).
    private let base: Console?

    public init(quiet: Bool = false, jsonLogs: Bool = false) {
        self.quiet = quiet
        self.jsonLogs = jsonLogs
        label = nil
        base = nil
    }

    private init(base: Console, label: String) {
        quiet = base.quiet
        jsonLogs = base.jsonLogs
        self.label = TerminalText.sanitize(label)
        self.base = base.base ?? base
    }

    /// A console whose lines say they belong to room `label` (sanitised), writing through this one.
    public func labelled(_ label: String) -> Console { Console(base: self, label: label) }

    /// `text` with `[label] ` before each of its lines (unchanged without a label).
    private func tagged(_ text: String) -> String {
        guard let label else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { "[\(label)] " + $0 }.joined(separator: "\n")
    }

    /// True when stdin and stderr are terminals: prompts are allowed.
    public var isInteractive: Bool { isatty(0) != 0 && isatty(2) != 0 }
    public var stderrIsTerminal: Bool { isatty(2) != 0 }

    /// A line of results. Control characters in it become visible escapes
    /// (``TerminalText``): whatever a remote peer managed to get into the text, no escape
    /// sequence reaches the terminal. Line breaks and tabs are kept.
    public func out(_ text: String) { write(1, tagged(TerminalText.sanitize(text, keepingLineBreaks: true)) + "\n") }
    /// A JSON document or line of results: the original text, escaped by JSON
    /// (``TerminalText/escapingJSON(_:)``), so it decodes to exactly what the server sent.
    public func json(_ text: String) { write(1, TerminalText.escapingJSON(text) + "\n") }
    /// A line for a person on standard error, sanitised like ``out(_:)`` (a JSON log line
    /// of level info with `--log-format json`).
    public func err(_ text: String) {
        if jsonLogs { return log(level: .info, category: "bedrud-bot", message: text) }
        write(2, tagged(TerminalText.sanitize(text, keepingLineBreaks: true)) + "\n")
    }

    /// The error that ends the command: `bedrud-bot: error: …`, or a JSON log line.
    public func error(_ text: String) {
        if jsonLogs { return log(level: .error, category: "bedrud-bot", message: text) }
        err("bedrud-bot: error: \(text)")
    }

    /// One log line on stderr: `12:00:01.234 info    auth: message` (the message sanitised,
    /// on one line), or with ``jsonLogs`` one JSON object with the UTC time, the level,
    /// the category and the original message.
    public func log(level: LogLevel, category: String, message: String) {
        var t = timeval()
        gettimeofday(&t, nil)
        if jsonLogs {
            let record = LogRecord(time: TranscriptWriter.iso(Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_usec) * 1000),
                                   level: level.name, category: category, message: message, room: label)
            guard let line = try? JSONOutput.string(record, pretty: false) else { return }
            write(2, TerminalText.escapingJSON(line) + "\n")
            return
        }
        var tmv = tm()
        var secs = t.tv_sec
        localtime_r(&secs, &tmv)
        let stamp = String(cFormat: "%02d:%02d:%02d.%03d", tmv.tm_hour, tmv.tm_min, tmv.tm_sec, Int(t.tv_usec / 1000))
        let lv = level.name.padded(toLength: 7)
        // One line per message: a server's error text or a name inside it cannot start
        // a line of its own or send escape sequences.
        write(2, tagged("\(stamp) \(lv) \(category): \(TerminalText.sanitize(message))") + "\n")
    }

    /// A line of `--log-format json` (docs/CLI.md).
    struct LogRecord: Encodable {
        var time: String
        var level: String
        var category: String
        var message: String
        /// Only on a labelled console's lines (several rooms in one process); left out otherwise.
        var room: String? = nil
    }
    /// Writes `text` as it is: only for the program's own control sequences (redrawing
    /// the status line) and for text already passed through ``TerminalText``.
    public func errRaw(_ text: String) { write(2, text) }

    /// A warning a person should see: `bedrud-bot: warning: …` on stderr (not under `-q`).
    public func warning(_ text: String) {
        guard !quiet else { return }
        if jsonLogs { return log(level: .warning, category: "bedrud-bot", message: text) }
        err("bedrud-bot: warning: \(text)")
    }

    /// Progress a person reads while waiting ("Recording into …"): stderr, not under `-q`.
    public func note(_ text: String) { if !quiet { err(text) } }

    /// A line of what happens in the room: stdout, not under `-q`.
    public func event(_ text: String) { if !quiet { out(text) } }

    /// Draws `lines` as the live block at the bottom of the terminal on stdout, replacing
    /// the one drawn before; `[]` removes it. Lines must be sanitised and fit the width
    /// (``TerminalView``). Later writes to stdout, and to stderr when it is a terminal
    /// too, appear above the block.
    func showBlock(_ lines: [String]) {
        if let base { return base.showBlock(lines) }
        lock.withLock { block in
            if block.terminalDescriptors.isEmpty { block.terminalDescriptors = isatty(2) != 0 ? [1, 2] : [1] }
            Self.writeAll(1, block.show(lines))
        }
    }

    private func write(_ fd: Int32, _ text: String) {
        if let base { return base.write(fd, text) }
        lock.withLock { block in
            let parts = block.around(text, fd: fd)
            Self.writeAll(1, parts.before)
            Self.writeAll(fd, parts.text)
            Self.writeAll(1, parts.after)
        }
    }

    private static func writeAll(_ fd: Int32, _ text: String) {
        guard !text.isEmpty else { return }
        var bytes = Array(text.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n <= 0 { break }
            off += n
        }
    }

    /// Reads a line from the terminal with echo off (for passwords). Nil at EOF.
    public func readSecret(prompt: String) -> String? {
        errRaw(prompt)
        var old = termios()
        let haveTTY = tcgetattr(0, &old) == 0
        if haveTTY {
            var quiet = old
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSANOW, &quiet)
        }
        defer {
            if haveTTY { tcsetattr(0, TCSANOW, &old) }
            errRaw("\n")
        }
        return Swift.readLine(strippingNewline: true)
    }

    /// Reads a visible line from the terminal. Nil at EOF.
    public func readLine(prompt: String) -> String? {
        errRaw(prompt)
        return Swift.readLine(strippingNewline: true)
    }
}

/// Writes log lines to stderr: `12:00:01.234 info  auth: message`, or JSON (``Console/log(level:category:message:)``).
public struct StderrLogSink: LogSink {
    let console: Console
    public init(console: Console) { self.console = console }

    /// Info lines of the layers below the bot (`rtc.*`, `signal`, `room`, `auth`, …) are
    /// internals ("selected pair …"): on the terminal they are debug level, shown with
    /// `-v`, so at the default level only the session's own notes mix with room events.
    /// Their warnings and errors always show.
    public static func isShown(level: LogLevel, label: String) -> Bool {
        level != .info || label == "session" || Logging.isEnabled(.debug)
    }

    /// A line of one of several rooms goes through that room's labelled console: `[room] `
    /// before the text, `"room"` in JSON, as the session's own lines.
    public func write(level: LogLevel, label: String, room: String?, message: String) {
        guard Self.isShown(level: level, label: label) else { return }
        let target = room.map { console.label == nil ? console.labelled($0) : console } ?? console
        target.log(level: level, category: label, message: message)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import BedrudProtocol
import FoundationEssentials
import Synchronization

/// Standard output for results, standard error for everything a person reads while
/// waiting (progress, warnings, errors). Thread-safe.
public final class Console: Sendable {
    private let lock = Mutex<Void>(())

    public init() {}

    /// True when stdin and stderr are terminals: prompts are allowed.
    public var isInteractive: Bool { isatty(0) != 0 && isatty(2) != 0 }
    public var stderrIsTerminal: Bool { isatty(2) != 0 }

    public func out(_ text: String) { write(1, text + "\n") }
    public func err(_ text: String) { write(2, text + "\n") }
    public func errRaw(_ text: String) { write(2, text) }

    /// A warning a person should see: `bedrud-bot: warning: …` on stderr.
    public func warning(_ text: String) { err("bedrud-bot: warning: \(text)") }

    private func write(_ fd: Int32, _ text: String) {
        lock.withLock { _ in
            var bytes = Array(text.utf8)
            var off = 0
            while off < bytes.count {
                let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + off, $0.count - off) }
                if n <= 0 { break }
                off += n
            }
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

/// Writes log lines to stderr: `12:00:01.234 info  auth: message`.
public struct StderrLogSink: LogSink {
    let console: Console
    public init(console: Console) { self.console = console }

    public func write(level: LogLevel, label: String, message: String) {
        var t = timeval()
        gettimeofday(&t, nil)
        var tmv = tm()
        var secs = t.tv_sec
        localtime_r(&secs, &tmv)
        let stamp = String(format: "%02d:%02d:%02d.%03d", tmv.tm_hour, tmv.tm_min, tmv.tm_sec, Int(t.tv_usec / 1000))
        let lv = level.name.padding(toLength: 7, withPad: " ", startingAt: 0)
        console.err("\(stamp) \(lv) \(label): \(message)")
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The lines of ``TerminalView`` currently on the screen, and the bytes that keep event
/// lines from ever running into them. ``Console`` owns one, under the same lock as every
/// write, so each line it prints (an event on stdout, a note or log line on stderr) is
/// written as: erase the block, the line, the block again.
///
/// The block is drawn at the cursor, each line ended by a newline, with autowrap off while
/// it is drawn (`ESC [?7l`), so it is exactly `lines.count` rows high and the cursor rests
/// at the start of the row below it. Erasing is carriage return, cursor up that many rows
/// (`ESC [nA`) and erase to the end of the screen (`ESC [J`). Pure: it returns the bytes.
struct TerminalBlock: Sendable, Equatable {
    /// What is on the screen now; empty when nothing is drawn.
    private(set) var lines: [String] = []
    /// The descriptors that reach the terminal the block is on (1, and 2 when stderr is
    /// the same kind of thing); writes to others pass untouched.
    var terminalDescriptors: Set<Int32> = []

    var isDrawn: Bool { !lines.isEmpty }

    /// The bytes that remove the block; the cursor ends where the block began.
    func erase() -> String {
        lines.isEmpty ? "" : "\r\u{1B}[\(lines.count)A\u{1B}[J"
    }

    func draw() -> String {
        lines.isEmpty ? "" : "\u{1B}[?7l" + lines.map { $0 + "\n" }.joined() + "\u{1B}[?7h"
    }

    /// Replaces the block with `new` (empty: removes it); returns the bytes to write.
    mutating func show(_ new: [String]) -> String {
        let out = erase()
        lines = new
        return out + draw()
    }

    /// `text` written to `fd`, wrapped so that it appears above the block. The first
    /// string goes to the block's descriptor (stdout), the second to `fd`, the third to
    /// stdout again; empty strings are not written.
    func around(_ text: String, fd: Int32) -> (before: String, text: String, after: String) {
        guard isDrawn, terminalDescriptors.contains(fd) else { return ("", text, "") }
        if fd == 1 { return ("", erase() + text + draw(), "") }
        return (erase(), text, draw())
    }
}

/// Whether `join` should keep the live block: stdout is a terminal that can move its
/// cursor (not `TERM=dumb`), and the run is not quiet. `NO_COLOR` (any value) only turns
/// colour off. Pure over its inputs.
enum TerminalCapabilities {
    static func liveBlock(stdoutIsTerminal: Bool, quiet: Bool, environment: [String: String]) -> Bool {
        guard stdoutIsTerminal, !quiet else { return false }
        let term = environment["TERM"] ?? ""
        return !term.isEmpty && term != "dumb"
    }

    static func color(environment: [String: String]) -> Bool {
        environment["NO_COLOR"].map { $0.isEmpty } ?? true
    }

    /// Columns and rows of the terminal on `fd`; nil when it is not one.
    static func size(fd: Int32 = 1) -> (columns: Int, rows: Int)? {
        var ws = winsize()
        let ok = withUnsafeMutablePointer(to: &ws) { ioctl(fd, UInt(TIOCGWINSZ), $0) } == 0
        guard ok, ws.ws_col > 0, ws.ws_row > 0 else { return nil }
        return (Int(ws.ws_col), Int(ws.ws_row))
    }
}

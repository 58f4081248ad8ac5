import BedrudProtocol

/// The live block `join` keeps at the bottom of a terminal: a pure function from what the
/// run knows now (``State``) to the lines to draw. ``TerminalBlock`` and ``Console`` put
/// the lines on the screen, below the event lines that scroll above them.
///
/// ```
/// ── 1m05s ── 2 here ── 1.2 MB written ── 18.4 GB free ──────────
///  ● Alice Martin       [#######---]  mic on    41s spoken  loss 0.0%
///    Bob Chen           [----------]  muted      3s spoken  loss 1.2%
/// ```
///
/// Every line fits `Style.width` columns (wider text is cut with `…`), so no line wraps
/// and the block's height is exactly the number of lines; at most `Style.height - 2`
/// lines, the rest summed up as "… and N more". Names pass through ``TerminalText``.
enum TerminalView {
    /// One participant's row.
    struct Row: Sendable, Equatable {
        var name: String
        var speaking = false
        /// Short-term audio level; -120 is silence.
        var levelDBFS: Float = -120
        /// nil: no audio track published.
        var muted: Bool? = false
        var spokenSeconds: Double = 0
        /// Lost packets as a share of those expected, 0…1; nil before any packet.
        var loss: Double?
    }

    struct State: Sendable, Equatable {
        var elapsedSeconds: Double
        var rows: [Row]
        /// Bytes of Ogg pages written so far; nil when not recording.
        var bytesWritten: Int?
        /// Free space where the recordings go; nil when not recording or unknown.
        var freeDiskBytes: Int64?
    }

    struct Style: Sendable, Equatable {
        var width = 80
        var height = 24
        /// SGR colours (off for `NO_COLOR`).
        var color = true
    }

    static let meterCells = 10
    static let nameColumns = 20

    static func render(_ state: State, style: Style) -> [String] {
        let width = max(20, style.width)
        var header = "── \(duration(state.elapsedSeconds)) ── \(state.rows.count) here"
        if let b = state.bytesWritten { header += " ── \(bytes(Int64(b))) written" }
        if let f = state.freeDiskBytes { header += " ── \(bytes(f)) free" }
        header += " "
        header = fit(header, columns: width, pad: "─")
        var lines = [paint(header, "2", style)]
        let room = max(1, style.height - 2) - 1  // lines left below the header
        let shown = state.rows.count > room ? max(0, room - 1) : state.rows.count
        for row in state.rows.prefix(shown) { lines.append(line(row, width: width, style: style)) }
        if shown < state.rows.count {
            lines.append(fit("   … and \(state.rows.count - shown) more", columns: width, pad: " ", trimTrailing: true))
        }
        if state.rows.isEmpty { lines.append(fit("   nobody else here yet", columns: width, pad: " ", trimTrailing: true)) }
        return lines
    }

    static func line(_ row: Row, width: Int, style: Style) -> String {
        let marker = row.speaking ? "●" : " "
        let name = fit(TerminalText.sanitize(row.name), columns: nameColumns, pad: " ")
        let mic = switch row.muted {
        case nil: "no audio"
        case true?: "muted   "
        case false?: "mic on  "
        }
        let spoken = duration(row.spokenSeconds.rounded(.down))
        let loss = row.loss.map { String(cFormat: "loss %.1f%%", $0 * 100) } ?? "loss -"
        let rest = "  \(meter(row.levelDBFS, muted: row.muted != false))  \(mic)  \(pad(spoken, 6)) spoken  \(loss)"
        let plain = fit(" \(marker) \(name)\(rest)", columns: width, pad: " ", trimTrailing: true)
        guard style.color else { return plain }
        // Colour only whole fields of our own making, after fitting, so widths stay right.
        if row.speaking, plain.hasPrefix(" ● ") { return " " + paint("●", "1;32", style) + plain.dropFirst(2) }
        return plain
    }

    /// `[#####-----]`: -60 dBFS and below is empty, 0 dBFS full. Empty when muted.
    static func meter(_ dBFS: Float, muted: Bool) -> String {
        let share = muted ? 0 : min(1, max(0, (Double(dBFS) + 60) / 60))
        let filled = Int((share * Double(meterCells)).rounded())
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: meterCells - filled) + "]"
    }

    static func duration(_ seconds: Double) -> String {
        let s = max(0, Int(seconds))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m\(String(cFormat: "%02d", s % 60))s" }
        return "\(s / 3600)h\(String(cFormat: "%02d", s / 60 % 60))m"
    }

    static func bytes(_ n: Int64) -> String {
        let d = Double(n)
        if d < 1_000_000 { return String(cFormat: "%.1f kB", d / 1000) }
        if d < 1_000_000_000 { return String(cFormat: "%.1f MB", d / 1_000_000) }
        return String(cFormat: "%.1f GB", d / 1_000_000_000)
    }

    private static func pad(_ s: String, _ n: Int) -> String {
        String(repeating: " ", count: max(0, n - s.count)) + s
    }

    private static func paint(_ s: String, _ sgr: String, _ style: Style) -> String {
        style.color ? "\u{1B}[\(sgr)m\(s)\u{1B}[0m" : s
    }

    // MARK: - Columns

    /// `text` cut or padded to exactly `columns` terminal columns (wide characters count
    /// two, marks zero); a cut ends in `…`. `trimTrailing` drops the padding's spaces.
    static func fit(_ text: String, columns: Int, pad: Character, trimTrailing: Bool = false) -> String {
        var out = ""
        var used = 0
        let total = width(text)
        if total <= columns {
            out = text
            used = total
        } else {
            for ch in text {
                let w = width(ch)
                if used + w > columns - 1 { break }
                out.append(ch)
                used += w
            }
            out.append("…")
            used += 1
        }
        if trimTrailing {
            while out.last == " " { out.removeLast() }
            return out
        }
        return out + String(repeating: pad, count: max(0, columns - used))
    }

    static func width(_ text: String) -> Int { text.reduce(0) { $0 + width($1) } }

    /// Columns a character takes: 2 for East Asian wide and emoji, else 1 (its marks ride along).
    static func width(_ ch: Character) -> Int {
        guard let s = ch.unicodeScalars.first?.value else { return 0 }
        switch s {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}

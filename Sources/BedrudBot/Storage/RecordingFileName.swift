import BedrudProtocol
import Dispatch
import FoundationEssentials
import Glibc

/// Turns a participant's display name (or a room name) into a file or folder name.
///
/// People write their names in every script: Persian, Arabic, Cyrillic, Chinese names
/// are kept as they are, normalised to NFC (so the same name typed on a Mac and on a
/// phone is the same file). Only what a file system forbids or misreads is replaced by
/// `_`: `/` and NUL (POSIX), `\ : * ? " < > |` (Windows, SMB shares, USB sticks), control
/// characters and bidi overrides (which would make `exe.opus` read as `supo.exe`). A name
/// never starts with `-` (so `verify *.opus` is never handed an option), nor with a dot
/// (hidden), nor ends with a space or dot, and is at most 200 bytes of UTF-8 (file
/// systems allow 255, and `.opus.part` and a `-2` must still fit). Pure.
public enum RecordingFileName {
    public static let maxBytes = 200

    public static func make(_ name: String, fallback: String = "participant") -> String {
        var out = String.UnicodeScalarView()
        // NFC, as Foundation's precomposedStringWithCanonicalMapping (the standard library's
        // own normalizer; Foundation is not imported, see OSThread).
        for s in String(decoding: name._nfcCodeUnits, as: UTF8.self).unicodeScalars {
            out.append(isForbidden(s) ? "_" : s)
        }
        var text = Substring(String(out))
        while let f = text.first, f == " " || f == "." { text = text.dropFirst() }
        while let l = text.last, l == " " || l == "." { text = text.dropLast() }
        var result = String(text)
        if result.hasPrefix("-") { result = "_" + result.dropFirst() }
        if result.isEmpty { result = fallback }
        return truncated(result)
    }

    /// Cuts at a character boundary so the UTF-8 form fits ``maxBytes``.
    static func truncated(_ s: String) -> String {
        guard s.utf8.count > maxBytes else { return s }
        var out = ""
        var bytes = 0
        for c in s {
            let n = c.utf8.count
            if bytes + n > maxBytes { break }
            out.append(c)
            bytes += n
        }
        while let l = out.last, l == " " || l == "." { out.removeLast() }
        return out
    }

    static func isForbidden(_ s: Unicode.Scalar) -> Bool {
        switch s {
        case "/", "\\", ":", "*", "?", "\"", "<", ">", "|": return true
        default: return !TerminalText.isClean(String(s))
        }
    }
}

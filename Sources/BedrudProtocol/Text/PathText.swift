/// File-path text as Foundation's `NSString` path methods handled it
/// (`lastPathComponent`, `deletingLastPathComponent`, `appendingPathComponent`), without
/// importing Foundation (see ``OSThread``). Plain text: nothing touches the file system.
/// `PathTextTests` compares them with NSString for the paths the bot builds (no doubled
/// slashes; NSString on Linux is erratic there and even traps on some).
public enum PathText {
    /// `/a//b/` → `/a/b`: runs of slashes made one, a trailing slash dropped (not from `/`).
    public static func fixingSlashes(_ path: String) -> String {
        var out = String.UnicodeScalarView()
        var lastWasSlash = false
        for u in path.unicodeScalars {
            if u == "/" {
                if lastWasSlash { continue }
                lastWasSlash = true
            } else {
                lastWasSlash = false
            }
            out.append(u)
        }
        if out.count > 1, out.last == "/" { out.removeLast() }
        return String(out)
    }

    /// The last component: `/a/b/` → `b`, `/` → `/`, `` → ``.
    public static func lastComponent(_ path: String) -> String {
        let p = fixingSlashes(path)
        if p == "/" { return p }
        guard let slash = p.lastIndex(of: "/") else { return p }
        return String(p[p.index(after: slash)...])
    }

    /// The path without its last component: `/a/b` → `/a`, `/a` → `/`, `a` → ``.
    public static func deletingLastComponent(_ path: String) -> String {
        let p = fixingSlashes(path)
        if p == "/" { return p }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        return slash == p.startIndex ? "/" : String(p[..<slash])
    }

    /// `directory` + `/` + `component` (no second slash when `directory` ends in one).
    public static func appending(_ component: String, to directory: String) -> String {
        if component.isEmpty { return directory }
        if directory.isEmpty { return component }
        return directory.hasSuffix("/") ? directory + component : directory + "/" + component
    }
}

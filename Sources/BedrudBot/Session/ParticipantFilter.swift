#if canImport(Glibc)
import Glibc
#endif

/// `--include` / `--exclude`: which participants get a file of their own and go into the
/// mix. Patterns are shell globs (`fnmatch(3)`), matched against the identity and the
/// display name; a participant matches a pattern when either does.
///
/// A participant is recorded when the include list is empty or one of its patterns
/// matches, and no exclude pattern matches (exclude wins). Pure.
public struct ParticipantFilter: Sendable, Equatable {
    public var include: [String]
    public var exclude: [String]

    public init(include: [String] = [], exclude: [String] = []) {
        self.include = include
        self.exclude = exclude
    }

    /// Whether nothing is filtered.
    public var isEmpty: Bool { include.isEmpty && exclude.isEmpty }

    public func records(identity: String, name: String) -> Bool {
        func matches(_ pattern: String) -> Bool {
            fnmatch(pattern, identity, 0) == 0 || (!name.isEmpty && fnmatch(pattern, name, 0) == 0)
        }
        if !include.isEmpty && !include.contains(where: matches) { return false }
        return !exclude.contains(where: matches)
    }
}

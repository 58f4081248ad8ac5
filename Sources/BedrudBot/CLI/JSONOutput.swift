import BedrudProtocol
import FoundationEssentials

/// The one way commands print `--json`: Codable values, sorted keys, no escaped slashes,
/// pretty for documents and one line for streams; printed through ``Console/json(_:)``,
/// which JSON-escapes C1 controls and bidi overrides too, so the text decodes to exactly
/// what was sent and is still safe on a terminal.
///
/// Keys of bedrud-bot's own objects are snake_case, like `events.jsonl` and `summary.json`;
/// Bedrud's own models inside them (a user, a room) keep the server's field names.
/// Secrets (tokens, passwords) are never part of these values.
enum JSONOutput {
    /// The text of `value`, written by ``JSONWriter``: keys by code point, `/` as it is.
    static func string<T: Encodable>(_ value: T, pretty: Bool = true) throws -> String {
        try JSONWriter.string(value, style: .init(pretty: pretty))
    }

    /// Prints `value` on standard output (even under `-q`: it is what was asked for).
    static func print<T: Encodable>(_ value: T, to console: Console, pretty: Bool = true) throws {
        console.json(try string(value, pretty: pretty))
    }

    /// A Unix time as the UTC time `2026-11-29T14:05:45.482Z`, as in `events.jsonl`.
    static func time(unixSeconds: Double) -> String {
        TranscriptWriter.iso(Int64((unixSeconds * 1000).rounded()) * 1_000_000)
    }
}

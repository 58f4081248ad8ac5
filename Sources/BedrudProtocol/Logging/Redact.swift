/// Helpers that keep secrets out of logs and error messages.
public enum Redact {
    /// A fixed mask that reveals nothing about the secret, not even its length.
    public static let mask = "********"

    /// Replaces the values of `access_token`, `token`, `password` and similar query
    /// parameters in a URL or query string with ``mask``.
    public static func query(_ text: String) -> String {
        let secretKeys: Set<String> = ["access_token", "token", "refresh_token", "password", "join_request", "key", "secret"]
        guard let q = text.firstIndex(of: "?") else { return text }
        let base = text[..<q]
        let parts = text[text.index(after: q)...].split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let eq = part.firstIndex(of: "=") else { return String(part) }
            let key = part[..<eq].lowercased()
            return secretKeys.contains(key) ? "\(part[..<eq])=\(mask)" : String(part)
        }
        return base + "?" + parts.joined(separator: "&")
    }
}

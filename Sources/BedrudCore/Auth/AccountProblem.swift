/// The server knows the account but will not let it in as it is: the email address is
/// not verified yet, or an administrator deactivated it. Not a wrong password, and not
/// fixed by trying again; `description` says what would fix it.
public struct AccountProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// v0.12.0 with `requireEmailVerification`: register answers without tokens
        /// (auth_handler.go:226-235), login and refresh answer 403 (auth_handler.go:325-333,
        /// 465-469), and authenticated calls 403 "Email not verified" (middleware/auth.go:165-197).
        case emailNotVerified(justRegistered: Bool)
        /// Refresh's 403 "Account is deactivated" (auth_handler.go:460-463).
        case deactivated
    }

    public let kind: Kind
    /// The account's email, when known.
    public let email: String?
    /// The server, `https://host[:port]`.
    public let server: String

    public init(_ kind: Kind, email: String?, server: String) {
        self.kind = kind
        self.email = email
        self.server = server
    }

    public var description: String {
        let who = email.map { "The account \($0)" } ?? "The bot's account"
        switch kind {
        case .emailNotVerified(justRegistered: true):
            return "\(who) was registered on \(server), but the server requires a verified email address before it issues a session: "
                + "open the link Bedrud sent to that address, then run 'bedrud-bot login'."
        case .emailNotVerified(justRegistered: false):
            return "\(who) on \(server) has not verified its email address, and the server requires it: "
                + "open the link Bedrud sent to that address (or ask an administrator to verify it), then try again."
        case .deactivated:
            return "\(who) on \(server) has been deactivated by an administrator: it cannot sign in until it is reactivated."
        }
    }
}

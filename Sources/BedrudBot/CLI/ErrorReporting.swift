import BedrudCore
import BedrudNet

/// Maps any error a command throws to one sentence and an exit code.
public enum ErrorReporting {
    public static func exitCode(for error: any Error) -> ExitCode {
        switch error {
        case is UsageError: return .usage
        case is InstanceNotFound: return .notFound
        case is ConfigError, is SecureFiles.UnsafePermissions: return .config
        case is AccountProblem: return .auth
        case let e as JoinTokenRefusal: return e.reason.exitCode
        case let e as NetworkError: return exitCode(for: e)
        case let e as APIError:
            switch e.code {
            case .network: return e.network.map(exitCode(for:)) ?? .network
            case .invalidURL: return .config
            case .unauthorized, .notLoggedIn: return .auth
            case .forbidden: return .forbidden
            case .notFound, .gone: return .notFound
            case .conflict, .rejected, .rateLimited: return .rejected
            case .serverError, .badResponse: return .server
            }
        case let e as CommandFailure: return e.code
        default: return .failure
        }
    }

    static func exitCode(for e: NetworkError) -> ExitCode {
        switch e.code {
        case .tlsHandshakeFailed, .certificateUntrusted, .certificatePinMismatch: return .tls
        case .protocolViolation, .responseTooLarge, .tooManyRedirects, .redirectNotAllowed: return .server
        case .invalidURL: return .config
        default: return .network
        }
    }

    public static func message(for error: any Error) -> String {
        switch error {
        case let e as CustomStringConvertible: return e.description
        default: return "\(error)"
        }
    }
}

/// A failure a command decided on itself, with its exit code.
public struct CommandFailure: Error, CustomStringConvertible, Sendable {
    public let code: ExitCode
    public let description: String
    public init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.description = message
    }
}

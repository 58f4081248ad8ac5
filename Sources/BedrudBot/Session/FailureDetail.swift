import BedrudCore
import BedrudProtocol

extension RoomEventFormatter {
    /// The sentence that explains a final failure, matching the cause the state machine
    /// carried in the reason: the last attempt's signalling error for refused / DNS / TLS
    /// / timeout / HTTP, the WebRTC layer's error only when ICE/DTLS was what failed
    /// (before, a stale ICE error was blamed for a server that refused connections), and
    /// what the server did wrong for a protocol error. Empty when nothing more specific
    /// is known. Starts with ": ".
    static func failureDetail(_ reason: RoomDisconnectReason, connectError: String?, transportError: String?,
                              serverProblem: String? = nil) -> String {
        let why: String?
        switch reason {
        case .notAllowed, .refused, .roomEnded, .forbidden: why = connectError
        case .network(.ice): why = transportError
        case .network(.signalLost): why = nil
        case .network: why = connectError
        case .protocolError: why = serverProblem.map { "the server sent " + $0 }
        default: why = nil
        }
        guard let why, !why.isEmpty else { return "" }
        return ": " + TerminalText.sanitize(why.count > 400 ? String(why.prefix(400)) + "…" : why)
    }

    /// The one line that says why a room ended with a failure: the reason (`explain`),
    /// worded for a first join that never got in ("could not join") or a connection that
    /// was lost, and the detail above.
    static func finalLine(_ reason: RoomDisconnectReason, everConnected: Bool, connectError: String?, transportError: String?,
                          serverProblem: String?) -> String {
        let head: String
        if case .network(let cause) = reason, !everConnected {
            head = "could not join the room (\(cause))"
        } else {
            head = explain(reason)
        }
        return head + failureDetail(reason, connectError: connectError, transportError: transportError, serverProblem: serverProblem)
    }
}

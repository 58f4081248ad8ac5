import BedrudCore

extension RoomEventFormatter {
    /// The sentence that explains a final failure, matching the cause the state machine
    /// carried in the reason: the last attempt's signalling error for refused / DNS / TLS
    /// / timeout / HTTP, the WebRTC layer's error only when ICE/DTLS was what failed
    /// (before, a stale ICE error was blamed for a server that refused connections).
    /// Empty when nothing more specific is known. Starts with ": ".
    static func failureDetail(_ reason: RoomDisconnectReason, connectError: String?, transportError: String?) -> String {
        let why: String?
        switch reason {
        case .notAllowed, .roomEnded, .forbidden: why = connectError
        case .network(.ice): why = transportError
        case .network(.signalLost): why = nil
        case .network: why = connectError
        default: why = nil
        }
        guard let why, !why.isEmpty else { return "" }
        return ": " + why
    }
}

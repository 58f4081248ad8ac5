import BedrudRTC

/// One side of the smoke test's media connection (the listener's subscriber or the
/// publisher's publisher), as the ICE and DTLS stages see it at one moment.
struct SmokeLink: Equatable {
    var name: String
    /// The selected ICE pair, while the connection has one.
    var pair: String?
    var state: PeerConnectionState?
    var srtpProfile: String?
    /// The transport's last error, already made safe for a terminal.
    var lastError: String?
    /// Why the side's room ended, explained, if it has.
    var ended: String?

    /// A DTLS error means ICE got this far: DTLS runs only over a selected pair, which may be
    /// gone by now with the connection the error closed.
    var dtlsBroke: Bool { lastError.map { $0.contains("DTLS") || $0.contains("fingerprint") } ?? false }
    var reachedDTLS: Bool { pair != nil || dtlsBroke }
}

/// What the ICE and DTLS stages decide from the two sides' snapshots, taken again at each
/// connection change until they pass or fail. Pure: the shell, `SmokeShell`, takes the
/// snapshots and waits for the transports' next change.
enum SmokeConnectivity {
    enum Verdict: Equatable {
        case wait
        case pass(String)
        case fail(String)
    }

    /// The ICE stage passes once both sides have a pair or got as far as DTLS. A side that
    /// fails for DTLS does not fail this stage (its DTLS stage will), even while the other
    /// side has no pair yet: the two connections finish in either order.
    static func ice(_ sides: [SmokeLink], timedOut: Bool, timeoutSeconds: Int, hint: String) -> Verdict {
        if sides.allSatisfy(\.reachedDTLS) {
            return .pass(sides.map { "\($0.name) " + ($0.pair.map(SmokePair.kind) ?? "closed by DTLS") }.joined(separator: ", "))
        }
        let stuck = sides.filter { !$0.reachedDTLS }
        if let side = stuck.first(where: { $0.state == .failed }) {
            return .fail("the \(side.name)'s connection failed: \(side.lastError ?? "failed")" + hint)
        }
        if let side = stuck.first(where: { $0.ended != nil }) {
            return .fail("the \(side.name) was disconnected: \(side.ended!)" + (side.lastError.map { ": " + $0 } ?? "") + hint)
        }
        if timedOut {
            return .fail("no ICE candidate pair within \(timeoutSeconds) s" + hint + firstError(stuck))
        }
        return .wait
    }

    /// The ICE pairs both sides used, for the JSON report (a side closed by a DTLS failure
    /// has none left).
    static func pairs(_ sides: [SmokeLink]) -> String {
        sides.map { "\($0.name) \($0.pair ?? "(closed after a DTLS failure)")" }.joined(separator: "; ")
    }

    /// The DTLS stage passes once both connections are up with SRTP keys.
    static func dtls(_ sides: [SmokeLink], timedOut: Bool, timeoutSeconds: Int) -> Verdict {
        if sides.allSatisfy({ $0.state == .connected }) {
            return .pass("\(sides.first?.srtpProfile ?? "SRTP") keys on both sides")
        }
        if let side = sides.first(where: { $0.state == .failed }) {
            return .fail("the \(side.name)'s connection failed: \(side.lastError ?? "failed")")
        }
        if let side = sides.first(where: { $0.ended != nil }) {
            return .fail("the \(side.name) was disconnected: \(side.ended!)" + (side.lastError.map { ": " + $0 } ?? ""))
        }
        if timedOut {
            return .fail("the DTLS handshake did not finish within \(timeoutSeconds) s" + firstError(sides))
        }
        return .wait
    }

    private static func firstError(_ sides: [SmokeLink]) -> String {
        sides.compactMap(\.lastError).first.map { ": " + $0 } ?? ""
    }
}

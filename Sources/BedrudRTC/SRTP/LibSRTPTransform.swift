import BedrudProtocol
import BedrudRuntime
import CSRTP
import FoundationEssentials

/// ``SRTPTransform`` on libsrtp2: one inbound session (`ssrc_any_inbound`, replay window
/// 1024) and one outbound (`ssrc_any_outbound`).
///
/// Debian builds libsrtp2 on NSS, which allocates a few times per packet; that is the
/// reason for the protocol in front of it.
public final class LibSRTPTransform: SRTPTransform {
    public let profile: SRTPProfile
    private let inbound: OpaquePointer
    private let outbound: OpaquePointer

    /// Replay window in packets.
    public static let replayWindow: UInt = 1024

    /// - Parameters:
    ///   - localKey: key || salt we protect with.
    ///   - remoteKey: key || salt the peer protects with.
    public init(profile: SRTPProfile, localKey: [UInt8], remoteKey: [UInt8]) throws(SRTPError) {
        let need = profile.keyLength + profile.saltLength
        guard localKey.count == need, remoteKey.count == need else { throw SRTPError(.badKeyLength) }
        try LibSRTP.initialize()
        self.profile = profile
        let gcm: Int32 = profile == .aeadAES128GCM ? 1 : 0
        var inPtr: OpaquePointer?
        var outPtr: OpaquePointer?
        var status = srtp_err_status_ok
        var local = localKey, remote = remoteKey
        remote.withUnsafeMutableBufferPointer { k in
            var policy = srtp_policy_t()
            shim_srtp_policy_init(&policy, gcm, 1, k.baseAddress, Self.replayWindow)
            status = srtp_create(&inPtr, &policy)
        }
        guard status == srtp_err_status_ok, let inPtr else { throw SRTPError(.createFailed(status.rawValue)) }
        local.withUnsafeMutableBufferPointer { k in
            var policy = srtp_policy_t()
            shim_srtp_policy_init(&policy, gcm, 0, k.baseAddress, Self.replayWindow)
            status = srtp_create(&outPtr, &policy)
        }
        guard status == srtp_err_status_ok, let outPtr else {
            srtp_dealloc(inPtr)
            throw SRTPError(.createFailed(status.rawValue))
        }
        inbound = inPtr
        outbound = outPtr
        // Key copies on the stack of this init are wiped; libsrtp keeps its own.
        for i in local.indices { local[i] = 0 }
        for i in remote.indices { remote[i] = 0 }
    }

    deinit {
        srtp_dealloc(inbound)
        srtp_dealloc(outbound)
    }

    @inline(__always)
    private static func map(_ s: srtp_err_status_t, length: Int32) -> SRTPStatus {
        if s == srtp_err_status_ok { return .ok(length: Int(length)) }
        if s == srtp_err_status_auth_fail { return .authenticationFailed }
        if s == srtp_err_status_replay_fail || s == srtp_err_status_replay_old { return .replayed }
        if s == srtp_err_status_bad_param || s == srtp_err_status_parse_err { return .malformed }
        return .failed(code: Int32(s.rawValue))
    }

    public func unprotectRTP(_ buffer: UnsafeMutableRawPointer, length: Int) -> SRTPStatus {
        // libsrtp reads the 12-byte header before checking the length itself.
        guard length >= 12 + profile.rtpOverhead, length <= Int(Int32.max) else { return .malformed }
        var len = Int32(length)
        return Self.map(srtp_unprotect(inbound, buffer, &len), length: len)
    }

    public func unprotectRTCP(_ buffer: UnsafeMutableRawPointer, length: Int) -> SRTPStatus {
        guard length >= 8 + 4 + profile.rtpOverhead, length <= Int(Int32.max) else { return .malformed }
        var len = Int32(length)
        return Self.map(srtp_unprotect_rtcp(inbound, buffer, &len), length: len)
    }

    public func protectRTP(_ buffer: UnsafeMutableRawPointer, length: Int, capacity: Int) -> SRTPStatus {
        guard length >= 12, capacity >= length + Int(shim_SRTP_MAX_TRAILER_LEN) else { return .malformed }
        var len = Int32(length)
        return Self.map(srtp_protect(outbound, buffer, &len), length: len)
    }

    public func protectRTCP(_ buffer: UnsafeMutableRawPointer, length: Int, capacity: Int) -> SRTPStatus {
        guard length >= 8, capacity >= length + Int(shim_SRTP_MAX_TRAILER_LEN) + 4 else { return .malformed }
        var len = Int32(length)
        return Self.map(srtp_protect_rtcp(outbound, buffer, &len), length: len)
    }
}

/// Process-wide libsrtp2 initialisation (the library keeps global state).
enum LibSRTP {
    private final class State: @unchecked Sendable {
        // @unchecked: `done` is guarded by `lock`.
        let lock = PosixLock()
        var done = false
    }
    private static let state = State()

    static func initialize() throws(SRTPError) {
        let ok = state.lock.withLock { () -> Bool in
            if state.done { return true }
            state.done = srtp_init() == srtp_err_status_ok
            return state.done
        }
        if !ok { throw SRTPError(.initFailed) }
    }
}

/// An SRTP context could not be set up.
public struct SRTPError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: Sendable, Equatable { case initFailed, badKeyLength, createFailed(UInt32) }
    let code: Code
    init(_ code: Code) { self.code = code }

    public var description: String {
        switch code {
        case .initFailed: "libsrtp2 failed to initialise."
        case .badKeyLength: "SRTP master key or salt has the wrong length for the negotiated profile."
        case .createFailed(let s): "libsrtp2 could not create an SRTP session (status \(s))."
        }
    }
}

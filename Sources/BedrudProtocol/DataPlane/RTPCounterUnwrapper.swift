/// Unwraps a wrapping RTP counter (the 16-bit sequence number, the 32-bit timestamp)
/// into a monotonic 64-bit one (RFC 3550 §A.1): each value is placed nearest to the
/// highest one seen, so wraps and reordering both work.
///
/// The one implementation for both threads that need it: the network thread's receive
/// statistics (extended highest sequence number, NACK) and the media thread's
/// participant timeline (which hands the unwrapped numbers to both jitter windows).
/// The first value is the counter plus one modulus, so that packets reordered before
/// it stay positive. Pure value; no allocation.
public struct RTPCounterUnwrapper: Sendable {
    /// 64 − the counter's width: a difference shifted left by it and back keeps the
    /// nearest signed distance modulo the width.
    private let shift: Int64
    /// The highest value returned so far; nil before the first.
    public private(set) var highest: Int64?

    /// - Parameter bits: the counter's width, 1…32.
    public init(bits: Int) {
        shift = Int64(64 - min(32, max(1, bits)))
    }

    /// For 16-bit RTP sequence numbers.
    public static func sequenceNumbers() -> RTPCounterUnwrapper { RTPCounterUnwrapper(bits: 16) }
    /// For 32-bit RTP timestamps.
    public static func timestamps() -> RTPCounterUnwrapper { RTPCounterUnwrapper(bits: 32) }

    /// The 64-bit value of `raw` (only its low `bits` bits count).
    @inline(__always)
    public mutating func unwrap(_ raw: UInt32) -> Int64 {
        guard let h = highest else {
            let modulus: Int64 = 1 << (64 - shift)
            let v = (Int64(raw) & (modulus - 1)) + modulus
            highest = v
            return v
        }
        let delta = ((Int64(raw) &- h) &<< shift) &>> shift
        let v = h + delta
        if v > h { highest = v }
        return v
    }

    /// Forgets the history (a new stream).
    public mutating func reset() { highest = nil }
}

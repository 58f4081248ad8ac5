// RFC 7983 §7 demultiplexing of one transport's datagrams by their first byte, with
// RFC 5761 §4 to tell RTCP from RTP (RTCP packet types 192–223 fill the RTP PT/marker byte).
//
//                 +----------------+
//                 |        [0..3] -+--> STUN
//                 |      [16..19] -+--> ZRTP
//   packet -->    |      [20..63] -+--> DTLS
//                 |      [64..79] -+--> TURN channel
//                 |    [128..191] -+--> RTP/RTCP
//                 +----------------+

/// What a datagram on the ICE transport carries.
public enum DatagramKind: Sendable, Equatable {
    case stun, zrtp, dtls, turnChannel, rtp, rtcp, unknown

    /// Classifies by the first two bytes; an empty datagram is `.unknown`.
    @inline(__always)
    public static func classify(_ d: UnsafeRawBufferPointer) -> DatagramKind {
        guard let b0 = d.first else { return .unknown }
        switch b0 {
        case 0...3: return .stun
        case 16...19: return .zrtp
        case 20...63: return .dtls
        case 64...79: return .turnChannel
        case 128...191:
            guard d.count >= 2 else { return .unknown }
            let pt = d[1] & 0x7F
            return (64...95).contains(pt) ? .rtcp : .rtp
        default: return .unknown
        }
    }
}

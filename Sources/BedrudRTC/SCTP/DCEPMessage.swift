// Data Channel Establishment Protocol (RFC 8832 §5) and the data-channel PPIDs
// (RFC 8831 §8).
//
// DATA_CHANNEL_OPEN:
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |  Message Type |  Channel Type |            Priority           |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                    Reliability Parameter                      |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |         Label Length          |       Protocol Length         |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                 Label  /  Protocol (UTF-8)                    |
// DATA_CHANNEL_ACK: one byte, 0x02.

/// SCTP payload protocol identifiers used by data channels.
public enum DataChannelPPID {
    public static let dcep: UInt32 = 50
    public static let string: UInt32 = 51
    public static let binaryPartial: UInt32 = 52
    public static let binary: UInt32 = 53
    public static let stringPartial: UInt32 = 54
    public static let stringEmpty: UInt32 = 56
    public static let binaryEmpty: UInt32 = 57
}

/// How a data channel delivers (RFC 8832 §5.1 channel types).
public struct DataChannelReliability: Sendable, Equatable {
    public var ordered: Bool
    /// Partial reliability: retransmit at most this many times.
    public var maxRetransmits: UInt32?
    /// Partial reliability: give up after this many milliseconds.
    public var maxPacketLifeTimeMs: UInt32?

    public init(ordered: Bool = true, maxRetransmits: UInt32? = nil, maxPacketLifeTimeMs: UInt32? = nil) {
        self.ordered = ordered
        self.maxRetransmits = maxRetransmits
        self.maxPacketLifeTimeMs = maxPacketLifeTimeMs
    }

    /// LiveKit's `_reliable`: ordered, reliable.
    public static let reliable = DataChannelReliability()
    /// LiveKit's `_lossy`: unordered, no retransmissions.
    public static let lossy = DataChannelReliability(ordered: false, maxRetransmits: 0)

    var channelType: UInt8 {
        let base: UInt8 = maxRetransmits != nil ? 0x01 : (maxPacketLifeTimeMs != nil ? 0x02 : 0x00)
        return ordered ? base : base | 0x80
    }
    var parameter: UInt32 { maxRetransmits ?? maxPacketLifeTimeMs ?? 0 }
}

/// A DCEP message.
public enum DCEPMessage: Sendable, Equatable {
    case open(label: String, protocol: String, reliability: DataChannelReliability, priority: UInt16)
    case ack

    public static let openType: UInt8 = 0x03
    public static let ackType: UInt8 = 0x02

    /// Parses a message received with PPID 50.
    public init(parsing b: UnsafeRawBufferPointer) throws(DCEPError) {
        guard let type = b.first else { throw .truncated }
        switch type {
        case Self.ackType:
            self = .ack
        case Self.openType:
            guard b.count >= 12 else { throw .truncated }
            let channelType = b[1]
            let priority = b.loadBE16(at: 2)
            let param = b.loadBE32(at: 4)
            let labelLen = Int(b.loadBE16(at: 8))
            let protoLen = Int(b.loadBE16(at: 10))
            guard 12 + labelLen + protoLen <= b.count else { throw .truncated }
            var rel = DataChannelReliability(ordered: channelType & 0x80 == 0)
            switch channelType & 0x7F {
            case 0x00: break
            case 0x01: rel.maxRetransmits = param
            case 0x02: rel.maxPacketLifeTimeMs = param
            default: throw .unknownChannelType(channelType)
            }
            guard let label = String(validating: UnsafeRawBufferPointer(rebasing: b[12..<(12 + labelLen)]), as: UTF8.self),
                let proto = String(validating: UnsafeRawBufferPointer(rebasing: b[(12 + labelLen)..<(12 + labelLen + protoLen)]), as: UTF8.self)
            else { throw .badUTF8 }
            self = .open(label: label, protocol: proto, reliability: rel, priority: priority)
        default:
            throw .unknownMessageType(type)
        }
    }

    /// The wire bytes.
    public var bytes: [UInt8] {
        switch self {
        case .ack:
            return [Self.ackType]
        case .open(let label, let proto, let rel, let priority):
            let l = Array(label.utf8), p = Array(proto.utf8)
            var out: [UInt8] = [Self.openType, rel.channelType, UInt8(priority >> 8), UInt8(priority & 0xFF)]
            let param = rel.parameter
            out += [UInt8(param >> 24), UInt8((param >> 16) & 0xFF), UInt8((param >> 8) & 0xFF), UInt8(param & 0xFF)]
            out += [UInt8((l.count >> 8) & 0xFF), UInt8(l.count & 0xFF), UInt8((p.count >> 8) & 0xFF), UInt8(p.count & 0xFF)]
            return out + l + p
        }
    }
}

/// Why a DCEP message was refused.
public enum DCEPError: Error, Sendable, Equatable {
    case truncated, unknownMessageType(UInt8), unknownChannelType(UInt8), badUTF8
}

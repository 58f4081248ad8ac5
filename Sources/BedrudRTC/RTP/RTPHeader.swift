// RTP fixed header (RFC 3550 §5.1), header extensions (RFC 8285), padding.
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |                           timestamp                           |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |           synchronization source (SSRC) identifier            |
// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
// |            contributing source (CSRC) identifiers             |  CC × 32 bits
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |      defined by profile       |           length              |  if X
// |                        header extension                       |  length × 32 bits
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

/// Why an RTP packet was refused.
public enum RTPParseError: Error, Sendable, Equatable {
    case tooShort, badVersion, csrcOverrun, extensionOverrun, badPadding
}

/// The parsed header of one RTP packet: field values and where the payload lies.
/// A plain value: parsing never allocates.
public struct RTPHeader: Sendable, Equatable {
    public var padding: Bool
    public var marker: Bool
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var csrcCount: Int
    /// The extension profile (0xBEDE one-byte, 0x100x two-byte), or nil without extension.
    public var extensionProfile: UInt16?
    /// Byte offset and length of the extension data (after its 4-byte header).
    public var extensionOffset: Int
    public var extensionLength: Int
    public var payloadOffset: Int
    public var payloadLength: Int
    public var paddingLength: Int

    /// Parses and validates the header of `packet` (the whole RTP packet, after SRTP).
    @inline(__always)
    public static func parse(_ packet: UnsafeRawBufferPointer) throws(RTPParseError) -> RTPHeader {
        let n = packet.count
        guard n >= 12 else { throw .tooShort }
        let b0 = packet[0], b1 = packet[1]
        guard b0 >> 6 == 2 else { throw .badVersion }
        let cc = Int(b0 & 0x0F)
        var offset = 12 + cc * 4
        guard offset <= n else { throw .csrcOverrun }
        var profile: UInt16?
        var extOffset = 0, extLength = 0
        if b0 & 0x10 != 0 {
            guard offset + 4 <= n else { throw .extensionOverrun }
            profile = packet.loadBE16(at: offset)
            extLength = Int(packet.loadBE16(at: offset + 2)) * 4
            extOffset = offset + 4
            offset = extOffset + extLength
            guard offset <= n else { throw .extensionOverrun }
        }
        var pad = 0
        if b0 & 0x20 != 0 {
            pad = Int(packet[n - 1])
            guard pad >= 1, pad <= n - offset else { throw .badPadding }
        }
        return RTPHeader(
            padding: pad > 0, marker: b1 & 0x80 != 0, payloadType: b1 & 0x7F,
            sequenceNumber: packet.loadBE16(at: 2), timestamp: packet.loadBE32(at: 4), ssrc: packet.loadBE32(at: 8),
            csrcCount: cc, extensionProfile: profile, extensionOffset: extOffset, extensionLength: extLength,
            payloadOffset: offset, payloadLength: n - offset - pad, paddingLength: pad)
    }

    /// The i-th CSRC; `i < csrcCount`.
    public func csrc(_ i: Int, in packet: UnsafeRawBufferPointer) -> UInt32 { packet.loadBE32(at: 12 + 4 * i) }

    /// Calls `body(id, data)` for each RFC 8285 element of the extension block.
    /// - Returns: false if the block is malformed or the profile is not one- or two-byte
    ///   (elements seen before the fault have been reported).
    @discardableResult
    public func forEachExtension(in packet: UnsafeRawBufferPointer, _ body: (UInt8, UnsafeRawBufferPointer) -> Void) -> Bool {
        guard let profile = extensionProfile else { return true }
        let end = extensionOffset + extensionLength
        var i = extensionOffset
        if profile == 0xBEDE {
            while i < end {
                let b = packet[i]
                if b == 0 { i += 1; continue }  // padding
                let id = b >> 4
                if id == 15 { return true }  // reserved: stop parsing
                let len = Int(b & 0x0F) + 1
                guard i + 1 + len <= end else { return false }
                body(id, UnsafeRawBufferPointer(rebasing: packet[(i + 1)..<(i + 1 + len)]))
                i += 1 + len
            }
            return true
        }
        if profile & 0xFFF0 == 0x1000 {
            while i < end {
                let id = packet[i]
                if id == 0 { i += 1; continue }
                guard i + 2 <= end else { return false }
                let len = Int(packet[i + 1])
                guard i + 2 + len <= end else { return false }
                body(id, UnsafeRawBufferPointer(rebasing: packet[(i + 2)..<(i + 2 + len)]))
                i += 2 + len
            }
            return true
        }
        return false
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always) func loadBE16(at i: Int) -> UInt16 { UInt16(self[i]) << 8 | UInt16(self[i + 1]) }
    @inline(__always) func loadBE32(at i: Int) -> UInt32 {
        UInt32(self[i]) << 24 | UInt32(self[i + 1]) << 16 | UInt32(self[i + 2]) << 8 | UInt32(self[i + 3])
    }
    @inline(__always) func loadBE64(at i: Int) -> UInt64 { UInt64(loadBE32(at: i)) << 32 | UInt64(loadBE32(at: i + 4)) }
}

extension UnsafeMutableRawBufferPointer {
    @inline(__always) package func storeBE16(_ v: UInt16, at i: Int) {
        self[i] = UInt8(v >> 8)
        self[i + 1] = UInt8(truncatingIfNeeded: v)
    }
    @inline(__always) package func storeBE32(_ v: UInt32, at i: Int) {
        self[i] = UInt8(v >> 24)
        self[i + 1] = UInt8(truncatingIfNeeded: v >> 16)
        self[i + 2] = UInt8(truncatingIfNeeded: v >> 8)
        self[i + 3] = UInt8(truncatingIfNeeded: v)
    }
}

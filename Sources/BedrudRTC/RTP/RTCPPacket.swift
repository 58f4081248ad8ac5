// RTCP compound packets (RFC 3550 §6): SR, RR, SDES, BYE; transport/payload feedback
// (RFC 4585 §6): generic NACK, PLI. Parsing walks the caller's bytes and never allocates.
//
//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P| RC/FMT  |      PT       |     length (words − 1)        |
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

/// Why an RTCP packet was refused.
public enum RTCPParseError: Error, Sendable, Equatable {
    case tooShort, badVersion, lengthOverrun, badPadding, truncatedBody
}

/// RTCP packet types used here.
public enum RTCPPacketType {
    public static let senderReport: UInt8 = 200
    public static let receiverReport: UInt8 = 201
    public static let sourceDescription: UInt8 = 202
    public static let goodbye: UInt8 = 203
    public static let application: UInt8 = 204
    public static let transportFeedback: UInt8 = 205
    public static let payloadFeedback: UInt8 = 206
    public static let extendedReport: UInt8 = 207
}

/// One RTCP packet inside a compound packet: its header fields and its bytes
/// (header included, padding excluded). Valid only while the underlying buffer is.
public struct RTCPPacketView {
    public let packetType: UInt8
    /// RC, SC or FMT, depending on the type.
    public let count: UInt8
    /// The packet, from its header to the end of its body, without padding.
    public let bytes: UnsafeRawBufferPointer

    /// SSRC of the sender (the 32 bits after the header, present in every type used here).
    public var senderSSRC: UInt32? { bytes.count >= 8 ? bytes.loadBE32(at: 4) : nil }
}

/// A report block of an SR or RR (RFC 3550 §6.4.1).
public struct RTCPReportBlock: Sendable, Equatable {
    public var ssrc: UInt32
    public var fractionLost: UInt8
    /// Cumulative packets lost, a signed 24-bit value.
    public var cumulativeLost: Int32
    public var extendedHighestSequence: UInt32
    public var jitter: UInt32
    public var lastSenderReport: UInt32
    public var delaySinceLastSenderReport: UInt32

    public init(ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequence: UInt32, jitter: UInt32, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    static let size = 24

    init(at o: Int, in b: UnsafeRawBufferPointer) {
        ssrc = b.loadBE32(at: o)
        fractionLost = b[o + 4]
        let raw = UInt32(b[o + 5]) << 16 | UInt32(b[o + 6]) << 8 | UInt32(b[o + 7])
        cumulativeLost = raw & 0x80_0000 != 0 ? Int32(bitPattern: raw | 0xFF00_0000) : Int32(raw)
        extendedHighestSequence = b.loadBE32(at: o + 8)
        jitter = b.loadBE32(at: o + 12)
        lastSenderReport = b.loadBE32(at: o + 16)
        delaySinceLastSenderReport = b.loadBE32(at: o + 20)
    }
}

/// Sender report (PT 200): sender info and report blocks.
public struct RTCPSenderReport: Sendable, Equatable {
    public var ssrc: UInt32
    /// 64-bit NTP timestamp (seconds since 1900 in the high 32 bits).
    public var ntpTimestamp: UInt64
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
    public var reportCount: Int

    /// Decodes the sender info of an SR view; nil if the view is not a complete SR.
    public init?(_ v: RTCPPacketView) {
        guard v.packetType == RTCPPacketType.senderReport, v.bytes.count >= 28 + Int(v.count) * RTCPReportBlock.size else { return nil }
        ssrc = v.bytes.loadBE32(at: 4)
        ntpTimestamp = v.bytes.loadBE64(at: 8)
        rtpTimestamp = v.bytes.loadBE32(at: 16)
        packetCount = v.bytes.loadBE32(at: 20)
        octetCount = v.bytes.loadBE32(at: 24)
        reportCount = Int(v.count)
    }

    /// Report block `i` of the SR in `v`.
    public static func reportBlock(_ i: Int, in v: RTCPPacketView) -> RTCPReportBlock { RTCPReportBlock(at: 28 + i * 24, in: v.bytes) }

    /// The middle 32 bits of the NTP timestamp: what a receiver echoes as LSR.
    public var compactNTP: UInt32 { UInt32(truncatingIfNeeded: ntpTimestamp >> 16) }
}

/// Receiver report (PT 201).
public enum RTCPReceiverReport {
    /// Number of complete report blocks in an RR view (0 if it is not an RR).
    public static func reportCount(_ v: RTCPPacketView) -> Int {
        guard v.packetType == RTCPPacketType.receiverReport, v.bytes.count >= 8 + Int(v.count) * 24 else { return 0 }
        return Int(v.count)
    }
    public static func reportBlock(_ i: Int, in v: RTCPPacketView) -> RTCPReportBlock { RTCPReportBlock(at: 8 + i * 24, in: v.bytes) }
}

/// Generic NACK (RTPFB, FMT 1; RFC 4585 §6.2.1).
public enum RTCPGenericNACK {
    public static let format: UInt8 = 1

    /// Media SSRC of a NACK view, or nil if the view is not a well-formed generic NACK.
    public static func mediaSSRC(_ v: RTCPPacketView) -> UInt32? {
        guard v.packetType == RTCPPacketType.transportFeedback, v.count == format, v.bytes.count >= 16, v.bytes.count % 4 == 0 else { return nil }
        return v.bytes.loadBE32(at: 8)
    }

    /// Calls `body` for every sequence number the NACK reports lost.
    public static func forEachLost(_ v: RTCPPacketView, _ body: (UInt16) -> Void) {
        guard mediaSSRC(v) != nil else { return }
        var o = 12
        while o + 4 <= v.bytes.count {
            let pid = v.bytes.loadBE16(at: o)
            let blp = v.bytes.loadBE16(at: o + 2)
            body(pid)
            for bit in 0..<16 where blp & (1 << bit) != 0 { body(pid &+ UInt16(bit + 1)) }
            o += 4
        }
    }
}

/// Picture loss indication (PSFB, FMT 1; RFC 4585 §6.3.1).
public enum RTCPPictureLossIndication {
    public static let format: UInt8 = 1
    public static func mediaSSRC(_ v: RTCPPacketView) -> UInt32? {
        guard v.packetType == RTCPPacketType.payloadFeedback, v.count == format, v.bytes.count >= 12 else { return nil }
        return v.bytes.loadBE32(at: 8)
    }
}

/// Goodbye (PT 203).
public enum RTCPGoodbye {
    /// Calls `body` for each SSRC leaving.
    public static func forEachSource(_ v: RTCPPacketView, _ body: (UInt32) -> Void) {
        guard v.packetType == RTCPPacketType.goodbye else { return }
        let n = min(Int(v.count), (v.bytes.count - 4) / 4)
        for i in 0..<max(0, n) { body(v.bytes.loadBE32(at: 4 + 4 * i)) }
    }
}

/// Source description (PT 202).
public enum RTCPSourceDescription {
    /// Calls `body(ssrc, itemType, itemData)` for each item of each chunk.
    /// - Returns: false if a chunk runs past the packet.
    @discardableResult
    public static func forEachItem(_ v: RTCPPacketView, _ body: (UInt32, UInt8, UnsafeRawBufferPointer) -> Void) -> Bool {
        guard v.packetType == RTCPPacketType.sourceDescription else { return false }
        let b = v.bytes
        var o = 4
        for _ in 0..<Int(v.count) {
            guard o + 4 <= b.count else { return false }
            let ssrc = b.loadBE32(at: o)
            o += 4
            while true {
                guard o < b.count else { return false }
                let type = b[o]
                if type == 0 {  // end of chunk: skip to the next 32-bit boundary
                    o = (o + 4) & ~3
                    break
                }
                guard o + 2 <= b.count else { return false }
                let len = Int(b[o + 1])
                guard o + 2 + len <= b.count else { return false }
                body(ssrc, type, UnsafeRawBufferPointer(rebasing: b[(o + 2)..<(o + 2 + len)]))
                o += 2 + len
            }
        }
        return true
    }
}

/// Walks a compound RTCP packet (after SRTCP).
public enum RTCPCompound {
    /// Validates the whole compound first (RFC 3550 A.2: version, lengths adding up,
    /// padding only on the last packet), then calls `body` for each packet.
    /// Nothing is reported for a compound that fails validation.
    public static func forEach(_ compound: UnsafeRawBufferPointer, _ body: (RTCPPacketView) -> Void) throws(RTCPParseError) {
        try validate(compound)
        var o = 0
        let n = compound.count
        while o < n {
            let b0 = compound[o]
            let len = (Int(compound.loadBE16(at: o + 2)) + 1) * 4
            var bodyLen = len
            if b0 & 0x20 != 0 { bodyLen -= Int(compound[o + len - 1]) }
            body(RTCPPacketView(packetType: compound[o + 1], count: b0 & 0x1F, bytes: UnsafeRawBufferPointer(rebasing: compound[o..<(o + bodyLen)])))
            o += len
        }
    }

    /// Checks structure only; see ``forEach(_:_:)``.
    public static func validate(_ c: UnsafeRawBufferPointer) throws(RTCPParseError) {
        let n = c.count
        guard n >= 4 else { throw .tooShort }
        var o = 0
        while o < n {
            guard o + 4 <= n else { throw .tooShort }
            let b0 = c[o]
            guard b0 >> 6 == 2 else { throw .badVersion }
            let len = (Int(c.loadBE16(at: o + 2)) + 1) * 4
            guard o + len <= n else { throw .lengthOverrun }
            if b0 & 0x20 != 0 {
                guard o + len == n else { throw .badPadding }  // only the last packet may pad
                let pad = Int(c[o + len - 1])
                guard pad >= 1, pad <= len - 4 else { throw .badPadding }
            }
            let type = c[o + 1], count = Int(b0 & 0x1F)
            switch type {
            case RTCPPacketType.senderReport: guard len >= 28 + count * 24 else { throw .truncatedBody }
            case RTCPPacketType.receiverReport: guard len >= 8 + count * 24 else { throw .truncatedBody }
            case RTCPPacketType.goodbye: guard len >= 4 + count * 4 else { throw .truncatedBody }
            case RTCPPacketType.transportFeedback, RTCPPacketType.payloadFeedback: guard len >= 12 else { throw .truncatedBody }
            default: break
            }
            o += len
        }
    }
}

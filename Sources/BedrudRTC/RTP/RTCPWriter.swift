// Writes the RTCP a receiver and a sender send (RFC 3550 §6.4.1 SR, §6.4.2 RR, §6.5 SDES CNAME; RFC 4585
// §6.2.1 generic NACK; §6.3.1 PLI) into a caller-owned buffer, without allocating.

/// Appends RTCP packets to a fixed buffer. Each `append…` returns false (and writes
/// nothing) when the packet does not fit.
public struct RTCPWriter {
    public let buffer: UnsafeMutableRawBufferPointer
    /// Bytes written so far.
    public private(set) var count = 0

    public init(buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    private func header(at o: Int, count rc: Int, type: UInt8, words: Int) {
        buffer[o] = 0x80 | UInt8(rc & 0x1F)
        buffer[o + 1] = type
        buffer.storeBE16(UInt16(words - 1), at: o + 2)
    }

    /// Receiver report with up to 31 blocks.
    @discardableResult
    public mutating func appendReceiverReport<C: Collection>(senderSSRC: UInt32, blocks: C) -> Bool where C.Element == RTCPReportBlock {
        let n = blocks.count
        guard n <= 31 else { return false }
        let len = 8 + n * 24
        guard count + len <= buffer.count else { return false }
        header(at: count, count: n, type: RTCPPacketType.receiverReport, words: len / 4)
        buffer.storeBE32(senderSSRC, at: count + 4)
        var o = count + 8
        for b in blocks {
            buffer.storeBE32(b.ssrc, at: o)
            buffer[o + 4] = b.fractionLost
            let lost = UInt32(bitPattern: max(-0x80_0000, min(0x7F_FFFF, b.cumulativeLost))) & 0xFF_FFFF
            buffer[o + 5] = UInt8(lost >> 16)
            buffer[o + 6] = UInt8(truncatingIfNeeded: lost >> 8)
            buffer[o + 7] = UInt8(truncatingIfNeeded: lost)
            buffer.storeBE32(b.extendedHighestSequence, at: o + 8)
            buffer.storeBE32(b.jitter, at: o + 12)
            buffer.storeBE32(b.lastSenderReport, at: o + 16)
            buffer.storeBE32(b.delaySinceLastSenderReport, at: o + 20)
            o += 24
        }
        count += len
        return true
    }

    /// SDES with one chunk holding a CNAME item (RFC 3550 §6.5.1); `cname` at most 255 bytes.
    @discardableResult
    public mutating func appendSourceDescription(ssrc: UInt32, cname: UnsafeRawBufferPointer) -> Bool {
        guard cname.count <= 255 else { return false }
        // header 4 + ssrc 4 + type 1 + len 1 + text + at least one null, padded to 4
        let raw = 4 + 4 + 2 + cname.count + 1
        let len = (raw + 3) & ~3
        guard count + len <= buffer.count else { return false }
        header(at: count, count: 1, type: RTCPPacketType.sourceDescription, words: len / 4)
        buffer.storeBE32(ssrc, at: count + 4)
        buffer[count + 8] = 1  // CNAME
        buffer[count + 9] = UInt8(cname.count)
        if let base = cname.baseAddress, cname.count > 0 {
            (buffer.baseAddress! + count + 10).copyMemory(from: base, byteCount: cname.count)
        }
        for i in (count + 10 + cname.count)..<(count + len) { buffer[i] = 0 }
        count += len
        return true
    }

    /// Generic NACK for `lost` sequence numbers (any order); packs them into PID+BLP pairs.
    /// - Returns: false if nothing was written (no room or `lost` empty).
    @discardableResult
    public mutating func appendNACK(senderSSRC: UInt32, mediaSSRC: UInt32, lost: UnsafeBufferPointer<UInt16>) -> Bool {
        guard !lost.isEmpty else { return false }
        // Count pairs first so the length is known; `lost` is expected sorted (the tracker emits it so).
        var pairs = 0
        var i = 0
        while i < lost.count {
            let pid = lost[i]
            i += 1
            while i < lost.count, lost[i] &- pid >= 1, lost[i] &- pid <= 16 { i += 1 }
            pairs += 1
        }
        let len = 12 + pairs * 4
        guard count + len <= buffer.count else { return false }
        header(at: count, count: Int(RTCPGenericNACK.format), type: RTCPPacketType.transportFeedback, words: len / 4)
        buffer.storeBE32(senderSSRC, at: count + 4)
        buffer.storeBE32(mediaSSRC, at: count + 8)
        var o = count + 12
        i = 0
        while i < lost.count {
            let pid = lost[i]
            var blp: UInt16 = 0
            i += 1
            while i < lost.count, lost[i] &- pid >= 1, lost[i] &- pid <= 16 {
                blp |= 1 << (lost[i] &- pid &- 1)
                i += 1
            }
            buffer.storeBE16(pid, at: o)
            buffer.storeBE16(blp, at: o + 2)
            o += 4
        }
        count += len
        return true
    }

    /// Picture loss indication.
    @discardableResult
    public mutating func appendPLI(senderSSRC: UInt32, mediaSSRC: UInt32) -> Bool {
        guard count + 12 <= buffer.count else { return false }
        header(at: count, count: Int(RTCPPictureLossIndication.format), type: RTCPPacketType.payloadFeedback, words: 3)
        buffer.storeBE32(senderSSRC, at: count + 4)
        buffer.storeBE32(mediaSSRC, at: count + 8)
        count += 12
        return true
    }
}

extension RTCPWriter {
    /// Sender report with no report blocks (RFC 3550 §6.4.1).
    @discardableResult
    public mutating func appendSenderReport(ssrc: UInt32, ntp: UInt64, rtpTimestamp: UInt32, packets: UInt32, octets: UInt32) -> Bool {
        guard count + 28 <= buffer.count else { return false }
        buffer[count] = 0x80
        buffer[count + 1] = RTCPPacketType.senderReport
        buffer.storeBE16(6, at: count + 2)
        buffer.storeBE32(ssrc, at: count + 4)
        buffer.storeBE32(UInt32(truncatingIfNeeded: ntp >> 32), at: count + 8)
        buffer.storeBE32(UInt32(truncatingIfNeeded: ntp), at: count + 12)
        buffer.storeBE32(rtpTimestamp, at: count + 16)
        buffer.storeBE32(packets, at: count + 20)
        buffer.storeBE32(octets, at: count + 24)
        count += 28
        return true
    }
}

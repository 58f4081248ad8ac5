// Structural check of an SCTP packet (RFC 9260 §3) before usrsctp sees it: a 12-byte
// common header, then chunks of type(1) flags(1) length(2) value, each length ≥ 4 and
// within the packet, padded to 4 bytes (the last chunk's padding may be missing).
// usrsctp verifies the CRC32c and everything semantic.

/// Why an SCTP packet was refused.
public enum SCTPPacketError: Error, Sendable, Equatable {
    case tooShort, noChunks, badChunkLength, chunkOverrun
}

public enum SCTPPacketValidator {
    /// Validates `packet` and returns its number of chunks.
    public static func validate(_ packet: UnsafeRawBufferPointer) throws(SCTPPacketError) -> Int {
        guard packet.count >= 12 else { throw .tooShort }
        guard packet.count >= 16 else { throw .noChunks }
        var o = 12
        var chunks = 0
        while o < packet.count {
            guard o + 4 <= packet.count else { throw .chunkOverrun }
            let len = Int(packet.loadBE16(at: o + 2))
            guard len >= 4 else { throw .badChunkLength }
            guard o + len <= packet.count else { throw .chunkOverrun }
            chunks += 1
            o += (len + 3) & ~3
        }
        return chunks
    }
}

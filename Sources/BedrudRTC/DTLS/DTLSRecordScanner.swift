// Structural check of a DTLS datagram before OpenSSL sees it (RFC 6347 §4.1): one or
// more records, each a 13-byte header and a body of the stated length, filling the
// datagram exactly.
//
//  type(1) | version(2) | epoch(2) | sequence_number(6) | length(2) | fragment(length)

/// Why a DTLS datagram was refused before reaching OpenSSL.
public enum DTLSRecordError: Error, Sendable, Equatable {
    case empty, truncatedHeader, badContentType, badVersion, lengthOverrun, recordTooLong
}

public enum DTLSRecordScanner {
    /// Largest record body: 2^14 plaintext plus 2048 expansion (RFC 6347 §4.1 / RFC 5246 §6.2.3).
    public static let maxRecordLength = 16_384 + 2048

    /// Validates `datagram` and returns the number of records in it.
    public static func validate(_ datagram: UnsafeRawBufferPointer) throws(DTLSRecordError) -> Int {
        guard !datagram.isEmpty else { throw .empty }
        var o = 0
        var records = 0
        while o < datagram.count {
            guard o + 13 <= datagram.count else { throw .truncatedHeader }
            let type = datagram[o]
            // change_cipher_spec, alert, handshake, application_data, heartbeat, tls12_cid
            guard (20...25).contains(type) else { throw .badContentType }
            guard datagram[o + 1] == 0xFE, datagram[o + 2] >= 0xFC else { throw .badVersion }
            let len = Int(datagram.loadBE16(at: o + 11))
            guard len <= maxRecordLength else { throw .recordTooLong }
            guard o + 13 + len <= datagram.count else { throw .lengthOverrun }
            o += 13 + len
            records += 1
        }
        return records
    }

    /// Content type of the first record (23 = application data), or nil.
    public static func firstContentType(_ datagram: UnsafeRawBufferPointer) -> UInt8? { datagram.first }
}

import Testing
@testable import BedrudRTC

@Suite("DCEP and SCTP packet checks")
struct DCEPMessageTests {
    @Test("DATA_CHANNEL_OPEN round-trips for LiveKit's channels and the partial-reliability kinds", arguments: [
        DCEPMessage.open(label: "_reliable", protocol: "", reliability: .reliable, priority: 256),
        DCEPMessage.open(label: "_lossy", protocol: "", reliability: .lossy, priority: 256),
        DCEPMessage.open(label: "timed", protocol: "proto", reliability: DataChannelReliability(ordered: true, maxPacketLifeTimeMs: 3000), priority: 0),
        DCEPMessage.open(label: "ünïcode", protocol: "", reliability: DataChannelReliability(ordered: false, maxRetransmits: 5), priority: 512),
        DCEPMessage.ack,
    ])
    func roundTrip(message: DCEPMessage) throws {
        let bytes = message.bytes
        #expect(try bytes.withUnsafeBytes { try DCEPMessage(parsing: $0) } == message)
    }

    @Test("Wire layout of an OPEN (RFC 8832 §5.1)")
    func layout() {
        let b = DCEPMessage.open(label: "_lossy", protocol: "", reliability: .lossy, priority: 256).bytes
        #expect(b == [0x03, 0x81, 0x01, 0x00, 0, 0, 0, 0, 0, 6, 0, 0] + Array("_lossy".utf8))
    }

    @Test("Truncated or unknown DCEP messages are refused")
    func malformed() {
        let open = DCEPMessage.open(label: "abc", protocol: "p", reliability: .reliable, priority: 1).bytes
        var badType = open
        badType[1] = 0x05
        var badUTF8 = open
        badUTF8[12] = 0xFF
        let cases: [([UInt8], DCEPError)] = [
            ([], .truncated), (Array(open[0..<11]), .truncated), (Array(open[0..<14]), .truncated),
            ([0x07], .unknownMessageType(7)), (badType, .unknownChannelType(5)), (badUTF8, .badUTF8),
        ]
        for (bytes, e) in cases {
            #expect(throws: e) { try bytes.withUnsafeBytes { try DCEPMessage(parsing: $0) } }
        }
    }

    @Test("SCTP packets: chunks inside the packet pass; truncated or zero-length chunks are refused")
    func validator() throws {
        let header = [UInt8](repeating: 0, count: 12)
        let data: [UInt8] = [0, 3, 0, 17] + [UInt8](repeating: 1, count: 13) + [0, 0, 0]  // DATA, padded
        let sack: [UInt8] = [3, 0, 0, 16] + [UInt8](repeating: 0, count: 12)
        #expect(try (header + data + sack).withUnsafeBytes { try SCTPPacketValidator.validate($0) } == 2)
        // The last chunk's padding may be missing.
        #expect(try (header + Array(data[0..<17])).withUnsafeBytes { try SCTPPacketValidator.validate($0) } == 1)
        let cases: [([UInt8], SCTPPacketError)] = [
            (Array(header[0..<8]), .tooShort), (header, .noChunks), (header + [0, 0, 0, 2], .badChunkLength),
            (header + [0, 0, 0, 40, 1, 2], .chunkOverrun), (header + data + [3, 0], .chunkOverrun),
        ]
        for (bytes, e) in cases {
            #expect(throws: e) { try bytes.withUnsafeBytes { try SCTPPacketValidator.validate($0) } }
        }
    }
}

import Testing
@testable import BedrudProtocol

/// A test-only message using every scalar kind the codec supports, including the ones
/// LiveKit does not use (sint, fixed, double), so the whole wire format is covered.
struct AllKinds: ProtoMessage {
    var int32: Int32 = 0
    var int64: Int64 = 0
    var uint32: UInt32 = 0
    var uint64: UInt64 = 0
    var sint64: Int64 = 0
    var bool = false
    var fixed32: UInt32 = 0
    var fixed64: UInt64 = 0
    var float: Float = 0
    var double: Double = 0
    var string = ""
    var bytes: [UInt8] = []
    var child: Child?
    var children: [Child] = []
    var packed: [Int32] = []
    var floats: [Float] = []
    var map: [String: String] = [:]
    var optionalInt: Int32?
    var strings: [String] = []
    var unknownFields = ProtoUnknownFields()

    struct Child: ProtoMessage {
        var value: UInt64 = 0
        var grandchild: [Child] = []
        var unknownFields = ProtoUnknownFields()

        mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
            switch tag.fieldNumber {
            case 1: try r.decode(tag, into: &value)
            case 2: try r.decode(tag, into: &grandchild)
            default: false
            }
        }

        func traverse<V: ProtoVisitor>(_ v: inout V) {
            v.field(1, "value", value)
            v.field(2, "grandchild", grandchild)
            v.unknown(unknownFields)
        }
    }

    mutating func decodeField(_ tag: ProtoTag, from r: inout ProtoReader) throws -> Bool {
        switch tag.fieldNumber {
        case 1: try r.decode(tag, into: &int32)
        case 2: try r.decode(tag, into: &int64)
        case 3: try r.decode(tag, into: &uint32)
        case 4: try r.decode(tag, into: &uint64)
        case 5: try r.decodeZigZag(tag, into: &sint64)
        case 6: try r.decode(tag, into: &bool)
        case 7: try r.decodeFixed(tag, into: &fixed32)
        case 8: try r.decodeFixed(tag, into: &fixed64)
        case 9: try r.decode(tag, into: &float)
        case 10: try r.decode(tag, into: &double)
        case 11: try r.decode(tag, into: &string)
        case 12: try r.decode(tag, into: &bytes)
        case 13: try r.decode(tag, into: &child)
        case 14: try r.decode(tag, into: &children)
        case 15: try r.decode(tag, into: &packed)
        case 16: try r.decode(tag, into: &floats)
        case 17: try r.decode(tag, into: &map)
        case 18: try r.decode(tag, into: &optionalInt)
        case 19: try r.decode(tag, into: &strings)
        default: false
        }
    }

    func traverse<V: ProtoVisitor>(_ v: inout V) {
        v.field(1, "int32", int32)
        v.field(2, "int64", int64)
        v.field(3, "uint32", uint32)
        v.field(4, "uint64", uint64)
        v.zigZagField(5, "sint64", sint64)
        v.field(6, "bool", bool)
        v.fixedField(7, "fixed32", fixed32)
        v.fixedField(8, "fixed64", fixed64)
        v.field(9, "float", float)
        v.field(10, "double", double)
        v.field(11, "string", string)
        v.field(12, "bytes", bytes)
        v.field(13, "child", child)
        v.field(14, "children", children)
        v.field(15, "packed", packed)
        v.field(16, "floats", floats)
        v.field(17, "map", map)
        v.field(18, "optional_int", optionalInt)
        v.field(19, "strings", strings)
        v.unknown(unknownFields)
    }
}

func hexBytes(_ s: String) -> [UInt8] {
    s.split(separator: " ").compactMap { UInt8($0, radix: 16) }
}

@Suite struct ProtoWireTests {
    // MARK: - Varints and ZigZag (protobuf encoding guide: "Base 128 Varints", "ZigZag")

    @Test(arguments: [
        (UInt64(0), "00"), (1, "01"), (127, "7f"), (128, "80 01"), (150, "96 01"), (300, "ac 02"),
        (16383, "ff 7f"), (16384, "80 80 01"), (UInt64(UInt32.max), "ff ff ff ff 0f"),
        (UInt64.max, "ff ff ff ff ff ff ff ff ff 01"),
    ])
    func varintRoundTrip(value: UInt64, encoded: String) throws {
        var w = ProtoWriter()
        w.writeVarint(value)
        #expect(w.bytes == hexBytes(encoded))
        #expect(ProtoWriter.varintSize(value) == w.bytes.count)
        var r = ProtoReader(w.bytes)
        #expect(try r.readVarint() == value)
        #expect(r.isAtEnd)
    }

    @Test func negativeInt32TakesTenBytes() throws {
        let m = AllKinds.with { $0.int32 = -1 }
        #expect(m.protobufBytes() == hexBytes("08 ff ff ff ff ff ff ff ff ff 01"))
        #expect(try AllKinds(protobufBytes: m.protobufBytes()).int32 == -1)
        // An int32 written by a sloppy encoder as a 5-byte varint still reads as -1.
        #expect(try AllKinds(protobufBytes: hexBytes("08 ff ff ff ff 0f")).int32 == -1)
    }

    @Test(arguments: [
        (Int64(0), UInt64(0)), (-1, 1), (1, 2), (-2, 3), (2147483647, 4294967294), (-2147483648, 4294967295),
        (Int64.max, UInt64.max - 1), (Int64.min, UInt64.max),
    ])
    func zigZag(value: Int64, encoded: UInt64) {
        #expect(ZigZag.encode(value) == encoded)
        #expect(ZigZag.decode(encoded) == value)
    }

    @Test func overlongVarintIsRejected() {
        var r = ProtoReader(hexBytes("ff ff ff ff ff ff ff ff ff ff 01"))
        #expect(throws: ProtoDecodingError(.malformedVarint, offset: 0)) { try r.readVarint() }
    }

    @Test func tenthByteHighBitsAreDropped() throws {
        var r = ProtoReader(hexBytes("ff ff ff ff ff ff ff ff ff 7f"))
        #expect(try r.readVarint() == UInt64.max)
    }

    // MARK: - Every scalar kind, byte for byte

    @Test func allKindsEncodeInFieldOrderAndRoundTrip() throws {
        let m = AllKinds.with {
            $0.int32 = 150; $0.int64 = -2; $0.uint32 = 300; $0.uint64 = 1 << 40; $0.sint64 = -3
            $0.bool = true; $0.fixed32 = 0x0102_0304; $0.fixed64 = 0x0102_0304_0506_0708
            $0.float = 1.5; $0.double = -0.25; $0.string = "hé"; $0.bytes = [0, 255]
            $0.child = .with { $0.value = 1 }
            $0.children = [.with { $0.value = 2 }, .init()]
            $0.packed = [1, -1, 300]; $0.floats = [0.5, 2]; $0.map = ["b": "2", "a": ""]
            $0.optionalInt = 0; $0.strings = ["x", ""]
        }
        let expected = hexBytes("""
            08 96 01  10 fe ff ff ff ff ff ff ff ff 01  18 ac 02  20 80 80 80 80 80 20  28 05  30 01
            3d 04 03 02 01  41 08 07 06 05 04 03 02 01  4d 00 00 c0 3f  51 00 00 00 00 00 00 d0 bf
            5a 03 68 c3 a9  62 02 00 ff  6a 02 08 01  72 02 08 02  72 00
            7a 0d 01 ff ff ff ff ff ff ff ff ff 01 ac 02  82 01 08 00 00 00 3f 00 00 00 40
            8a 01 05 0a 01 61 12 00  8a 01 06 0a 01 62 12 01 32  90 01 00  9a 01 01 78  9a 01 00
            """.replacingOccurrences(of: "\n", with: " "))
        #expect(m.protobufBytes() == expected)
        let back = try AllKinds(protobufBytes: expected)
        #expect(back == m)
        #expect(back.protoMirror["sint64"] == .int(-3))
        #expect(back.protoMirror["optional_int"] == .int(0), "an explicitly set optional zero is present")
    }

    @Test func defaultsAreOmitted() {
        #expect(AllKinds().protobufBytes().isEmpty)
        #expect(AllKinds().protoMirror == .message([:]))
        // -0.0 is not the default: its bits differ.
        #expect(AllKinds.with { $0.double = -0.0 }.protobufBytes() == hexBytes("51 00 00 00 00 00 00 00 80"))
    }

    @Test func repeatedScalarsAcceptPackedAndUnpacked() throws {
        // field 15 unpacked: 78 01, 78 02; then packed run 7a 02 03 04.
        let m = try AllKinds(protobufBytes: hexBytes("78 01 78 02 7a 02 03 04"))
        #expect(m.packed == [1, 2, 3, 4])
        let f = try AllKinds(protobufBytes: hexBytes("85 01 00 00 80 3f 82 01 04 00 00 00 40"))
        #expect(f.floats == [1, 2])
    }

    @Test func packedRunMustEndOnAnElement() {
        #expect(throws: ProtoDecodingError.self) { try AllKinds(protobufBytes: hexBytes("7a 02 01 80")) }
        #expect(throws: ProtoDecodingError.self) { try AllKinds(protobufBytes: hexBytes("82 01 03 00 00 80")) }
    }

    @Test func mapEntriesTolerateMissingPartsAndDuplicates() throws {
        // {key "a"} with no value, {value "x"} with no key, then "a" again with "z".
        let m = try AllKinds(protobufBytes: hexBytes("8a 01 03 0a 01 61  8a 01 03 12 01 78  8a 01 06 0a 01 61 12 01 7a"))
        #expect(m.map == ["a": "z", "": "x"])
    }

    @Test func singularSubMessagesMergeRepeatedOccurrences() throws {
        // child {value 1} then child {grandchild {}}: merged, not replaced.
        let m = try AllKinds(protobufBytes: hexBytes("6a 02 08 01 6a 02 12 00"))
        #expect(m.child?.value == 1)
        #expect(m.child?.grandchild.count == 1)
    }

    @Test func lastScalarWins() throws {
        #expect(try AllKinds(protobufBytes: hexBytes("08 01 08 02")).int32 == 2)
    }

    // MARK: - Unknown fields

    @Test func unknownFieldsOfEveryWireTypeAreKeptAndReEmitted() throws {
        let unknown = hexBytes("a0 06 05  a9 06 01 02 03 04 05 06 07 08  b2 06 02 68 69  bd 06 01 02 03 04  c3 06 08 01 c4 06")
        let bytes = hexBytes("08 07") + unknown + hexBytes("10 01")
        let m = try AllKinds(protobufBytes: bytes)
        #expect(m.int32 == 7 && m.int64 == 1)
        #expect(m.unknownFields.fieldNumbers == [100, 101, 102, 103, 104])
        // Re-encoded: known fields first (in order), then the unknown records verbatim.
        #expect(m.protobufBytes() == hexBytes("08 07 10 01") + unknown)
    }

    @Test func knownFieldWithWrongWireTypeIsTreatedAsUnknown() throws {
        // field 1 (int32) sent length-delimited: the official runtimes keep it as unknown.
        let m = try AllKinds(protobufBytes: hexBytes("0a 01 41 08 05"))
        #expect(m.int32 == 5)
        #expect(m.unknownFields.fieldNumbers == [1])
    }

    @Test func nestedGroupsAreSkipped() throws {
        // group 100 { group 101 { varint 1 } } then field 1.
        let m = try AllKinds(protobufBytes: hexBytes("a3 06 ab 06 08 01 ac 06 a4 06 08 03"))
        #expect(m.int32 == 3)
        #expect(m.unknownFields.fieldNumbers == [100])
    }

    // MARK: - Malformed input

    @Test(arguments: [
        ("0f", ProtoDecodingError.Code.invalidWireType),           // wire type 7
        ("0e", .invalidWireType),                                   // wire type 6
        ("00", .invalidFieldNumber),                                // field 0
        ("f8 ff ff ff 7f 00", .invalidFieldNumber),                 // field 2^31 - 1 > 2^29 - 1
        ("0c", .unmatchedGroup),                                    // end group without start
        ("a3 06 08 01", .truncated),                                // group never closed
        ("a3 06 ac 06", .unmatchedGroup),                           // closed by another field
        ("5a 05 61 62", .truncated),                                // string longer than input
        ("5a ff ff ff ff 0f", .fieldTooLarge),                      // length 4 GiB > maxFieldBytes
        ("3d 01 02", .truncated),                                   // fixed32 cut
        ("41 01", .truncated),                                      // fixed64 cut
        ("08", .truncated),                                         // varint value missing
        ("08 80", .truncated),                                      // varint cut
    ])
    func malformedInputIsRejected(bytes: String, code: ProtoDecodingError.Code) {
        do {
            _ = try AllKinds(protobufBytes: hexBytes(bytes))
            Issue.record("\(bytes) decoded")
        } catch let error as ProtoDecodingError {
            #expect(error.code == code, "\(bytes): \(error)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func limitsAreEnforced() {
        let big = AllKinds.with { $0.bytes = Array(repeating: 7, count: 100) }.protobufBytes()
        #expect(throws: ProtoDecodingError(.fieldTooLarge, offset: 1)) {
            try AllKinds(protobufBytes: big, limits: ProtoLimits(maxFieldBytes: 99))
        }
        #expect(throws: ProtoDecodingError(.messageTooLarge, offset: 0)) {
            try AllKinds(protobufBytes: big, limits: ProtoLimits(maxMessageBytes: 50))
        }
        #expect(throws: Never.self) { try AllKinds(protobufBytes: big, limits: ProtoLimits(maxFieldBytes: 100)) }
    }

    @Test func depthIsLimited() throws {
        var child = AllKinds.Child()
        for _ in 0..<10 { child = .with { $0.grandchild = [child] } }
        let bytes = AllKinds.with { $0.child = child }.protobufBytes()
        #expect(throws: Never.self) { try AllKinds(protobufBytes: bytes, limits: ProtoLimits(maxDepth: 12)) }
        do {
            _ = try AllKinds(protobufBytes: bytes, limits: ProtoLimits(maxDepth: 5))
            Issue.record("decoded past the depth limit")
        } catch let error as ProtoDecodingError {
            #expect(error.code == .depthExceeded)
        }
        // Deeply nested unknown groups are bounded too.
        let groups = Array(repeating: hexBytes("a3 06"), count: 200).flatMap { $0 }
        #expect(throws: ProtoDecodingError.self) { try AllKinds(protobufBytes: groups) }
    }

    @Test func invalidUTF8IsRepairedNotFatal() throws {
        let m = try AllKinds(protobufBytes: hexBytes("5a 03 61 ff 62"))
        #expect(m.string == "a\u{FFFD}b")
    }

    @Test func errorsDescribeThemselvesWithoutPayload() {
        let e = ProtoDecodingError(.truncated, offset: 12)
        #expect(e.description.contains("truncated at byte 12"))
    }
}

// Binary protobuf encoding (https://protobuf.dev/programming-guides/encoding/).
//
// Fields arrive from `traverse` in field-number order and already filtered by proto3
// presence, so the output matches the official runtimes' serialization byte for byte
// (maps are written in ascending key order, as their deterministic mode does).

/// Appends protobuf records to a growing byte array.
public struct ProtoWriter: ProtoVisitor, Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: - Primitives

    public mutating func writeVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    public mutating func writeTag(_ number: Int, _ wireType: ProtoWireType) {
        writeVarint(UInt64(number) << 3 | UInt64(wireType.rawValue))
    }

    public mutating func writeFixed32(_ value: UInt32) {
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }

    public mutating func writeFixed64(_ value: UInt64) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    public mutating func writeLengthDelimited<C: Collection<UInt8>>(_ payload: C) {
        writeVarint(UInt64(payload.count))
        bytes.append(contentsOf: payload)
    }

    /// The varint of a size in bytes (for callers that prefix frames themselves).
    public static func varintSize(_ value: UInt64) -> Int {
        var n = 1
        var v = value >> 7
        while v != 0 { n += 1; v >>= 7 }
        return n
    }

    // MARK: - ProtoVisitor

    public mutating func visitSigned(_ value: Int64, number: Int, name: StaticString) {
        writeTag(number, .varint)
        writeVarint(UInt64(bitPattern: value))
    }

    public mutating func visitUnsigned(_ value: UInt64, number: Int, name: StaticString) {
        writeTag(number, .varint)
        writeVarint(value)
    }

    public mutating func visitZigZag(_ value: Int64, number: Int, name: StaticString) {
        writeTag(number, .varint)
        writeVarint(ZigZag.encode(value))
    }

    public mutating func visitBool(_ value: Bool, number: Int, name: StaticString) {
        writeTag(number, .varint)
        writeVarint(value ? 1 : 0)
    }

    public mutating func visitEnum(_ value: Int32, number: Int, name: StaticString) {
        writeTag(number, .varint)
        writeVarint(UInt64(bitPattern: Int64(value)))
    }

    public mutating func visitFixed32(_ value: UInt32, number: Int, name: StaticString) {
        writeTag(number, .fixed32)
        writeFixed32(value)
    }

    public mutating func visitFixed64(_ value: UInt64, number: Int, name: StaticString) {
        writeTag(number, .fixed64)
        writeFixed64(value)
    }

    public mutating func visitFloat(_ value: Float, number: Int, name: StaticString) {
        writeTag(number, .fixed32)
        writeFixed32(value.bitPattern)
    }

    public mutating func visitDouble(_ value: Double, number: Int, name: StaticString) {
        writeTag(number, .fixed64)
        writeFixed64(value.bitPattern)
    }

    public mutating func visitString(_ value: String, number: Int, name: StaticString) {
        writeTag(number, .lengthDelimited)
        writeLengthDelimited(value.utf8)
    }

    public mutating func visitBytes(_ value: [UInt8], number: Int, name: StaticString) {
        writeTag(number, .lengthDelimited)
        writeLengthDelimited(value)
    }

    public mutating func visitMessage<M: ProtoMessage>(_ value: M, number: Int, name: StaticString) {
        var child = ProtoWriter()
        value.traverse(&child)
        writeTag(number, .lengthDelimited)
        writeLengthDelimited(child.bytes)
    }

    public mutating func visitRepeatedString(_ values: [String], number: Int, name: StaticString) {
        for v in values { visitString(v, number: number, name: name) }
    }

    public mutating func visitRepeatedBytes(_ values: [[UInt8]], number: Int, name: StaticString) {
        for v in values { visitBytes(v, number: number, name: name) }
    }

    public mutating func visitRepeatedMessage<M: ProtoMessage>(_ values: [M], number: Int, name: StaticString) {
        for v in values { visitMessage(v, number: number, name: name) }
    }

    public mutating func visitPackedVarint<T: FixedWidthInteger>(_ values: [T], number: Int, name: StaticString) {
        var run = ProtoWriter(capacity: values.count * 2)
        for v in values {
            run.writeVarint(T.isSigned ? UInt64(bitPattern: Int64(truncatingIfNeeded: v)) : UInt64(truncatingIfNeeded: v))
        }
        writeTag(number, .lengthDelimited)
        writeLengthDelimited(run.bytes)
    }

    public mutating func visitPackedEnum(_ values: [Int32], number: Int, name: StaticString) {
        visitPackedVarint(values, number: number, name: name)
    }

    public mutating func visitPackedFloat(_ values: [Float], number: Int, name: StaticString) {
        writeTag(number, .lengthDelimited)
        writeVarint(UInt64(values.count * 4))
        for v in values { writeFixed32(v.bitPattern) }
    }

    public mutating func visitStringMap(_ values: [String: String], number: Int, name: StaticString) {
        // Byte order of the UTF-8 keys, like the official deterministic serializers.
        for key in values.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let value = values[key] ?? ""
            // Entries always carry both key and value, even when empty, as the
            // official runtimes write them.
            var entry = ProtoWriter()
            entry.visitString(key, number: 1, name: "key")
            entry.visitString(value, number: 2, name: "value")
            writeTag(number, .lengthDelimited)
            writeLengthDelimited(entry.bytes)
        }
    }

    public mutating func visitUnknownFields(_ fields: ProtoUnknownFields) {
        bytes.append(contentsOf: fields.bytes)
    }
}

// Field traversal: one walk over a message's set fields serves every consumer
// (binary writer, structural mirror). Messages call the `field(...)` helpers below in
// field-number order; the helpers apply proto3 presence rules, the visitor only sees
// fields that are on the wire.
//
// Presence rules (proto3):
//   plain scalar / string / bytes / enum   omitted when zero / empty
//   `optional` scalar (Swift Optional)     written when non-nil, even if zero
//   oneof member                           written when selected, even if zero (pass it as Optional)
//   sub-message (Swift Optional)           written when non-nil, even if empty
//   repeated / map                         omitted when empty; scalars and enums packed

/// Receives a message's fields in order. Every method is called only for fields that
/// are present; `number` is the field number, `name` the .proto field name.
public protocol ProtoVisitor {
    /// int32 and int64 (an int32 is sign-extended: negative values take 10 bytes).
    mutating func visitSigned(_ value: Int64, number: Int, name: StaticString)
    /// uint32 and uint64.
    mutating func visitUnsigned(_ value: UInt64, number: Int, name: StaticString)
    /// sint32 and sint64 (ZigZag).
    mutating func visitZigZag(_ value: Int64, number: Int, name: StaticString)
    mutating func visitBool(_ value: Bool, number: Int, name: StaticString)
    mutating func visitEnum(_ value: Int32, number: Int, name: StaticString)
    /// fixed32 and sfixed32 (bit pattern).
    mutating func visitFixed32(_ value: UInt32, number: Int, name: StaticString)
    /// fixed64 and sfixed64 (bit pattern).
    mutating func visitFixed64(_ value: UInt64, number: Int, name: StaticString)
    mutating func visitFloat(_ value: Float, number: Int, name: StaticString)
    mutating func visitDouble(_ value: Double, number: Int, name: StaticString)
    mutating func visitString(_ value: String, number: Int, name: StaticString)
    mutating func visitBytes(_ value: [UInt8], number: Int, name: StaticString)
    mutating func visitMessage<M: ProtoMessage>(_ value: M, number: Int, name: StaticString)
    mutating func visitRepeatedString(_ values: [String], number: Int, name: StaticString)
    mutating func visitRepeatedBytes(_ values: [[UInt8]], number: Int, name: StaticString)
    mutating func visitRepeatedMessage<M: ProtoMessage>(_ values: [M], number: Int, name: StaticString)
    /// Packed int32/int64/uint32/uint64 (signedness from `T`).
    mutating func visitPackedVarint<T: FixedWidthInteger>(_ values: [T], number: Int, name: StaticString)
    mutating func visitPackedEnum(_ values: [Int32], number: Int, name: StaticString)
    mutating func visitPackedFloat(_ values: [Float], number: Int, name: StaticString)
    /// `map<string, string>`; entries in ascending key order.
    mutating func visitStringMap(_ values: [String: String], number: Int, name: StaticString)
    mutating func visitUnknownFields(_ fields: ProtoUnknownFields)
}

// MARK: - Helpers messages use in `traverse`

extension ProtoVisitor {
    // Strings and bytes

    public mutating func field(_ number: Int, _ name: StaticString, _ value: String) {
        if !value.isEmpty { visitString(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: String?) {
        if let value { visitString(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ values: [String]) {
        if !values.isEmpty { visitRepeatedString(values, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: [UInt8]) {
        if !value.isEmpty { visitBytes(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: [UInt8]?) {
        if let value { visitBytes(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ values: [[UInt8]]) {
        if !values.isEmpty { visitRepeatedBytes(values, number: number, name: name) }
    }

    // Varint scalars

    public mutating func field(_ number: Int, _ name: StaticString, _ value: Bool) {
        if value { visitBool(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: Bool?) {
        if let value { visitBool(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: Int32) {
        if value != 0 { visitSigned(Int64(value), number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: Int32?) {
        if let value { visitSigned(Int64(value), number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: Int64) {
        if value != 0 { visitSigned(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: Int64?) {
        if let value { visitSigned(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: UInt32) {
        if value != 0 { visitUnsigned(UInt64(value), number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: UInt32?) {
        if let value { visitUnsigned(UInt64(value), number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: UInt64) {
        if value != 0 { visitUnsigned(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: UInt64?) {
        if let value { visitUnsigned(value, number: number, name: name) }
    }

    public mutating func field<T: FixedWidthInteger>(_ number: Int, _ name: StaticString, _ values: [T]) {
        if !values.isEmpty { visitPackedVarint(values, number: number, name: name) }
    }

    /// sint32 / sint64.
    public mutating func zigZagField(_ number: Int, _ name: StaticString, _ value: Int64) {
        if value != 0 { visitZigZag(value, number: number, name: name) }
    }

    // Fixed-width scalars

    public mutating func field(_ number: Int, _ name: StaticString, _ value: Float) {
        // Compare bits, not values: -0.0 is not the default and must be written.
        if value.bitPattern != 0 { visitFloat(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ value: Double) {
        if value.bitPattern != 0 { visitDouble(value, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ values: [Float]) {
        if !values.isEmpty { visitPackedFloat(values, number: number, name: name) }
    }

    /// fixed32 / sfixed32.
    public mutating func fixedField(_ number: Int, _ name: StaticString, _ value: UInt32) {
        if value != 0 { visitFixed32(value, number: number, name: name) }
    }

    /// fixed64 / sfixed64.
    public mutating func fixedField(_ number: Int, _ name: StaticString, _ value: UInt64) {
        if value != 0 { visitFixed64(value, number: number, name: name) }
    }

    // Enums

    public mutating func field<E: ProtoEnum>(_ number: Int, _ name: StaticString, _ value: E) {
        if value.rawValue != 0 { visitEnum(value.rawValue, number: number, name: name) }
    }

    public mutating func field<E: ProtoEnum>(_ number: Int, _ name: StaticString, _ value: E?) {
        if let value { visitEnum(value.rawValue, number: number, name: name) }
    }

    public mutating func field<E: ProtoEnum>(_ number: Int, _ name: StaticString, _ values: [E]) {
        if !values.isEmpty { visitPackedEnum(values.map(\.rawValue), number: number, name: name) }
    }

    // Messages and maps

    public mutating func field<M: ProtoMessage>(_ number: Int, _ name: StaticString, _ value: M?) {
        if let value { visitMessage(value, number: number, name: name) }
    }

    public mutating func field<M: ProtoMessage>(_ number: Int, _ name: StaticString, _ values: [M]) {
        if !values.isEmpty { visitRepeatedMessage(values, number: number, name: name) }
    }

    public mutating func field(_ number: Int, _ name: StaticString, _ values: [String: String]) {
        if !values.isEmpty { visitStringMap(values, number: number, name: name) }
    }

    public mutating func unknown(_ fields: ProtoUnknownFields) {
        if !fields.isEmpty { visitUnknownFields(fields) }
    }
}

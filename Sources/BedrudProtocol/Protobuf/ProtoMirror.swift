// A structural view of a message: field name → value, for the set fields only.
//
// The conformance tests compare it with what the official `livekit-protocol` package
// sees in the same bytes (scripts/livekit_fixtures.py writes that view as JSON), so a
// field decoded into the wrong Swift property, or with the wrong type, shows up as a
// named mismatch. It is also a readable `description` for debugging.

/// The value of one field as the mirror sees it.
public indirect enum ProtoMirror: Sendable, Equatable, CustomStringConvertible {
    /// int32, int64, sint32, sint64, sfixed, enum numbers.
    case int(Int64)
    /// uint32, uint64, fixed32, fixed64.
    case uint(UInt64)
    case bool(Bool)
    /// float (widened exactly) and double.
    case double(Double)
    case string(String)
    case bytes([UInt8])
    /// A repeated field.
    case list([ProtoMirror])
    /// A message (field name → value) or a map (key → value).
    case message([String: ProtoMirror])

    /// The named field of a `.message`, if set.
    public subscript(_ name: String) -> ProtoMirror? {
        if case .message(let fields) = self { return fields[name] }
        return nil
    }

    public var description: String {
        switch self {
        case .int(let v): return String(v)
        case .uint(let v): return String(v)
        case .bool(let v): return String(v)
        case .double(let v): return String(v)
        case .string(let v): return "\"\(v)\""
        case .bytes(let v): return "0x" + v.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        case .list(let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .message(let fields):
            return "{" + fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// Builds a ``ProtoMirror`` from a traversal.
public struct ProtoMirrorBuilder: ProtoVisitor {
    private var fields: [String: ProtoMirror] = [:]

    public init() {}

    public var result: ProtoMirror { .message(fields) }

    private mutating func set(_ name: StaticString, _ value: ProtoMirror) {
        fields[name.description] = value
    }

    public mutating func visitSigned(_ value: Int64, number: Int, name: StaticString) { set(name, .int(value)) }
    public mutating func visitUnsigned(_ value: UInt64, number: Int, name: StaticString) { set(name, .uint(value)) }
    public mutating func visitZigZag(_ value: Int64, number: Int, name: StaticString) { set(name, .int(value)) }
    public mutating func visitBool(_ value: Bool, number: Int, name: StaticString) { set(name, .bool(value)) }
    public mutating func visitEnum(_ value: Int32, number: Int, name: StaticString) { set(name, .int(Int64(value))) }
    public mutating func visitFixed32(_ value: UInt32, number: Int, name: StaticString) { set(name, .uint(UInt64(value))) }
    public mutating func visitFixed64(_ value: UInt64, number: Int, name: StaticString) { set(name, .uint(value)) }
    public mutating func visitFloat(_ value: Float, number: Int, name: StaticString) { set(name, .double(Double(value))) }
    public mutating func visitDouble(_ value: Double, number: Int, name: StaticString) { set(name, .double(value)) }
    public mutating func visitString(_ value: String, number: Int, name: StaticString) { set(name, .string(value)) }
    public mutating func visitBytes(_ value: [UInt8], number: Int, name: StaticString) { set(name, .bytes(value)) }

    public mutating func visitMessage<M: ProtoMessage>(_ value: M, number: Int, name: StaticString) {
        set(name, value.protoMirror)
    }

    public mutating func visitRepeatedString(_ values: [String], number: Int, name: StaticString) {
        set(name, .list(values.map { .string($0) }))
    }

    public mutating func visitRepeatedBytes(_ values: [[UInt8]], number: Int, name: StaticString) {
        set(name, .list(values.map { .bytes($0) }))
    }

    public mutating func visitRepeatedMessage<M: ProtoMessage>(_ values: [M], number: Int, name: StaticString) {
        set(name, .list(values.map(\.protoMirror)))
    }

    public mutating func visitPackedVarint<T: FixedWidthInteger>(_ values: [T], number: Int, name: StaticString) {
        set(name, .list(values.map { T.isSigned ? .int(Int64(truncatingIfNeeded: $0)) : .uint(UInt64(truncatingIfNeeded: $0)) }))
    }

    public mutating func visitPackedEnum(_ values: [Int32], number: Int, name: StaticString) {
        set(name, .list(values.map { .int(Int64($0)) }))
    }

    public mutating func visitPackedFloat(_ values: [Float], number: Int, name: StaticString) {
        set(name, .list(values.map { .double(Double($0)) }))
    }

    public mutating func visitStringMap(_ values: [String: String], number: Int, name: StaticString) {
        set(name, .message(values.mapValues { .string($0) }))
    }

    /// Unknown fields appear as `"__unknown__"`: their field numbers, ascending.
    public mutating func visitUnknownFields(_ unknown: ProtoUnknownFields) {
        fields["__unknown__"] = .list(unknown.fieldNumbers.sorted().map { .int(Int64($0)) })
    }
}

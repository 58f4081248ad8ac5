// The contract every hand-written protobuf message follows.
//
// Decoding: `decodeField` is called once per field record; it consumes the payload
// and returns true, or returns false without consuming anything when the field is
// unknown (or its wire type is not the one the schema declares). Unknown records are
// then skipped and kept verbatim in `unknownFields`, out of the way of typed fields,
// and written back after the known fields when the message is encoded again (what the
// official runtimes do).
//
// Encoding: `traverse` visits the fields in field-number order. The same traversal
// drives the binary writer (`ProtoWriter`) and the structural mirror (`ProtoMirror`)
// the conformance tests compare with the official package's view of a message.

/// A protobuf message with a hand-written schema.
public protocol ProtoMessage: Sendable, Equatable {
    /// The message with every field at its default (the empty message).
    init()
    /// Fields this schema does not know, verbatim, in arrival order.
    var unknownFields: ProtoUnknownFields { get set }
    /// Decodes one field; false = unknown here (nothing consumed).
    mutating func decodeField(_ tag: ProtoTag, from reader: inout ProtoReader) throws -> Bool
    /// Visits the set fields in field-number order, then `unknownFields`.
    func traverse<V: ProtoVisitor>(_ visitor: inout V)
}

extension ProtoMessage {
    /// Decodes a whole message. Throws ``ProtoDecodingError`` on malformed input; never traps.
    public init(protobufBytes bytes: [UInt8], limits: ProtoLimits = .default) throws {
        guard bytes.count <= limits.maxMessageBytes else {
            throw ProtoDecodingError(.messageTooLarge, offset: 0)
        }
        var reader = ProtoReader(bytes, limits: limits)
        self.init()
        try merge(from: &reader)
    }

    /// Decodes a whole message from any byte collection (copied once).
    public init<C: Collection<UInt8>>(protobufBytes bytes: C, limits: ProtoLimits = .default) throws {
        try self.init(protobufBytes: Array(bytes), limits: limits)
    }

    /// Reads fields until the reader's end, merging into `self` (protobuf merge
    /// semantics: scalars overwrite, repeated fields append, sub-messages merge).
    public mutating func merge(from reader: inout ProtoReader) throws {
        while let tag = try reader.nextTag() {
            let start = reader.tagStart
            if try !decodeField(tag, from: &reader) {
                try reader.skipField(tag)
                unknownFields.append(reader.bytes(from: start))
            }
        }
    }

    /// The message's wire bytes: known fields in field-number order with proto3 zero
    /// values omitted, then unknown fields.
    public func protobufBytes() -> [UInt8] {
        var writer = ProtoWriter()
        traverse(&writer)
        return writer.bytes
    }

    /// A structural view of the set fields, keyed by field name.
    public var protoMirror: ProtoMirror {
        var mirror = ProtoMirrorBuilder()
        traverse(&mirror)
        return mirror.result
    }
}

/// Fields a message's schema does not know, kept as raw records.
public struct ProtoUnknownFields: Sendable, Equatable {
    /// Concatenated records (tag + payload), exactly as received.
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public var isEmpty: Bool { bytes.isEmpty }

    public mutating func append(_ record: ArraySlice<UInt8>) {
        bytes.append(contentsOf: record)
    }

    // MARK: Oneof members the schema does not model
    //
    // A oneof member a schema knows by number but does not model (e.g. DataPacket's
    // `metrics`) is kept here as one raw record, and the message's oneof value says
    // `.unknown(number)`. The protobuf rule for oneofs still holds for it: the member
    // last on the wire wins and only it is kept, and a repeated occurrence of a message
    // member merges into the earlier one. Keeping the record after a later member
    // replaced it would bring the replaced member back when the message is encoded
    // (unknown fields are written last) and decoded again (issue 15).

    /// Stores the payload of an unmodelled oneof member `number` (a message, so always
    /// length-delimited). A record already kept for it gets the new payload appended,
    /// which is how protobuf merges two occurrences of a message field.
    public mutating func keepUnmodelledMember(_ number: Int, payload: ArraySlice<UInt8>) {
        let earlier = removeRecords(number, .lengthDelimited)
        var writer = ProtoWriter(capacity: earlier.count + payload.count + 8)
        writer.writeTag(number, .lengthDelimited)
        writer.writeLengthDelimited(earlier + payload)
        bytes.append(contentsOf: writer.bytes)
    }

    /// Drops the record of unmodelled oneof member `number`: a later member replaced it.
    public mutating func dropUnmodelledMember(_ number: Int) {
        _ = removeRecords(number, .lengthDelimited)
    }

    /// Removes every record with this field number and wire type; returns their
    /// length-delimited payloads, concatenated in order.
    private mutating func removeRecords(_ number: Int, _ wireType: ProtoWireType) -> [UInt8] {
        var reader = ProtoReader(bytes)
        var kept: [UInt8] = []
        var removed: [UInt8] = []
        var changed = false
        // The records were validated when they were kept; a failure here keeps the rest.
        while let tag = try? reader.nextTag() {
            let start = reader.tagStart
            if tag.fieldNumber == number, tag.wireType == wireType, wireType == .lengthDelimited {
                guard let payload = try? reader.readLengthDelimitedRange() else { return [] }
                removed.append(contentsOf: bytes[payload])
                changed = true
            } else {
                guard (try? reader.skipField(tag)) != nil else { return [] }
                kept.append(contentsOf: reader.bytes(from: start))
            }
        }
        if changed { bytes = kept }
        return removed
    }

    /// The field numbers of the kept records, in order (for diagnostics and tests).
    public var fieldNumbers: [Int] {
        var reader = ProtoReader(bytes)
        var numbers: [Int] = []
        while let tag = try? reader.nextTag() {
            numbers.append(tag.fieldNumber)
            guard (try? reader.skipField(tag)) != nil else { break }
        }
        return numbers
    }
}

/// A protobuf enum as a Swift value that tolerates numbers the schema does not know
/// (they round-trip unchanged), because the LiveKit schema grows every few weeks.
public protocol ProtoEnum: RawRepresentable, Sendable, Hashable where RawValue == Int32 {
    /// Never fails: unknown numbers become the type's `unrecognized` value.
    init(rawValue: Int32)
}

extension ProtoEnum {
    /// The proto3 default: the enum's value 0.
    public init() { self.init(rawValue: 0) }
}

// MARK: - Field decoding helpers
//
// One overload per Swift type a schema uses. Each checks the wire type first and
// returns false (consuming nothing) on a mismatch, which the caller then treats as an
// unknown field. Repeated scalars accept both packed and unpacked encodings, as the
// protobuf specification requires of parsers.

extension ProtoReader {
    // Strings and bytes

    public mutating func decode(_ tag: ProtoTag, into value: inout String) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        value = try readString()
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout String?) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        value = try readString()
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout [String]) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        value.append(try readString())
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout [UInt8]) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        value = try readBytes()
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout [UInt8]?) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        value = try readBytes()
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout [[UInt8]]) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        value.append(try readBytes())
        return true
    }

    // Varint scalars (int32 / int64 / uint32 / uint64 / bool; int32 truncates like the
    // official runtimes)

    public mutating func decode(_ tag: ProtoTag, into value: inout Bool) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = try readVarint() != 0
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout Bool?) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = try readVarint() != 0
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout Int32) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = Int32(truncatingIfNeeded: try readVarint())
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout Int32?) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = Int32(truncatingIfNeeded: try readVarint())
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout UInt32) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = UInt32(truncatingIfNeeded: try readVarint())
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout UInt32?) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = UInt32(truncatingIfNeeded: try readVarint())
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout Int64) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = Int64(bitPattern: try readVarint())
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout Int64?) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = Int64(bitPattern: try readVarint())
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout UInt64) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = try readVarint()
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout UInt64?) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = try readVarint()
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout [UInt32]) throws -> Bool {
        switch tag.wireType {
        case .varint: value.append(UInt32(truncatingIfNeeded: try readVarint()))
        case .lengthDelimited: try forEachPackedVarint { value.append(UInt32(truncatingIfNeeded: $0)) }
        default: return false
        }
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout [Int32]) throws -> Bool {
        switch tag.wireType {
        case .varint: value.append(Int32(truncatingIfNeeded: try readVarint()))
        case .lengthDelimited: try forEachPackedVarint { value.append(Int32(truncatingIfNeeded: $0)) }
        default: return false
        }
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout [UInt64]) throws -> Bool {
        switch tag.wireType {
        case .varint: value.append(try readVarint())
        case .lengthDelimited: try forEachPackedVarint { value.append($0) }
        default: return false
        }
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout [Int64]) throws -> Bool {
        switch tag.wireType {
        case .varint: value.append(Int64(bitPattern: try readVarint()))
        case .lengthDelimited: try forEachPackedVarint { value.append(Int64(bitPattern: $0)) }
        default: return false
        }
        return true
    }

    /// sint32 / sint64 (ZigZag).
    public mutating func decodeZigZag(_ tag: ProtoTag, into value: inout Int64) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = ZigZag.decode(try readVarint())
        return true
    }

    /// sint32 (ZigZag), truncated to 32 bits like the official runtimes.
    public mutating func decodeZigZag(_ tag: ProtoTag, into value: inout Int32) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = Int32(truncatingIfNeeded: ZigZag.decode(try readVarint()))
        return true
    }

    // Fixed-width scalars

    public mutating func decode(_ tag: ProtoTag, into value: inout Float) throws -> Bool {
        guard tag.wireType == .fixed32 else { return false }
        value = Float(bitPattern: try readFixed32())
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout Double) throws -> Bool {
        guard tag.wireType == .fixed64 else { return false }
        value = Double(bitPattern: try readFixed64())
        return true
    }

    public mutating func decode(_ tag: ProtoTag, into value: inout [Float]) throws -> Bool {
        switch tag.wireType {
        case .fixed32: value.append(Float(bitPattern: try readFixed32()))
        case .lengthDelimited: try forEachPackedFixed32 { value.append(Float(bitPattern: $0)) }
        default: return false
        }
        return true
    }

    /// fixed32 / sfixed32 as raw bits.
    public mutating func decodeFixed(_ tag: ProtoTag, into value: inout UInt32) throws -> Bool {
        guard tag.wireType == .fixed32 else { return false }
        value = try readFixed32()
        return true
    }

    /// fixed64 / sfixed64 as raw bits.
    public mutating func decodeFixed(_ tag: ProtoTag, into value: inout UInt64) throws -> Bool {
        guard tag.wireType == .fixed64 else { return false }
        value = try readFixed64()
        return true
    }

    // Enums

    public mutating func decode<E: ProtoEnum>(_ tag: ProtoTag, into value: inout E) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = E(rawValue: Int32(truncatingIfNeeded: try readVarint()))
        return true
    }

    public mutating func decode<E: ProtoEnum>(_ tag: ProtoTag, into value: inout E?) throws -> Bool {
        guard tag.wireType == .varint else { return false }
        value = E(rawValue: Int32(truncatingIfNeeded: try readVarint()))
        return true
    }

    public mutating func decode<E: ProtoEnum>(_ tag: ProtoTag, into value: inout [E]) throws -> Bool {
        switch tag.wireType {
        case .varint: value.append(E(rawValue: Int32(truncatingIfNeeded: try readVarint())))
        case .lengthDelimited: try forEachPackedVarint { value.append(E(rawValue: Int32(truncatingIfNeeded: $0))) }
        default: return false
        }
        return true
    }

    // Messages

    /// A singular sub-message; a repeated occurrence merges into the earlier one.
    public mutating func decode<M: ProtoMessage>(_ tag: ProtoTag, into value: inout M) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        var sub = try subReader()
        try value.merge(from: &sub)
        return true
    }

    public mutating func decode<M: ProtoMessage>(_ tag: ProtoTag, into value: inout M?) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        var sub = try subReader()
        var message = value ?? M()
        try message.merge(from: &sub)
        value = message
        return true
    }

    public mutating func decode<M: ProtoMessage>(_ tag: ProtoTag, into value: inout [M]) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        var sub = try subReader()
        var message = M()
        try message.merge(from: &sub)
        value.append(message)
        return true
    }

    /// A oneof member holding a message: decodes into `current` if the oneof already
    /// holds this member (merge), else into a fresh message, and returns it.
    public mutating func decodeMessage<M: ProtoMessage>(_ tag: ProtoTag, merging current: M?) throws -> M? {
        guard tag.wireType == .lengthDelimited else { return nil }
        var sub = try subReader()
        var message = current ?? M()
        try message.merge(from: &sub)
        return message
    }

    // Maps

    /// `map<string, string>`: each entry is a sub-message {1: key, 2: value}; missing
    /// parts default to "", a repeated key keeps the last value.
    public mutating func decode(_ tag: ProtoTag, into value: inout [String: String]) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        var entry = try subReader()
        var key = "", item = ""
        while let t = try entry.nextTag() {
            let consumed: Bool
            switch t.fieldNumber {
            case 1: consumed = try entry.decode(t, into: &key)
            case 2: consumed = try entry.decode(t, into: &item)
            default: consumed = false
            }
            if !consumed { try entry.skipField(t) }
        }
        value[key] = item
        return true
    }
}

extension ProtoMessage {
    /// Builds a message by setting fields on an empty one:
    /// `LiveKit.Ping.with { $0.timestamp = now }`.
    public static func with(_ populate: (inout Self) throws -> Void) rethrows -> Self {
        var message = Self()
        try populate(&message)
        return message
    }
}

extension ProtoReader {
    /// A oneof member this schema knows by number but does not model: when it is
    /// length-delimited (every such member is a message), its payload is kept in
    /// `unknown` (see ``ProtoUnknownFields/keepUnmodelledMember(_:payload:)``) and true is
    /// returned; the caller then sets its oneof to `.unknown(number)`. Any other wire
    /// type is not this member at all: false, nothing consumed, an ordinary unknown field.
    public mutating func decodeUnmodelledMember(_ tag: ProtoTag, into unknown: inout ProtoUnknownFields) throws -> Bool {
        guard tag.wireType == .lengthDelimited else { return false }
        let range = try readLengthDelimitedRange()
        unknown.keepUnmodelledMember(tag.fieldNumber, payload: storage[range])
        return true
    }

    /// Decodes a oneof member that is a message and stores `wrap(message)` in `slot`.
    /// The oneof's previous value is replaced (a repeated occurrence of the same member
    /// is not merged; no LiveKit peer sends one).
    public mutating func decodeOneof<M: ProtoMessage, Oneof>(
        _ tag: ProtoTag, into slot: inout Oneof?, _ wrap: (M) -> Oneof
    ) throws -> Bool {
        guard let message: M = try decodeMessage(tag, merging: nil) else { return false }
        slot = wrap(message)
        return true
    }
}

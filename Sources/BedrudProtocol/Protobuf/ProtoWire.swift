// Protocol Buffers wire format: the vocabulary shared by the reader and the writer.
// Reference: https://protobuf.dev/programming-guides/encoding/ (wire types, tags,
// varints, ZigZag, length-delimited records, packed repeated fields).
//
//   tag     = varint( field_number << 3 | wire_type )
//   record  = tag payload
//   payload = varint | 8 bytes LE | varint(length) bytes | 4 bytes LE | (group, legacy)

/// How a field's payload is laid out on the wire (the low three bits of a tag).
public enum ProtoWireType: UInt8, Sendable, CaseIterable {
    /// int32, int64, uint32, uint64, sint32, sint64, bool, enum.
    case varint = 0
    /// fixed64, sfixed64, double: 8 bytes little-endian.
    case fixed64 = 1
    /// string, bytes, embedded messages, packed repeated fields: varint length + bytes.
    case lengthDelimited = 2
    /// proto2 groups (deprecated); skipped as a unit, never produced.
    case startGroup = 3
    /// Ends a group started with the same field number.
    case endGroup = 4
    /// fixed32, sfixed32, float: 4 bytes little-endian.
    case fixed32 = 5
}

/// A decoded field key: which field, and how its payload is laid out.
public struct ProtoTag: Sendable, Hashable, CustomStringConvertible {
    /// 1 ... 2^29 - 1.
    public let fieldNumber: Int
    public let wireType: ProtoWireType

    public init(fieldNumber: Int, wireType: ProtoWireType) {
        self.fieldNumber = fieldNumber
        self.wireType = wireType
    }

    /// The tag as it appears on the wire, before varint encoding.
    public var rawValue: UInt64 { UInt64(fieldNumber) << 3 | UInt64(wireType.rawValue) }

    /// The largest field number the format allows.
    public static let maxFieldNumber = (1 << 29) - 1

    public var description: String { "#\(fieldNumber)/\(wireType)" }
}

/// Bounds applied while decoding untrusted bytes. Every length read from the input is
/// checked against the bytes that remain *and* against these limits, so no allocation
/// is ever sized by an attacker-controlled number.
public struct ProtoLimits: Sendable, Equatable {
    /// Largest whole message accepted by `init(protobufBytes:)`.
    public let maxMessageBytes: Int
    /// Largest single length-delimited field (string, bytes, sub-message, packed run).
    public let maxFieldBytes: Int
    /// Deepest nesting of sub-messages and groups (1 … 256: decoding recurses once per
    /// level, and must fit in a small thread stack).
    public let maxDepth: Int

    public init(maxMessageBytes: Int = 16 << 20, maxFieldBytes: Int = 16 << 20, maxDepth: Int = 64) {
        self.maxMessageBytes = max(0, maxMessageBytes)
        self.maxFieldBytes = max(0, maxFieldBytes)
        self.maxDepth = min(max(1, maxDepth), 256)
    }

    /// 16 MiB messages and fields, 64 levels: generous for LiveKit signalling (the
    /// server's largest messages are `join`/`update` lists of a few hundred KiB).
    public static let `default` = ProtoLimits()
}

/// Why a byte string is not a valid protobuf message.
///
/// A struct wrapping a code, so that new codes never break callers; compare `code`
/// with the static members (`error.code == .truncated`).
public struct ProtoDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let raw: UInt8
        private init(_ raw: UInt8) { self.raw = raw }

        /// The input ended inside a tag, varint, fixed-width value or length-delimited field.
        public static let truncated = Code(1)
        /// A varint longer than 10 bytes.
        public static let malformedVarint = Code(2)
        /// Field number 0 or above 2^29 - 1.
        public static let invalidFieldNumber = Code(3)
        /// Wire type 6 or 7.
        public static let invalidWireType = Code(4)
        /// A length-delimited field longer than `ProtoLimits.maxFieldBytes`.
        public static let fieldTooLarge = Code(5)
        /// The whole message is longer than `ProtoLimits.maxMessageBytes`.
        public static let messageTooLarge = Code(6)
        /// Sub-messages or groups nested deeper than `ProtoLimits.maxDepth`.
        public static let depthExceeded = Code(7)
        /// An end-group tag without a matching start, or a group closed by another field.
        public static let unmatchedGroup = Code(8)
        /// A packed run whose last element is cut off.
        public static let malformedPackedField = Code(9)

        public var description: String {
            switch raw {
            case 1: "truncated"
            case 2: "malformed varint"
            case 3: "invalid field number"
            case 4: "invalid wire type"
            case 5: "field too large"
            case 6: "message too large"
            case 7: "nesting too deep"
            case 8: "unmatched group"
            default: "malformed packed field"
            }
        }
    }

    public let code: Code
    /// Byte offset in the outermost input where the problem was found.
    public let offset: Int

    public init(_ code: Code, offset: Int) {
        self.code = code
        self.offset = offset
    }

    public var description: String {
        "protobuf message is invalid (\(code) at byte \(offset)); the peer sent bytes this decoder cannot parse, so the message was dropped"
    }
}

// MARK: - ZigZag (sint32 / sint64)

/// ZigZag maps signed integers to unsigned ones so that small magnitudes stay short:
/// 0 → 0, -1 → 1, 1 → 2, -2 → 3 … A sint32 encodes exactly like the sint64 of the
/// same value, so one pair of functions serves both.
public enum ZigZag {
    @inline(__always)
    public static func encode(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    @inline(__always)
    public static func decode(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }
}

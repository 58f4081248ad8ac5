// A bounds-checked cursor over protobuf bytes.
//
// Every read checks the bytes that remain before touching them; a length prefix is
// checked against the remaining input and `ProtoLimits` before anything is sliced or
// allocated. Nested messages get a child reader over the same storage (no copy) whose
// end is the sub-message's end, one level deeper.

/// Reads one message's fields from untrusted bytes. A value type: copying it forks the
/// cursor. Never traps on any input; every failure is a ``ProtoDecodingError``.
public struct ProtoReader: Sendable {
    @usableFromInline let bytes: [UInt8]
    @usableFromInline var position: Int
    @usableFromInline let end: Int
    /// 0 for the outermost message.
    public let depth: Int
    public let limits: ProtoLimits
    /// Where the tag most recently returned by ``nextTag()`` started.
    public private(set) var tagStart: Int

    /// A reader over all of `bytes`.
    public init(_ bytes: [UInt8], limits: ProtoLimits = .default) {
        self.bytes = bytes
        self.position = 0
        self.end = bytes.count
        self.depth = 0
        self.limits = limits
        self.tagStart = 0
    }

    private init(bytes: [UInt8], range: Range<Int>, depth: Int, limits: ProtoLimits) {
        self.bytes = bytes
        self.position = range.lowerBound
        self.end = range.upperBound
        self.depth = depth
        self.limits = limits
        self.tagStart = range.lowerBound
    }

    /// Offset of the cursor in the outermost input.
    public var offset: Int { position }
    /// True when every byte of this (sub-)message has been consumed.
    public var isAtEnd: Bool { position >= end }
    /// The underlying storage (shared, not copied).
    public var storage: [UInt8] { bytes }

    // MARK: - Primitives

    /// The next field's tag, or nil at the end of this message.
    public mutating func nextTag() throws(ProtoDecodingError) -> ProtoTag? {
        guard position < end else { return nil }
        tagStart = position
        let raw = try readVarint()
        guard let wire = ProtoWireType(rawValue: UInt8(raw & 7)) else {
            throw ProtoDecodingError(.invalidWireType, offset: tagStart)
        }
        let number = raw >> 3
        guard number >= 1, number <= UInt64(ProtoTag.maxFieldNumber) else {
            throw ProtoDecodingError(.invalidFieldNumber, offset: tagStart)
        }
        return ProtoTag(fieldNumber: Int(number), wireType: wire)
    }

    /// A base-128 varint of at most 10 bytes. Bits above 64 in the tenth byte are
    /// dropped, as every mainstream implementation does.
    public mutating func readVarint() throws(ProtoDecodingError) -> UInt64 {
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else { throw ProtoDecodingError(.truncated, offset: start) }
            let byte = bytes[position]
            position += 1
            if shift < 64 { result |= UInt64(byte & 0x7F) << shift }
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift >= 70 { throw ProtoDecodingError(.malformedVarint, offset: start) }
        }
    }

    public mutating func readFixed32() throws(ProtoDecodingError) -> UInt32 {
        guard end - position >= 4 else { throw ProtoDecodingError(.truncated, offset: position) }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[position + i]) << (8 * UInt32(i)) }
        position += 4
        return v
    }

    public mutating func readFixed64() throws(ProtoDecodingError) -> UInt64 {
        guard end - position >= 8 else { throw ProtoDecodingError(.truncated, offset: position) }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
        position += 8
        return v
    }

    /// Reads a length prefix and returns the payload's range, advancing past it. The
    /// length is checked against the remaining bytes and `maxFieldBytes`.
    public mutating func readLengthDelimitedRange() throws(ProtoDecodingError) -> Range<Int> {
        let start = position
        let length = try readVarint()
        guard length <= UInt64(limits.maxFieldBytes) else {
            throw ProtoDecodingError(.fieldTooLarge, offset: start)
        }
        guard length <= UInt64(end - position) else {
            throw ProtoDecodingError(.truncated, offset: start)
        }
        let range = position..<(position + Int(length))
        position = range.upperBound
        return range
    }

    public mutating func readBytes() throws(ProtoDecodingError) -> [UInt8] {
        let range = try readLengthDelimitedRange()
        return Array(bytes[range])
    }

    /// A UTF-8 string. Invalid sequences become U+FFFD rather than failing the whole
    /// message: a recorder would rather keep a participant with a mangled name than
    /// drop the `join` that carries everyone.
    public mutating func readString() throws(ProtoDecodingError) -> String {
        let range = try readLengthDelimitedRange()
        return String(decoding: bytes[range], as: UTF8.self)
    }

    /// A reader for the length-delimited sub-message at the cursor, one level deeper.
    public mutating func subReader() throws(ProtoDecodingError) -> ProtoReader {
        guard depth + 1 <= limits.maxDepth else {
            throw ProtoDecodingError(.depthExceeded, offset: position)
        }
        let range = try readLengthDelimitedRange()
        return ProtoReader(bytes: bytes, range: range, depth: depth + 1, limits: limits)
    }

    /// Skips the payload of a field whose tag was just read, including a whole group.
    public mutating func skipField(_ tag: ProtoTag) throws(ProtoDecodingError) {
        switch tag.wireType {
        case .varint: _ = try readVarint()
        case .fixed64: _ = try readFixed64()
        case .fixed32: _ = try readFixed32()
        case .lengthDelimited: _ = try readLengthDelimitedRange()
        case .startGroup: try skipGroup(fieldNumber: tag.fieldNumber, depth: depth + 1)
        case .endGroup: throw ProtoDecodingError(.unmatchedGroup, offset: tagStart)
        }
    }

    private mutating func skipGroup(fieldNumber: Int, depth groupDepth: Int) throws(ProtoDecodingError) {
        guard groupDepth <= limits.maxDepth else {
            throw ProtoDecodingError(.depthExceeded, offset: position)
        }
        let groupStart = tagStart
        while true {
            guard let tag = try nextTag() else {
                throw ProtoDecodingError(.truncated, offset: groupStart)
            }
            switch tag.wireType {
            case .endGroup:
                guard tag.fieldNumber == fieldNumber else {
                    throw ProtoDecodingError(.unmatchedGroup, offset: tagStart)
                }
                return
            case .startGroup:
                try skipGroup(fieldNumber: tag.fieldNumber, depth: groupDepth + 1)
            default:
                try skipField(tag)
            }
        }
    }

    /// Calls `body` once per element of a packed run of varints (the cursor is at its
    /// length prefix). The run must end exactly on an element boundary.
    public mutating func forEachPackedVarint(_ body: (UInt64) -> Void) throws(ProtoDecodingError) {
        let range = try readLengthDelimitedRange()
        var inner = ProtoReader(bytes: bytes, range: range, depth: depth, limits: limits)
        while !inner.isAtEnd {
            do {
                body(try inner.readVarint())
            } catch {
                throw ProtoDecodingError(.malformedPackedField, offset: error.offset)
            }
        }
    }

    /// Like ``forEachPackedVarint(_:)`` for 4-byte elements (fixed32, sfixed32, float).
    public mutating func forEachPackedFixed32(_ body: (UInt32) -> Void) throws(ProtoDecodingError) {
        let range = try readLengthDelimitedRange()
        guard range.count % 4 == 0 else {
            throw ProtoDecodingError(.malformedPackedField, offset: range.lowerBound)
        }
        var inner = ProtoReader(bytes: bytes, range: range, depth: depth, limits: limits)
        while !inner.isAtEnd { body(try inner.readFixed32()) }
    }

    /// Like ``forEachPackedVarint(_:)`` for 8-byte elements (fixed64, sfixed64, double).
    public mutating func forEachPackedFixed64(_ body: (UInt64) -> Void) throws(ProtoDecodingError) {
        let range = try readLengthDelimitedRange()
        guard range.count % 8 == 0 else {
            throw ProtoDecodingError(.malformedPackedField, offset: range.lowerBound)
        }
        var inner = ProtoReader(bytes: bytes, range: range, depth: depth, limits: limits)
        while !inner.isAtEnd { body(try inner.readFixed64()) }
    }

    /// The raw bytes from `start` (an earlier ``offset``) to the cursor.
    public func bytes(from start: Int) -> ArraySlice<UInt8> {
        bytes[min(max(0, start), position)..<position]
    }
}

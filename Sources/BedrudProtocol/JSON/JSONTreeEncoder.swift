/// Encodes an `Encodable` value into the document ``JSONWriter`` writes (`[String: Any]`,
/// `[Any]`, `String`, `Bool`, the number types as they are, ``JSONNull``), so a Codable
/// value is written with exactly the bytes of the `[String: Any]` it replaces: the same
/// key order (``JSONWriter/KeyOrder``), number text (`4.5`, `1e-07`, whole doubles without
/// `.0`, integers as integers) and escaping. `JSONEncoder` differs in all three, so the
/// event log keeps one writer and this is the only way into it.
public enum JSONTreeEncoder {
    /// The document of `value`: a `[String: Any]` for a struct, an `[Any]` for an array.
    public static func encode<T: Encodable>(_ value: T) throws -> Any {
        let node = Node()
        try node.put(value, codingPath: [])
        return node.document
    }

    /// The JSON text of `value`, as ``JSONWriter/serialize(_:escapingSlashes:)`` writes it.
    public static func string<T: Encodable>(_ value: T, escapingSlashes: Bool = false) throws -> String {
        guard let text = JSONWriter.serialize(try encode(value), escapingSlashes: escapingSlashes) else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "not expressible in JSON (NaN or an infinity)"))
        }
        return text
    }

    /// One value being built: a scalar, an object or an array (containers share it, so a
    /// value may open its keyed container more than once, as `JSONEncoder` allows).
    final class Node {
        var scalar: Any?
        var object: [String: Node]?
        var array: [Node]?

        var document: Any {
            if let object { return object.mapValues(\.document) }
            if let array { return array.map(\.document) }
            return scalar ?? [String: Any]()
        }

        func put<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
            switch value {
            case let v as String: scalar = v
            case let v as Bool: scalar = v
            case let v as Double: scalar = v
            case let v as Float: scalar = v
            case let v as any BinaryInteger: scalar = v
            default: try value.encode(to: Encoder(node: self, codingPath: codingPath))
            }
        }
    }

    struct Encoder: Swift.Encoder {
        let node: Node
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            if node.object == nil { node.object = [:] }
            return KeyedEncodingContainer(Keyed<Key>(node: node, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            if node.array == nil { node.array = [] }
            return Unkeyed(node: node, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: node, codingPath: codingPath) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        var codingPath: [any CodingKey]

        private func child(_ key: Key) -> Node { child(named: key.stringValue) }

        private func child(named name: String) -> Node {
            let n = Node()
            node.object![name] = n
            return n
        }

        mutating func encodeNil(forKey key: Key) throws { child(key).scalar = JSONNull() }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try child(key).put(value, codingPath: codingPath + [key]) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: String, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: Double, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: Float, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: Int, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: Int8, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: Int16, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: Int32, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: Int64, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: UInt, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { child(key).scalar = value }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { child(key).scalar = value }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            Encoder(node: child(key), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Encoder(node: child(key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Swift.Encoder { Encoder(node: child(named: "super"), codingPath: codingPath) }
        mutating func superEncoder(forKey key: Key) -> any Swift.Encoder { Encoder(node: child(key), codingPath: codingPath + [key]) }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey]
        var count: Int { node.array?.count ?? 0 }

        private func next() -> Node {
            let n = Node()
            node.array!.append(n)
            return n
        }

        mutating func encodeNil() throws { next().scalar = JSONNull() }
        mutating func encode<T: Encodable>(_ value: T) throws { try next().put(value, codingPath: codingPath) }
        mutating func encode(_ value: Bool) throws { next().scalar = value }
        mutating func encode(_ value: String) throws { next().scalar = value }
        mutating func encode(_ value: Double) throws { next().scalar = value }
        mutating func encode(_ value: Float) throws { next().scalar = value }
        mutating func encode(_ value: Int) throws { next().scalar = value }
        mutating func encode(_ value: Int8) throws { next().scalar = value }
        mutating func encode(_ value: Int16) throws { next().scalar = value }
        mutating func encode(_ value: Int32) throws { next().scalar = value }
        mutating func encode(_ value: Int64) throws { next().scalar = value }
        mutating func encode(_ value: UInt) throws { next().scalar = value }
        mutating func encode(_ value: UInt8) throws { next().scalar = value }
        mutating func encode(_ value: UInt16) throws { next().scalar = value }
        mutating func encode(_ value: UInt32) throws { next().scalar = value }
        mutating func encode(_ value: UInt64) throws { next().scalar = value }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            Encoder(node: next(), codingPath: codingPath).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Encoder(node: next(), codingPath: codingPath).unkeyedContainer() }
        mutating func superEncoder() -> any Swift.Encoder { Encoder(node: next(), codingPath: codingPath) }
    }

    struct Single: SingleValueEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey]

        mutating func encodeNil() throws { node.scalar = JSONNull() }
        mutating func encode<T: Encodable>(_ value: T) throws { try node.put(value, codingPath: codingPath) }
        mutating func encode(_ value: Bool) throws { node.scalar = value }
        mutating func encode(_ value: String) throws { node.scalar = value }
        mutating func encode(_ value: Double) throws { node.scalar = value }
        mutating func encode(_ value: Float) throws { node.scalar = value }
        mutating func encode(_ value: Int) throws { node.scalar = value }
        mutating func encode(_ value: Int8) throws { node.scalar = value }
        mutating func encode(_ value: Int16) throws { node.scalar = value }
        mutating func encode(_ value: Int32) throws { node.scalar = value }
        mutating func encode(_ value: Int64) throws { node.scalar = value }
        mutating func encode(_ value: UInt) throws { node.scalar = value }
        mutating func encode(_ value: UInt8) throws { node.scalar = value }
        mutating func encode(_ value: UInt16) throws { node.scalar = value }
        mutating func encode(_ value: UInt32) throws { node.scalar = value }
        mutating func encode(_ value: UInt64) throws { node.scalar = value }
    }
}

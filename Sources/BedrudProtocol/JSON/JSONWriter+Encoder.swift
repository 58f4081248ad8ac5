/// ``JSONWriter``'s `Encoder` front end: the containers an `encode(to:)` writes into, each
/// filling a ``JSONWriter/Node``.
extension JSONWriter {
    struct FrontEnd: Encoder {
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

        mutating func encodeNil(forKey key: Key) throws { child(key).scalar = .null }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try child(key).put(value, codingPath: codingPath + [key]) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { child(key).scalar = .bool(value) }
        mutating func encode(_ value: String, forKey key: Key) throws { child(key).scalar = .string(value) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try child(key).set(value, codingPath: codingPath + [key]) }
        mutating func encode(_ value: Float, forKey key: Key) throws { try child(key).set(value, codingPath: codingPath + [key]) }
        mutating func encode(_ value: Int, forKey key: Key) throws { child(key).scalar = .number(String(value)) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { child(key).scalar = .number(String(value)) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { child(key).scalar = .number(String(value)) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { child(key).scalar = .number(String(value)) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { child(key).scalar = .number(String(value)) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { child(key).scalar = .number(String(value)) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { child(key).scalar = .number(String(value)) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { child(key).scalar = .number(String(value)) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { child(key).scalar = .number(String(value)) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { child(key).scalar = .number(String(value)) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            FrontEnd(node: child(key), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            FrontEnd(node: child(key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder { FrontEnd(node: child(named: "super"), codingPath: codingPath) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { FrontEnd(node: child(key), codingPath: codingPath + [key]) }
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

        mutating func encodeNil() throws { next().scalar = .null }
        mutating func encode<T: Encodable>(_ value: T) throws { try next().put(value, codingPath: codingPath) }
        mutating func encode(_ value: Bool) throws { next().scalar = .bool(value) }
        mutating func encode(_ value: String) throws { next().scalar = .string(value) }
        mutating func encode(_ value: Double) throws { try next().set(value, codingPath: codingPath) }
        mutating func encode(_ value: Float) throws { try next().set(value, codingPath: codingPath) }
        mutating func encode(_ value: Int) throws { next().scalar = .number(String(value)) }
        mutating func encode(_ value: Int8) throws { next().scalar = .number(String(value)) }
        mutating func encode(_ value: Int16) throws { next().scalar = .number(String(value)) }
        mutating func encode(_ value: Int32) throws { next().scalar = .number(String(value)) }
        mutating func encode(_ value: Int64) throws { next().scalar = .number(String(value)) }
        mutating func encode(_ value: UInt) throws { next().scalar = .number(String(value)) }
        mutating func encode(_ value: UInt8) throws { next().scalar = .number(String(value)) }
        mutating func encode(_ value: UInt16) throws { next().scalar = .number(String(value)) }
        mutating func encode(_ value: UInt32) throws { next().scalar = .number(String(value)) }
        mutating func encode(_ value: UInt64) throws { next().scalar = .number(String(value)) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            FrontEnd(node: next(), codingPath: codingPath).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { FrontEnd(node: next(), codingPath: codingPath).unkeyedContainer() }
        mutating func superEncoder() -> any Encoder { FrontEnd(node: next(), codingPath: codingPath) }
    }

    struct Single: SingleValueEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey]

        mutating func encodeNil() throws { node.scalar = .null }
        mutating func encode<T: Encodable>(_ value: T) throws { try node.put(value, codingPath: codingPath) }
        mutating func encode(_ value: Bool) throws { node.scalar = .bool(value) }
        mutating func encode(_ value: String) throws { node.scalar = .string(value) }
        mutating func encode(_ value: Double) throws { try node.set(value, codingPath: codingPath) }
        mutating func encode(_ value: Float) throws { try node.set(value, codingPath: codingPath) }
        mutating func encode(_ value: Int) throws { node.scalar = .number(String(value)) }
        mutating func encode(_ value: Int8) throws { node.scalar = .number(String(value)) }
        mutating func encode(_ value: Int16) throws { node.scalar = .number(String(value)) }
        mutating func encode(_ value: Int32) throws { node.scalar = .number(String(value)) }
        mutating func encode(_ value: Int64) throws { node.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt) throws { node.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt8) throws { node.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt16) throws { node.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt32) throws { node.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt64) throws { node.scalar = .number(String(value)) }
    }
}

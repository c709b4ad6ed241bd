/// The three containers of `JSONValueEncoder`. Every primitive goes through `SingleEncoder`.
struct SingleEncoder: SingleValueEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.scalar = .null }
    mutating func encode(_ value: Bool) throws { node.scalar = .bool(value) }
    mutating func encode(_ value: String) throws { node.scalar = .string(value) }
    mutating func encode(_ value: Double) throws { node.scalar = .double(value) }
    mutating func encode(_ value: Float) throws { node.scalar = .double(Double(value)) }
    mutating func encode(_ value: Int) throws { node.scalar = .int(Int64(value)) }
    mutating func encode(_ value: Int8) throws { node.scalar = .int(Int64(value)) }
    mutating func encode(_ value: Int16) throws { node.scalar = .int(Int64(value)) }
    mutating func encode(_ value: Int32) throws { node.scalar = .int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { node.scalar = .int(value) }
    mutating func encode(_ value: UInt) throws { try unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { node.scalar = .int(Int64(value)) }
    mutating func encode(_ value: UInt16) throws { node.scalar = .int(Int64(value)) }
    mutating func encode(_ value: UInt32) throws { node.scalar = .int(Int64(value)) }
    mutating func encode(_ value: UInt64) throws { try unsigned(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: ValueEncoder(node: node, codingPath: codingPath))
    }

    private func unsigned(_ value: UInt64) throws {
        guard let v = Int64(exactly: value) else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: codingPath, debugDescription: "above the largest JSON integer kept"))
        }
        node.scalar = .int(v)
    }
}

struct KeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(key.stringValue).scalar = .null }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encode(Box(value), forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try encode(Box(value), forKey: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try value.encode(to: ValueEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        ValueEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ValueEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        ValueEncoder(node: node.child("super"), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        ValueEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key])
    }
}

struct UnkeyedEncoder: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var count: Int { node.items?.count ?? 0 }

    mutating func encodeNil() throws { node.append().scalar = .null }
    mutating func encode(_ value: Bool) throws { try encode(Box(value)) }
    mutating func encode(_ value: String) throws { try encode(Box(value)) }
    mutating func encode(_ value: Double) throws { try encode(Box(value)) }
    mutating func encode(_ value: Float) throws { try encode(Box(value)) }
    mutating func encode(_ value: Int) throws { try encode(Box(value)) }
    mutating func encode(_ value: Int8) throws { try encode(Box(value)) }
    mutating func encode(_ value: Int16) throws { try encode(Box(value)) }
    mutating func encode(_ value: Int32) throws { try encode(Box(value)) }
    mutating func encode(_ value: Int64) throws { try encode(Box(value)) }
    mutating func encode(_ value: UInt) throws { try encode(Box(value)) }
    mutating func encode(_ value: UInt8) throws { try encode(Box(value)) }
    mutating func encode(_ value: UInt16) throws { try encode(Box(value)) }
    mutating func encode(_ value: UInt32) throws { try encode(Box(value)) }
    mutating func encode(_ value: UInt64) throws { try encode(Box(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: ValueEncoder(node: node.append(), codingPath: codingPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        ValueEncoder(node: node.append(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        ValueEncoder(node: node.append(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { ValueEncoder(node: node.append(), codingPath: codingPath) }
}

/// Routes a primitive given to a keyed or unkeyed container through the generic path, which ends in
/// `SingleEncoder` (the primitives' own `encode(to:)` asks for a single-value container).
struct Box<T: Encodable>: Encodable {
    let value: T
    init(_ value: T) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

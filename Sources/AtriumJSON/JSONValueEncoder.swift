/// Encodes any `Encodable` value to a `JSONValue` (no Foundation): the cluster sends the hub's typed
/// commands and events between nodes this way. Integers become `.int`, floating point `.double`,
/// `nil` `.null`; an unsigned integer above `Int64.max` is an `EncodingError`.
public struct JSONValueEncoder {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let node = EncodingNode()
        try value.encode(to: ValueEncoder(node: node, codingPath: []))
        return node.value
    }
}

/// One value being built: a scalar, an object of child nodes or an array of them.
final class EncodingNode {
    var scalar: JSONValue?
    var pairs: [(String, EncodingNode)]?
    var items: [EncodingNode]?

    var value: JSONValue {
        if let pairs {
            var o = JSONObject()
            for (k, n) in pairs { o[k] = n.value }
            return .object(o)
        }
        if let items { return .array(items.map(\.value)) }
        return scalar ?? .object(JSONObject())
    }

    func child(_ key: String) -> EncodingNode {
        let n = EncodingNode()
        if pairs == nil { pairs = [] }
        pairs?.append((key, n))
        return n
    }

    func append() -> EncodingNode {
        let n = EncodingNode()
        if items == nil { items = [] }
        items?.append(n)
        return n
    }
}

struct ValueEncoder: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.pairs == nil { node.pairs = [] }
        return KeyedEncodingContainer(KeyedEncoder<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.items == nil { node.items = [] }
        return UnkeyedEncoder(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleEncoder(node: node, codingPath: codingPath)
    }
}

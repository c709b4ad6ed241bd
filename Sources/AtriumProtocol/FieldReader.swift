public import AtriumJSON

/// Typed access to a message's fields: a missing or wrong field is `invalid_field` naming it, in the
/// words docs/protocol.md documents.
public struct FieldReader {
    public let object: JSONObject

    public init(object: JSONObject) { self.object = object }

    /// The object `value` must be (`field` names it in the error).
    public init(_ value: JSONValue, _ field: String) throws(ProtocolError) {
        guard let o = value.objectValue else { throw .invalidField(field, "expected an object, got \(value.typeName)") }
        object = o
    }

    public func has(_ key: String) -> Bool { object[key] != nil }

    public func value(_ key: String) throws(ProtocolError) -> JSONValue {
        guard let v = object[key] else { throw .invalidField(key, "is required") }
        return v
    }

    public func string(_ key: String, max: Int = 1024) throws(ProtocolError) -> String {
        let v = try value(key)
        guard let s = v.stringValue else { throw .invalidField(key, "expected a string, got \(v.typeName)") }
        guard s.utf8.count <= max else { throw .invalidField(key, "longer than \(max) bytes") }
        return s
    }

    /// nil when absent or null.
    public func optionalString(_ key: String, max: Int = 1024) throws(ProtocolError) -> String? {
        guard let v = object[key], v != .null else { return nil }
        return try string(key, max: max)
    }

    public func bool(_ key: String) throws(ProtocolError) -> Bool {
        let v = try value(key)
        guard let b = v.boolValue else { throw .invalidField(key, "expected a boolean, got \(v.typeName)") }
        return b
    }

    public func optionalBool(_ key: String) throws(ProtocolError) -> Bool? {
        guard object[key] != nil else { return nil }
        return try bool(key)
    }

    public func int(_ key: String, _ range: ClosedRange<Int>) throws(ProtocolError) -> Int {
        let v = try value(key)
        guard let i = v.int64Value, let n = Int(exactly: i) else {
            throw .invalidField(key, "expected an integer, got \(v.typeName)")
        }
        guard range.contains(n) else {
            throw .invalidField(key, "must be from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }

    public func optionalInt(_ key: String, _ range: ClosedRange<Int>) throws(ProtocolError) -> Int? {
        guard object[key] != nil else { return nil }
        return try int(key, range)
    }

    /// A time or count the server writes (seconds since the epoch): any 64-bit integer.
    public func int64(_ key: String) throws(ProtocolError) -> Int64 {
        let v = try value(key)
        guard let i = v.int64Value else { throw .invalidField(key, "expected an integer, got \(v.typeName)") }
        return i
    }

    public func double(_ key: String) throws(ProtocolError) -> Double {
        let v = try value(key)
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: throw .invalidField(key, "expected a number, got \(v.typeName)")
        }
    }

    public func enumValue<E: RawRepresentable & CaseIterable>(_ key: String) throws(ProtocolError) -> E
    where E.RawValue == String {
        let s = try string(key, max: 64)
        guard let e = E(rawValue: s) else {
            throw .invalidField(key, "expected one of " + E.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return e
    }

    public func optionalEnum<E: RawRepresentable & CaseIterable>(_ key: String) throws(ProtocolError) -> E?
    where E.RawValue == String {
        guard object[key] != nil else { return nil }
        return try enumValue(key) as E
    }

    public func array(_ key: String) throws(ProtocolError) -> [JSONValue] {
        let v = try value(key)
        guard let a = v.arrayValue else { throw .invalidField(key, "expected an array, got \(v.typeName)") }
        return a
    }

    /// Each element of the array `key`, decoded by `decode`.
    public func list<T>(_ key: String, _ decode: (JSONValue) throws(ProtocolError) -> T) throws(ProtocolError) -> [T] {
        var out: [T] = []
        for item in try array(key) { out.append(try decode(item)) }
        return out
    }

    public func object(_ key: String) throws(ProtocolError) -> FieldReader { try FieldReader(try value(key), key) }
}

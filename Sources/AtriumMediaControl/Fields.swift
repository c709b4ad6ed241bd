package import AtriumJSON

/// Typed access to a message's fields: a wrong or missing field is `invalid_field` naming it. Shared
/// with `AtriumSignal`, which decodes the other requests with it.
package struct Fields {
    package let object: JSONObject

    package init(object: JSONObject) { self.object = object }

    package func string(_ key: String, max: Int = 1024) throws(SignalError) -> String {
        guard let v = object[key] else { throw .invalidField(key, "is required") }
        guard let s = v.stringValue else { throw .invalidField(key, "expected a string, got \(v.typeName)") }
        guard s.utf8.count <= max else { throw .invalidField(key, "longer than \(max) bytes") }
        return s
    }

    package func optionalString(_ key: String, max: Int = 1024) throws(SignalError) -> String? {
        guard object[key] != nil, object[key] != .null else { return nil }
        return try string(key, max: max)
    }

    package func bool(_ key: String) throws(SignalError) -> Bool {
        guard let v = object[key] else { throw .invalidField(key, "is required") }
        guard let b = v.boolValue else { throw .invalidField(key, "expected a boolean, got \(v.typeName)") }
        return b
    }

    package func optionalBool(_ key: String) throws(SignalError) -> Bool? {
        guard object[key] != nil else { return nil }
        return try bool(key)
    }

    package func int(_ key: String, _ range: ClosedRange<Int>) throws(SignalError) -> Int {
        guard let v = object[key] else { throw .invalidField(key, "is required") }
        guard let i = v.int64Value, let n = Int(exactly: i) else {
            throw .invalidField(key, "expected an integer, got \(v.typeName)")
        }
        guard range.contains(n) else {
            throw .invalidField(key, "must be from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }

    package func optionalInt(_ key: String, _ range: ClosedRange<Int>) throws(SignalError) -> Int? {
        guard object[key] != nil else { return nil }
        return try int(key, range)
    }

    package func enumValue<E: RawRepresentable & CaseIterable>(_ key: String) throws(SignalError) -> E
    where E.RawValue == String {
        let s = try string(key, max: 64)
        guard let e = E(rawValue: s) else {
            throw .invalidField(key, "expected one of " + E.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return e
    }

    package func optionalEnum<E: RawRepresentable & CaseIterable>(_ key: String) throws(SignalError) -> E?
    where E.RawValue == String {
        guard object[key] != nil else { return nil }
        return try enumValue(key) as E
    }
}

internal import CJansson

/// Why a JSON text was refused, with the position jansson reports (1-based line and column, 0-based byte).
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public let line: Int
    public let column: Int
    public let position: Int
    public var description: String { "\(message) at line \(line), column \(column) (byte \(position))" }
}

/// Parses JSON with jansson: strict RFC 8259, UTF-8 only, duplicate keys refused, nesting capped by
/// jansson at 2048 levels (deeper input is an error, not a stack overflow).
public enum JSONParser {
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        var err = json_error_t()
        let flags = Int(JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL)
        let root: UnsafeMutablePointer<json_t>? = bytes.withUnsafeBufferPointer { buf in
            // json_loadb reads exactly `count` bytes; an empty buffer needs a valid pointer all the same.
            guard let base = buf.baseAddress, buf.count > 0 else {
                return json_loadb("", 0, flags, &err)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: buf.count) {
                json_loadb($0, buf.count, flags, &err)
            }
        }
        guard let root else {
            let text = withUnsafeBytes(of: err.text) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            throw JSONParseError(
                message: text, line: Int(err.line), column: Int(err.column), position: Int(err.position))
        }
        defer { atrium_json_decref(root) }
        return convert(root)
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Converts jansson's tree; depth is bounded by the parser's own limit.
    private static func convert(_ j: UnsafeMutablePointer<json_t>) -> JSONValue {
        switch json_type(rawValue: UInt32(atrium_json_typeof(j))) {
        case JSON_OBJECT:
            var obj = JSONObject()
            var it = json_object_iter(j)
            while let cur = it {
                let key = String(cString: json_object_iter_key(cur))
                if let v = json_object_iter_value(cur) { obj[key] = convert(v) }
                it = json_object_iter_next(j, cur)
            }
            return .object(obj)
        case JSON_ARRAY:
            let n = json_array_size(j)
            var arr: [JSONValue] = []
            arr.reserveCapacity(n)
            for i in 0..<n {
                if let v = json_array_get(j, i) { arr.append(convert(v)) }
            }
            return .array(arr)
        case JSON_STRING:
            let n = json_string_length(j)
            guard let p = json_string_value(j) else { return .string("") }
            return p.withMemoryRebound(to: UInt8.self, capacity: n) {
                .string(String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self))
            }
        case JSON_INTEGER: return .int(Int64(json_integer_value(j)))
        case JSON_REAL: return .double(json_real_value(j))
        case JSON_TRUE: return .bool(true)
        case JSON_FALSE: return .bool(false)
        default: return .null
        }
    }
}

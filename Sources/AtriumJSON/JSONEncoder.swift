/// Writes compact JSON (RFC 8259). Strings are escaped per section 7; non-finite doubles become null.
extension JSONValue {
    public func serialized() -> String {
        var out = ""
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    public func bytes() -> [UInt8] { Array(serialized().utf8) }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d): out += d.isFinite ? "\(d)" : "null"
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let a):
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                v.write(into: &out)
            }
            out += "]"
        case .object(let o):
            out += "{"
            for (i, p) in o.pairs.enumerated() {
                if i > 0 { out += "," }
                Self.writeString(p.key, into: &out)
                out += ":"
                p.value.write(into: &out)
            }
            out += "}"
        }
    }

    private static let hex: [Character] = Array("0123456789abcdef")

    static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u00"
                out.append(hex[Int(scalar.value >> 4)])
                out.append(hex[Int(scalar.value & 15)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

extension JSONObject {
    public func serialized() -> String { JSONValue.object(self).serialized() }
}

/// base64url without padding (RFC 4648 section 5), as JWS uses it (RFC 7515 section 2).
public enum Base64URL {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let reverse: [Int8] = {
        var t = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = Int8(i) }
        return t
    }()

    public static func encode(_ data: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((data.count * 4 + 2) / 3)
        var i = 0
        while i + 2 < data.count {
            let n = (UInt32(data[i]) << 16) | (UInt32(data[i + 1]) << 8) | UInt32(data[i + 2])
            out += [
                alphabet[Int(n >> 18)], alphabet[Int((n >> 12) & 63)], alphabet[Int((n >> 6) & 63)],
                alphabet[Int(n & 63)],
            ]
            i += 3
        }
        let rest = data.count - i
        if rest == 1 {
            let n = UInt32(data[i]) << 16
            out += [alphabet[Int(n >> 18)], alphabet[Int((n >> 12) & 63)]]
        } else if rest == 2 {
            let n = (UInt32(data[i]) << 16) | (UInt32(data[i + 1]) << 8)
            out += [alphabet[Int(n >> 18)], alphabet[Int((n >> 12) & 63)], alphabet[Int((n >> 6) & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func encode(_ text: String) -> String { encode(Array(text.utf8)) }

    /// Decodes unpadded base64url; nil on any character outside the alphabet, on padding, on an
    /// impossible length, or on non-zero trailing bits (so each value has exactly one encoding).
    public static func decode<S: Collection>(_ text: S) -> [UInt8]? where S.Element == UInt8 {
        if text.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        for c in text {
            let v = reverse[Int(c)]
            if v < 0 { return nil }
            acc = (acc << 6) | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((acc >> UInt32(bits)) & 0xFF))
            }
        }
        if bits > 0 && (acc & ((1 << UInt32(bits)) - 1)) != 0 { return nil }
        return out
    }

    public static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }
}

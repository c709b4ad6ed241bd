/// base64 with padding (RFC 4648 section 4), as the TURN REST API writes its credential.
public enum Base64 {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ data: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((data.count + 2) / 3 * 4)
        var i = 0
        while i < data.count {
            let b0 = UInt32(data[i])
            let b1 = i + 1 < data.count ? UInt32(data[i + 1]) : 0
            let b2 = i + 2 < data.count ? UInt32(data[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int((n >> 12) & 63)])
            out.append(i + 1 < data.count ? alphabet[Int((n >> 6) & 63)] : UInt8(ascii: "="))
            out.append(i + 2 < data.count ? alphabet[Int(n & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of base64 with or without padding; nil for other characters.
    public static func decode(_ text: String) -> [UInt8]? {
        let url = text.utf8.compactMap { c -> UInt8? in
            switch c {
            case UInt8(ascii: "="): nil
            case UInt8(ascii: "+"): UInt8(ascii: "-")
            case UInt8(ascii: "/"): UInt8(ascii: "_")
            default: c
            }
        }
        return Base64URL.decode(url)
    }
}

import AtriumCrypto

/// How a receiver knows a delivery came from this server and was not replayed: `X-Atrium-Signature`
/// is `v1=` and the lowercase hex HMAC-SHA256, keyed with the endpoint's secret, of the
/// `X-Atrium-Timestamp` value (Unix seconds of this attempt), a `.`, and the raw body. A receiver
/// recomputes it over the bytes it got, compares in constant time, and refuses timestamps too far
/// from its clock (docs/webhooks.md has Python and Node examples).
public enum WebhookSignature {
    public static let header = "X-Atrium-Signature"
    public static let timestampHeader = "X-Atrium-Timestamp"
    public static let scheme = "v1="

    /// The header value for a body sent at `timestamp`.
    public static func sign(body: String, timestamp: Int64, secret: String) -> String {
        let message = Array("\(timestamp).".utf8) + Array(body.utf8)
        return scheme + hex(HMACSHA256.authenticate(message, key: Array(secret.utf8)))
    }

    /// Whether `signature` (a header value) signs `body` at `timestamp`.
    public static func verify(signature: String, body: String, timestamp: Int64, secret: String) -> Bool {
        constantTimeEquals(
            Array(sign(body: body, timestamp: timestamp, secret: secret).utf8), Array(signature.utf8))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

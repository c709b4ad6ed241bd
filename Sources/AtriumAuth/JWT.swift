import AtriumCrypto
public import AtriumJSON

/// JSON Web Tokens signed with HMAC-SHA256 (RFC 7519, JWS compact serialization of RFC 7515 section 7.1).
/// Only HS256 is accepted: a token naming any other algorithm, "none" included, is refused.
public enum JWT {
    /// Tokens longer than this are refused before any decoding.
    public static let maxLength = 8 * 1024

    /// Signs `payload` with `secret` and returns the compact serialization.
    public static func sign(payload: JSONObject, secret: [UInt8]) -> String {
        let header: JSONObject = ["alg": .string("HS256"), "typ": .string("JWT")]
        let signingInput = Base64URL.encode(header.serialized()) + "." + Base64URL.encode(payload.serialized())
        let mac = HMACSHA256.authenticate(Array(signingInput.utf8), key: secret)
        return signingInput + "." + Base64URL.encode(mac)
    }

    /// The three parts of a compact JWS, decoded but not yet verified.
    public struct Parts: Sendable {
        public var header: JSONObject
        public var payload: JSONObject
        public var signingInput: [UInt8]
        public var signature: [UInt8]
    }

    /// Splits and decodes a compact JWS. Checks shape only; `verifyHS256` checks the signature.
    public static func decode(_ token: String) throws(AuthError) -> Parts {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty else { throw .missingToken }
        guard bytes.count <= maxLength else { throw .malformedToken("longer than \(maxLength) bytes") }
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else { throw .malformedToken("a JWS has three dot-separated parts") }
        let h = bytes[..<dots[0]], p = bytes[(dots[0] + 1)..<dots[1]], s = bytes[(dots[1] + 1)...]
        guard let hb = Base64URL.decode(h), let pb = Base64URL.decode(p), let sb = Base64URL.decode(s) else {
            throw .malformedToken("a part is not base64url")
        }
        func object(_ b: [UInt8], _ what: String) throws(AuthError) -> JSONObject {
            guard let v = try? JSONParser.parse(b), let o = v.objectValue else {
                throw .malformedToken("the \(what) is not a JSON object")
            }
            return o
        }
        return Parts(
            header: try object(hb, "header"), payload: try object(pb, "payload"),
            signingInput: Array(bytes[..<dots[1]]), signature: sb)
    }

    /// Checks the header's algorithm and the HMAC (in constant time).
    public static func verifyHS256(_ parts: Parts, secret: [UInt8]) throws(AuthError) {
        let alg = parts.header["alg"]?.stringValue ?? ""
        guard alg == "HS256" else { throw .unsupportedAlgorithm(alg) }
        let mac = HMACSHA256.authenticate(parts.signingInput, key: secret)
        guard constantTimeEquals(mac, parts.signature) else { throw .badSignature }
    }
}

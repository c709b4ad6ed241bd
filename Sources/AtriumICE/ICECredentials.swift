/// The local or remote ICE username fragment and password (RFC 8445 section 5.3; SDP `a=ice-ufrag` and
/// `a=ice-pwd`, RFC 8839 section 5.4).
///
/// Both are made of `ice-char`s (`ALPHA / DIGIT / "+" / "/"`). RFC 8445 asks for at least 24 bits of
/// randomness in the ufrag and 128 in the password; 8 and 24 characters of a 64-character set give 48
/// and 144 bits.
public struct ICECredentials: Hashable, Sendable {
    /// The 64 `ice-char`s (RFC 8839 section 5.4): a power of two, so a random byte masked to 6 bits
    /// picks one without bias.
    public static let iceChars = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    public static let generatedUfragLength = 8
    public static let generatedPasswordLength = 24
    /// RFC 8839 section 5.4: `ice-ufrag` is 4-256 characters, `ice-pwd` 22-256.
    public static let ufragLengths = 4...256
    public static let passwordLengths = 22...256

    public var ufrag: String
    public var password: String

    public init(ufrag: String, password: String) {
        self.ufrag = ufrag
        self.password = password
    }

    /// Fresh credentials from `generator` (a seeded one in tests, a cryptographic one in the server).
    public static func random<R: RandomNumberGenerator>(using generator: inout R) -> ICECredentials {
        ICECredentials(
            ufrag: randomString(length: generatedUfragLength, using: &generator),
            password: randomString(length: generatedPasswordLength, using: &generator))
    }

    /// Whether both values have RFC 8839 lengths and only `ice-char`s.
    public var isValid: Bool {
        Self.ufragLengths.contains(ufrag.utf8.count) && Self.passwordLengths.contains(password.utf8.count)
            && ufrag.utf8.allSatisfy(Self.iceChars.contains) && password.utf8.allSatisfy(Self.iceChars.contains)
    }

    /// The SDP attribute lines that announce these credentials (RFC 8839 section 5.4).
    public var sdpAttributes: [String] { ["a=ice-ufrag:" + ufrag, "a=ice-pwd:" + password] }

    private static func randomString<R: RandomNumberGenerator>(length: Int, using generator: inout R) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(length)
        while out.count < length {
            var word = generator.next()
            for _ in 0..<8 where out.count < length {
                out.append(iceChars[Int(word & 0x3F)])
                word >>= 8
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

import AtriumCrypto

/// Time-limited TURN credentials in the form coturn checks with `use-auth-secret`
/// (draft-uberti-behave-turn-rest-00 section 2.2, coturn's "TURN REST API"):
///
/// ```
/// username   = <expiry, Unix seconds> ":" <identity>
/// credential = base64(HMAC-SHA1(static-auth-secret, username))
/// ```
///
/// coturn refuses the username once its clock passes the expiry, and any credential not signed with its
/// secret. The server hands a fresh pair at every join and resume, so a participant never holds one
/// for longer than `ttl` seconds. Pure: the clock is the caller's.
public struct TURNSettings: Sendable, Equatable {
    /// `turn:` and `turns:` URLs (RFC 7065) of the servers that share the secret.
    public var urls: [String]
    public var secret: [UInt8]
    /// Seconds a credential is valid from when it is made.
    public var ttl: Int64

    /// The longest identity put in a username: STUN's USERNAME holds fewer than 509 bytes (RFC 8489
    /// section 14.3), and 20 digits and a colon come first.
    public static let maxIdentityBytes = 128

    public init(urls: [String], secret: [UInt8], ttl: Int64) {
        self.urls = urls
        self.secret = secret
        self.ttl = ttl
    }

    /// Credentials for `identity` made at `now` (Unix seconds), or nil when there is no honest expiry
    /// to write: a clock before 1970, a TTL that is not positive, or a sum that overflows. An identity
    /// that is too long or has control characters is replaced by `fallback` (the participant id).
    public func credential(identity: String, fallback: String, now: Int64) -> TURNCredential? {
        guard now >= 0, ttl > 0 else { return nil }
        let (expiry, overflow) = now.addingReportingOverflow(ttl)
        guard !overflow else { return nil }
        let usable =
            !identity.isEmpty && identity.utf8.count <= Self.maxIdentityBytes
            && !identity.unicodeScalars.contains { $0.properties.generalCategory == .control }
        let username = "\(expiry):\(usable ? identity : fallback)"
        let credential = Base64.encode(HMACSHA1.authenticate(Array(username.utf8), key: secret))
        return TURNCredential(urls: urls, username: username, credential: credential, expiresAt: expiry)
    }
}

/// One `RTCIceServer` entry as the join result carries it.
public struct TURNCredential: Sendable, Equatable {
    public var urls: [String]
    public var username: String
    public var credential: String
    /// Unix seconds after which coturn refuses it.
    public var expiresAt: Int64
}

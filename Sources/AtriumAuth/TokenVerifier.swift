import AtriumJSON

/// Verifies Atrium access tokens against the configured API keys. Pure: the time is passed in.
public struct TokenVerifier: Sendable {
    /// API key -> secret.
    public var keys: [String: [UInt8]]
    /// Seconds of clock skew tolerated on `exp` and `nbf` (RFC 7519 sections 4.1.4 and 4.1.5).
    public var leeway: Int64

    public init(keys: [String: [UInt8]], leeway: Int64 = 30) {
        self.keys = keys
        self.leeway = leeway
    }

    /// Order of checks: shape, algorithm, key, signature, then time. A forged token never learns
    /// whether its time claims would have passed.
    public func verify(_ token: String, now: Int64) throws(AuthError) -> TokenClaims {
        let parts = try JWT.decode(token)
        let alg = parts.header["alg"]?.stringValue ?? ""
        guard alg == "HS256" else { throw .unsupportedAlgorithm(alg) }
        guard let iss = parts.payload["iss"]?.stringValue else { throw .malformedToken("missing iss") }
        guard let secret = keys[iss] else { throw .unknownKey(iss) }
        try JWT.verifyHS256(parts, secret: secret)
        let claims = try TokenClaims(json: parts.payload)
        if now > claims.expiresAt.addingSaturated(leeway) { throw .expired }
        if let nbf = claims.notBefore, now.addingSaturated(leeway) < nbf { throw .notYetValid }
        return claims
    }
}

extension Int64 {
    /// `self + other`, held at `Int64.max` or `Int64.min` instead of trapping. Time claims are any
    /// 64-bit integer a signer chose: an `exp` within the leeway of `Int64.max` means "never" and must
    /// not take the process down.
    func addingSaturated(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}

/// Mints tokens signed with one API key.
public struct TokenIssuer: Sendable {
    public var key: String
    public var secret: [UInt8]

    public init(key: String, secret: [UInt8]) {
        self.key = key
        self.secret = secret
    }

    public func token(identity: String, name: String? = nil, grants: Grants, ttl: Int64, now: Int64) -> String {
        let claims = TokenClaims(
            issuer: key, identity: identity, name: name, issuedAt: now, notBefore: now,
            expiresAt: now.addingSaturated(ttl), grants: grants)
        return JWT.sign(payload: claims.json(), secret: secret)
    }
}

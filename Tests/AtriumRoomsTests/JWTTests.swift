import AtriumCrypto
import AtriumJSON
import AtriumModel
import Testing

@testable import AtriumAuth

@Suite struct JWTTests {
    /// RFC 7515 Appendix A.1: the HS256 example JWS and its key (a JWK "k", base64url).
    static let rfcKey = Base64URL.decode(
        "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")!
    static let rfcToken =
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

    @Test func rfc7515AppendixA1SignatureMatches() throws {
        let parts = try JWT.decode(Self.rfcToken)
        #expect(parts.header["alg"] == .string("HS256"))
        #expect(parts.payload["http://example.com/is_root"] == .bool(true))
        // The signature over the exact signing input is the RFC's.
        let mac = HMACSHA256.authenticate(parts.signingInput, key: Self.rfcKey)
        #expect(Base64URL.encode(mac) == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        try JWT.verifyHS256(parts, secret: Self.rfcKey)
    }

    @Test func rfc7515AppendixA1VerifiesAsToken() throws {
        let verifier = TokenVerifier(keys: ["joe": Self.rfcKey], leeway: 0)
        let claims = try verifier.verify(Self.rfcToken, now: 1_300_819_000)
        #expect(claims.issuer == "joe")
        #expect(claims.expiresAt == 1_300_819_380)
        #expect(throws: AuthError.expired) { try verifier.verify(Self.rfcToken, now: 1_300_819_381) }
    }

    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    static let verifier = TokenVerifier(keys: ["k1": secret], leeway: 30)
    static let now: Int64 = 1_800_000_000

    static func token(
        grants: Grants = Grants(), ttl: Int64 = 600, nbfOffset: Int64 = 0, key: String = "k1",
        secret: [UInt8] = secret
    ) -> String {
        let claims = TokenClaims(
            issuer: key, identity: "alice", name: "Alice", issuedAt: now,
            notBefore: now + nbfOffset, expiresAt: now + ttl, grants: grants)
        return JWT.sign(payload: claims.json(), secret: secret)
    }

    @Test func roundTripKeepsGrants() throws {
        var g = Grants()
        g.room = "standup"
        g.roomJoin = true
        g.canPublish = true
        g.canSubscribe = true
        g.canPublishSources = [.camera, .screenShare]
        g.role = .cohost
        g.hidden = true
        let claims = try Self.verifier.verify(Self.token(grants: g), now: Self.now)
        #expect(claims.grants == g)
        #expect(claims.identity == "alice")
        #expect(claims.name == "Alice")
        #expect(claims.grants.allowsPublishing(.screenShare))
        #expect(!claims.grants.allowsPublishing(.microphone))
    }

    /// Each failure has its own code.
    @Test func failureCodes() {
        let good = Self.token()
        let parts = good.split(separator: ".").map(String.init)
        let noneAlg = Base64URL.encode(#"{"alg":"none","typ":"JWT"}"#) + "." + parts[1] + "."
        let rs256 = Base64URL.encode(#"{"alg":"RS256"}"#) + "." + parts[1] + "." + parts[2]
        let cases: [(String, Int64, String)] = [
            ("", Self.now, "missing_token"),
            ("abc", Self.now, "malformed_token"),
            ("a.b.c.d", Self.now, "malformed_token"),
            ("!!.??.**", Self.now, "malformed_token"),
            (Base64URL.encode("[1]") + "." + parts[1] + "." + parts[2], Self.now, "malformed_token"),
            (noneAlg, Self.now, "unsupported_algorithm"),
            (rs256, Self.now, "unsupported_algorithm"),
            (Self.token(key: "nobody"), Self.now, "unknown_key"),
            (Self.token(secret: Array("another secret, 32 bytes long!!!".utf8)), Self.now, "bad_signature"),
            (
                parts[0] + "." + parts[1] + "." + Base64URL.encode([UInt8](repeating: 0, count: 32)), Self.now,
                "bad_signature"
            ),
            (good, Self.now + 600 + 31, "token_expired"),
            (Self.token(nbfOffset: 100), Self.now, "token_not_yet_valid"),
            (String(repeating: "a", count: JWT.maxLength + 1), Self.now, "malformed_token"),
        ]
        for (token, now, code) in cases {
            do {
                _ = try Self.verifier.verify(token, now: now)
                Issue.record("accepted \(token.prefix(40)) expecting \(code)")
            } catch {
                #expect(error.code == code, "token \(token.prefix(40))")
            }
        }
    }

    @Test func leewayToleratesSkew() throws {
        _ = try Self.verifier.verify(Self.token(), now: Self.now + 600 + 30)
        _ = try Self.verifier.verify(Self.token(nbfOffset: 30), now: Self.now)
    }

    @Test func wrongTypesInClaimsAreMalformed() {
        let payloads = [
            #"{"iss":"k1","exp":"soon"}"#, #"{"exp":1}"#, #"{"iss":"k1"}"#,
            #"{"iss":"k1","exp":1900000000,"grants":{"roomJoin":"yes"}}"#,
            #"{"iss":"k1","exp":1900000000,"grants":{"role":"king"}}"#,
            #"{"iss":"k1","exp":1900000000,"grants":{"canPublishSources":["webcam"]}}"#,
            #"{"iss":"k1","exp":1900000000,"grants":[]}"#,
        ]
        for p in payloads {
            let obj = (try? JSONParser.parse(p))?.objectValue ?? [:]
            let t = JWT.sign(payload: obj, secret: Self.secret)
            #expect(throws: (any Error).self, "\(p)") { try Self.verifier.verify(t, now: Self.now) }
            do { _ = try Self.verifier.verify(t, now: Self.now) } catch {
                #expect(error.code == "malformed_token", "\(p)")
            }
        }
    }
}

@Suite struct AdminAuthorizationTests {
    /// Claims granting `grant` (nothing when nil), bound to `room` when given.
    static func claims(_ grant: WritableKeyPath<Grants, Bool>? = nil, room: String? = nil) -> TokenClaims {
        var g = Grants()
        if let grant { g[keyPath: grant] = true }
        g.room = room
        return TokenClaims(issuer: "k", identity: "a", expiresAt: 0, grants: g)
    }

    static let room: Room = {
        var r = Room(id: RoomID("rm_0000000000000000"), name: "standup", createdAt: 0)
        r.metadata = ""
        return r
    }()

    /// (grants, action, expected error code or nil when allowed)
    static let rows: [(TokenClaims, AdminAction, String?)] = [
        (Self.claims(\.roomCreate), .createRoom(name: "x"), nil),
        (Self.claims(), .createRoom(name: "x"), "missing_grant"),
        (Self.claims(\.roomCreate, room: "y"), .createRoom(name: "x"), "wrong_room"),
        (Self.claims(\.roomCreate, room: "x"), .createRoom(name: "x"), nil),
        (Self.claims(\.roomList), .listRooms, nil),
        (Self.claims(\.roomAdmin), .listRooms, "missing_grant"),
        (Self.claims(\.roomList), .readRoom(Self.room), nil),
        (Self.claims(\.roomAdmin, room: "standup"), .readRoom(Self.room), nil),
        (Self.claims(\.roomAdmin, room: "other"), .readRoom(Self.room), "wrong_room"),
        (Self.claims(\.roomJoin, room: "standup"), .readRoom(Self.room), "missing_grant"),
        (Self.claims(\.roomAdmin), .administerRoom(Self.room), nil),
        (Self.claims(\.roomAdmin, room: "rm_0000000000000000"), .administerRoom(Self.room), nil),
        (Self.claims(\.roomAdmin, room: "other"), .administerRoom(Self.room), "wrong_room"),
        (Self.claims(\.roomList), .administerRoom(Self.room), "missing_grant"),
        (Self.claims(\.roomAdmin), .mintToken(room: "x"), nil),
        (Self.claims(\.roomAdmin, room: "y"), .mintToken(room: "x"), "wrong_room"),
        (Self.claims(\.roomCreate), .mintToken(room: "x"), "missing_grant"),
    ]

    @Test(arguments: rows) func table(claims: TokenClaims, action: AdminAction, expected: String?) {
        do {
            try claims.authorize(action)
            #expect(expected == nil)
        } catch {
            #expect(error.code == expected)
        }
    }
}

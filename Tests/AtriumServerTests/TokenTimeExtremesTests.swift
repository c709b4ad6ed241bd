import AtriumCrypto
import AtriumHTTP
import AtriumJSON
import Testing

@testable import AtriumAdminAPI
@testable import AtriumAuth

/// Time claims are whatever a signer wrote: a validly signed token with an extreme `exp`, `nbf` or
/// `iat` must be answered with a documented code, never trap (`exp` within the leeway of
/// `Int64.max` used to crash the process with an arithmetic overflow).
@Suite struct TokenTimeExtremesTests {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    static let verifier = TokenVerifier(keys: ["k1": secret], leeway: 30)
    static let now: Int64 = 1_800_000_000

    /// Signs a payload written as JSON text, so numbers jansson reads as reals (1e300) can be tried.
    static func signed(_ payload: String) -> String {
        let header = #"{"alg":"HS256","typ":"JWT"}"#
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        return input + "." + Base64URL.encode(HMACSHA256.authenticate(Array(input.utf8), key: secret))
    }

    /// The outcome of verifying: "ok" or the error code.
    static func outcome(_ token: String, now: Int64 = now, verifier: TokenVerifier = verifier) -> String {
        do {
            _ = try verifier.verify(token, now: now)
            return "ok"
        } catch {
            return error.code
        }
    }

    static let expCases: [(exp: String, expected: String)] = [
        ("9223372036854775807", "ok"),  // Int64.max: the tolerance saturates, "never expires"
        ("9223372036854775778", "ok"),  // Int64.max - 29: inside the leeway, used to trap
        ("9223372036854775777", "ok"),  // Int64.max - 30
        ("-9223372036854775808", "token_expired"),  // Int64.min
        ("-1", "token_expired"),
        ("0", "token_expired"),
        ("1799999969", "token_expired"),  // 31 s ago: beyond the 30 s tolerance
        ("1799999970", "ok"),  // 30 s ago: inside it
        ("9223372036854775808", "malformed_token"),  // Int64.max + 1: jansson refuses the integer
        ("-9223372036854775809", "malformed_token"),
        ("1e300", "malformed_token"),
        ("-1e300", "malformed_token"),
        ("1.7976931348623157e308", "malformed_token"),
        ("9.3e18", "malformed_token"),
        ("1900000000.5", "malformed_token"),
        ("1.9e9", "ok"),  // an integral real is an integer (JSON has one number type)
        ("\"1900000000\"", "malformed_token"),
        ("null", "malformed_token"),
    ]

    @Test(arguments: expCases)
    func expExtremes(_ c: (exp: String, expected: String)) {
        let token = Self.signed(#"{"iss":"k1","sub":"a","exp":"# + c.exp + "}")
        #expect(Self.outcome(token) == c.expected, "exp \(c.exp)")
    }

    static let nbfCases: [(nbf: String, expected: String)] = [
        ("9223372036854775807", "token_not_yet_valid"),
        ("-9223372036854775808", "ok"),
        ("-1", "ok"),
        ("1800000030", "ok"),  // inside the tolerance
        ("1800000031", "token_not_yet_valid"),
        ("1e300", "malformed_token"),
        ("-1e300", "malformed_token"),
    ]

    @Test(arguments: nbfCases)
    func nbfExtremes(_ c: (nbf: String, expected: String)) {
        let token = Self.signed(#"{"iss":"k1","sub":"a","exp":1900000000,"nbf":"# + c.nbf + "}")
        #expect(Self.outcome(token) == c.expected, "nbf \(c.nbf)")
    }

    @Test(arguments: ["9223372036854775807", "-9223372036854775808", "1e300", "-1"])
    func iatIsOnlyTypeChecked(_ iat: String) {
        let token = Self.signed(#"{"iss":"k1","sub":"a","exp":1900000000,"iat":"# + iat + "}")
        #expect(Self.outcome(token) == (iat.contains("e") ? "malformed_token" : "ok"), "iat \(iat)")
    }

    /// The clock and the tolerance are the server's, but the check must hold at their extremes too.
    @Test(arguments: [Int64.max, Int64.min, 0, -1])
    func extremeClocksDoNotTrap(_ now: Int64) {
        let wide = TokenVerifier(keys: ["k1": Self.secret], leeway: Int64.max)
        for exp in ["9223372036854775807", "-9223372036854775808", "0"] {
            let token = Self.signed(#"{"iss":"k1","sub":"a","exp":"# + exp + #","nbf":"# + exp + "}")
            _ = Self.outcome(token, now: now)
            _ = Self.outcome(token, now: now, verifier: wide)
        }
    }

    static let sums: [(Int64, Int64, Int64)] = [
        (1, 2, 3), (Int64.max, 1, Int64.max), (Int64.max - 29, 30, Int64.max),
        (Int64.min, -1, Int64.min), (Int64.min, Int64.max, -1), (-5, Int64.min, Int64.min),
    ]

    @Test(arguments: sums)
    func saturatedAddition(_ c: (Int64, Int64, Int64)) {
        #expect(c.0.addingSaturated(c.1) == c.2)
    }

    /// The same tokens through the admin API: an answer with a code, never a trap.
    @Test(arguments: expCases)
    func adminAPIAnswersExtremeExp(_ c: (exp: String, expected: String)) {
        let h = APIHarness()
        let token = Self.signed(
            #"{"iss":"k","sub":"a","grants":{"roomList":true},"exp":"# + c.exp + "}"
        ).replacingIssuerKey(APIHarness.secret)
        let r = h.call(.GET, "/v1/rooms", token: token)
        if c.expected == "ok" {
            #expect(r.status == 200, "exp \(c.exp)")
        } else {
            #expect(r.status == 401, "exp \(c.exp)")
            #expect(r.json?["error"]?["code"] == .string(c.expected), "exp \(c.exp)")
        }
    }

    /// What an `Authorization` header without a token is (docs/admin-api.md, Authentication).
    static let authorizationCases: [(header: String, expected: String)] = [
        ("Bearer ", "missing_token"),
        ("Bearer", "missing_token"),
        ("bearer \t ", "missing_token"),
        ("", "missing_token"),
        ("   ", "missing_token"),
        ("Basic dXNlcjpwYXNz", "malformed_token"),
        ("Bearerxyz", "malformed_token"),
        ("Bearer abc", "malformed_token"),
    ]

    @Test(arguments: authorizationCases)
    func authorizationHeaderShapes(_ c: (header: String, expected: String)) {
        let h = APIHarness()
        let r = h.call(.GET, "/v1/rooms", token: "", headers: ["authorization": c.header])
        #expect(r.status == 401, "\(c.header.debugDescription)")
        #expect(r.json?["error"]?["code"] == .string(c.expected), "\(c.header.debugDescription)")
    }

    @Test(arguments: ["Bearer\t", "bearer  ", "BEARER\t "])
    func tokenAfterTabsOrSpaces(_ prefix: String) {
        let h = APIHarness()
        let r = h.call(.GET, "/v1/rooms", token: "", headers: ["authorization": prefix + h.token() + " \t"])
        #expect(r.status == 200, "\(prefix.debugDescription)")
    }
}

extension String {
    /// Re-signs a token made by `TokenTimeExtremesTests.signed` with another secret.
    fileprivate func replacingIssuerKey(_ secret: [UInt8]) -> String {
        let parts = split(separator: ".")
        let input = parts[0] + "." + parts[1]
        return input + "." + Base64URL.encode(HMACSHA256.authenticate(Array(input.utf8), key: secret))
    }
}

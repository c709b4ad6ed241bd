import AtriumAuth
import AtriumProtocol
import Testing

/// The close after a refused token, as the server sends it (401-like failures 4001, 403-like 4003) and
/// as the protocol module tells a client (which then does not resume with that token): one table.
@Suite struct AuthCloseCodeTests {
    static let refusals: [AuthError] = [
        .missingToken, .malformedToken("x"), .unsupportedAlgorithm("none"), .unknownKey("k"), .badSignature,
        .expired, .notYetValid, .wrongRoom("r"), .missingGrant("roomJoin"),
    ]

    @Test(arguments: refusals) func everyTokenRefusalHasTheServersCloseCode(_ e: AuthError) {
        let code = e.isAuthentication ? SignalCloseCode.unauthorized : SignalCloseCode.forbidden
        #expect(SignalCloseCode.refusing(e.code) == code)
        #expect(SignalCloseCode.final.contains(code))
    }

    @Test func otherErrorsAreNoRefusal() {
        #expect(SignalCloseCode.refusing("malformed_json") == SignalCloseCode.unauthorized)
        for code in ["resume_failed", "disconnected", "timeout", "auth_timeout", "room_full"] {
            #expect(SignalCloseCode.refusing(code) == nil)
        }
    }
}

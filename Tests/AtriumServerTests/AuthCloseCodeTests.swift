import AtriumAuth
import AtriumProtocol
import Testing

/// The close after a refused token, as the server sends it (401-like failures 4001, 403-like 4003) and
/// as the protocol module tells a client (which then does not resume with that token): one table.
@Suite struct AuthCloseCodeTests {
    /// Every refusal: a case added to `AuthError` stops this switch compiling until it is listed.
    static let refusals: [AuthError] = {
        let all: [AuthError] = [
            .missingToken, .malformedToken("x"), .unsupportedAlgorithm("none"), .unknownKey("k"), .badSignature,
            .expired, .notYetValid, .wrongRoom("r"), .missingGrant("roomJoin"),
        ]
        for e in all {
            switch e {
            case .missingToken, .malformedToken, .unsupportedAlgorithm, .unknownKey, .badSignature, .expired,
                .notYetValid, .wrongRoom, .missingGrant:
                break
            }
        }
        return all
    }()

    @Test(arguments: refusals) func everyTokenRefusalHasTheServersCloseCode(_ e: AuthError) {
        let code = e.isAuthentication ? SignalCloseCode.unauthorized : SignalCloseCode.forbidden
        #expect(SignalCloseCode.refusing(e.code) == code)
        #expect(SignalCloseCode.final.contains(code))
    }

    /// Errors that say nothing of the token: a first message that is not JSON (closed 4001, but the
    /// client's own fault), an unanswered welcome, a forgotten session.
    @Test func otherErrorsAreNoRefusal() {
        for code in ["malformed_json", "resume_failed", "disconnected", "timeout", "auth_timeout", "room_full"] {
            #expect(SignalCloseCode.refusing(code) == nil)
        }
    }
}

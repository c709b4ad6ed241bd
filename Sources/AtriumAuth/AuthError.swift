/// Why a token was refused or a call not allowed. Each case has a documented code; the HTTP edge maps
/// the authentication failures to 401 and the authorization failures to 403.
public enum AuthError: Error, Equatable, Sendable {
    case missingToken
    case malformedToken(String)
    case unsupportedAlgorithm(String)
    case unknownKey(String)
    case badSignature
    case expired
    case notYetValid
    case wrongRoom(String)
    case missingGrant(String)

    public var code: String {
        switch self {
        case .missingToken: "missing_token"
        case .malformedToken: "malformed_token"
        case .unsupportedAlgorithm: "unsupported_algorithm"
        case .unknownKey: "unknown_key"
        case .badSignature: "bad_signature"
        case .expired: "token_expired"
        case .notYetValid: "token_not_yet_valid"
        case .wrongRoom: "wrong_room"
        case .missingGrant: "missing_grant"
        }
    }

    public var message: String {
        switch self {
        case .missingToken: "no access token was given"
        case .malformedToken(let why): "the token is malformed: \(why)"
        case .unsupportedAlgorithm(let alg): "the token's algorithm \"\(alg)\" is not supported; use HS256"
        case .unknownKey(let key): "the token's issuer \"\(key)\" is not a configured API key"
        case .badSignature: "the token's signature does not match"
        case .expired: "the token has expired"
        case .notYetValid: "the token is not valid yet"
        case .wrongRoom(let room): "the token is not valid for room \"\(room)\""
        case .missingGrant(let grant): "the token lacks the \(grant) grant"
        }
    }

    /// True for failures of authentication (401) rather than authorization (403).
    public var isAuthentication: Bool {
        switch self {
        case .wrongRoom, .missingGrant: false
        default: true
        }
    }
}

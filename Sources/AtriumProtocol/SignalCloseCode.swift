/// Close codes of `/v1/signal` (docs/protocol.md section 11; RFC 6455 reserves 4000-4999 for applications).
public enum SignalCloseCode {
    public static let unauthorized: UInt16 = 4001
    public static let forbidden: UInt16 = 4003
    public static let authTimeout: UInt16 = 4008
    public static let slowConsumer: UInt16 = 4009
    public static let idleTimeout: UInt16 = 4010
    public static let rateLimited: UInt16 = 4029
    public static let left: UInt16 = 4100
    public static let replaced: UInt16 = 4101
    public static let removed: UInt16 = 4102
    public static let roomEnded: UInt16 = 4103
    /// Cluster: the room moved (its node left the cluster or drains): connect again and join.
    public static let moved: UInt16 = 4104

    /// After these a client does not resume: failed authentication, left, replaced or resumed
    /// elsewhere, removed, room ended. After any other it resumes within the window.
    public static let final: Set<UInt16> = [unauthorized, forbidden, left, replaced, removed, roomEnded]

    /// The close that follows the error refusing a connection's token (docs/protocol.md section 2):
    /// 4001 for the token itself, 4003 for what it grants; nil for any other error code (a first
    /// message that is not JSON closes with 4001 too, but says nothing of the token). A resume with
    /// the same token cannot succeed after either.
    public static func refusing(_ errorCode: String) -> UInt16? {
        switch errorCode {
        case "missing_token", "malformed_token", "unsupported_algorithm", "unknown_key", "bad_signature",
            "token_expired", "token_not_yet_valid":
            unauthorized
        case "missing_grant", "wrong_room": forbidden
        default: nil
        }
    }
}

public import AtriumProtocol

/// Why media control refused an offer or an answer, with its documented code (docs/protocol.md):
/// `invalid_sdp`, `sdp_unsupported`, `stale_revision`, `media_unavailable`, or a malformed request field.
public enum NegotiationError: Error, Equatable, Sendable {
    /// The request's own fields are wrong (`invalid_field`).
    case request(ProtocolError)
    /// The session description or its timing is refused.
    case media(code: String, message: String)

    public var code: String {
        switch self {
        case .request(let e): e.code
        case .media(let code, _): code
        }
    }

    public var message: String {
        switch self {
        case .request(let e): e.message
        case .media(_, let message): message
        }
    }
}

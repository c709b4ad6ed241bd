public import AtriumMediaControl
public import AtriumProtocol
import AtriumRoomCoding
public import AtriumRooms

/// Why the signaling edge refused a request: protocol-level refusals (a malformed field, an unknown
/// type, a protocol version, a second join, a failed resume, the rate limit, a media negotiation),
/// or the room's own (`hub`). Each has a documented code (docs/protocol.md), sent as an `error`.
public enum SignalError: Error, Equatable, Sendable {
    case hub(HubError)
    case badRequest(String)
    case invalidField(String, String)
    case unsupportedProtocol(Int)
    case alreadyJoined
    case resumeFailed
    case rateLimited
    /// Past the participant's data message limits (`DataRateLimiter`).
    case dataRateLimited
    /// A media negotiation failure: `invalid_sdp`, `sdp_unsupported`, `stale_revision`, `media_unavailable`.
    case media(code: String, message: String)

    /// A message that is not a well-formed request.
    public init(_ error: ProtocolError) {
        switch error {
        case .malformedJSON, .badRequest: self = .badRequest(error.message)
        case .invalidField(let f, let m): self = .invalidField(f, m)
        case .unsupportedProtocol(let v): self = .unsupportedProtocol(v)
        }
    }

    /// A refusal of media control.
    public init(_ error: NegotiationError) {
        switch error {
        case .request(let e): self.init(e)
        case .media(let code, let message): self = .media(code: code, message: message)
        }
    }

    /// The room's refusals the edge itself finds before asking the hub.
    public static var notJoined: SignalError { .hub(.notJoined) }
    public static var trackNotFound: SignalError { .hub(.trackNotFound) }

    public var code: String {
        switch self {
        case .hub(let e): e.code
        case .badRequest: "bad_request"
        case .invalidField: "invalid_field"
        case .unsupportedProtocol: "unsupported_protocol"
        case .alreadyJoined: "already_joined"
        case .resumeFailed: "resume_failed"
        case .rateLimited: "rate_limited"
        case .dataRateLimited: "data_rate_limited"
        case .media(let code, _): code
        }
    }

    public var message: String {
        switch self {
        case .hub(let e): e.message
        case .badRequest(let m): m
        case .invalidField(let f, let m): "\(f): \(m)"
        case .unsupportedProtocol(let v): ProtocolError.unsupportedProtocol(v).message
        case .alreadyJoined: "this connection has already joined"
        case .resumeFailed: "the session cannot be resumed; join again"
        case .rateLimited: "too many messages; slow down"
        case .dataRateLimited:
            "more than \(Int(DataRateLimiter.messagesPerSecond)) data messages or \(Int(DataRateLimiter.bytesPerSecond / 1024)) KiB a second; this one was not sent"
        case .media(_, let message): message
        }
    }
}

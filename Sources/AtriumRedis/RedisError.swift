/// Why a Redis call failed. Returned as a value (typed throws), never trapped: the cluster layer maps
/// the connection cases to `cluster_unavailable` at the edges.
public enum RedisError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The URL given to `--redis` is not one this client understands.
    case invalidURL(String)
    /// No connection could be made (refused, unreachable, connect timeout).
    case connect(String)
    /// The connection broke while a command was in flight (reset, end of file).
    case io(String)
    /// The command got no answer within the command timeout.
    case timeout
    /// The server answered with an error reply.
    case server(String)
    /// The reply was not of the shape the caller expects (the message says what it got).
    case unexpectedReply(String)
    /// The client is waiting out its reconnect backoff after a failure and did not try.
    case unavailable(String)

    /// Whether the failure is about reaching Redis (as opposed to a refused command).
    public var isConnectionFailure: Bool {
        switch self {
        case .connect, .io, .timeout, .unavailable: true
        case .invalidURL, .server, .unexpectedReply: false
        }
    }

    public var description: String {
        switch self {
        case .invalidURL(let m): "invalid Redis URL: \(m)"
        case .connect(let m): "cannot connect to Redis: \(m)"
        case .io(let m): "the Redis connection failed: \(m)"
        case .timeout: "Redis did not answer in time"
        case .server(let m): "Redis refused the command: \(m)"
        case .unexpectedReply(let m): "unexpected Redis reply: \(m)"
        case .unavailable(let m): "Redis is unavailable (\(m))"
        }
    }
}

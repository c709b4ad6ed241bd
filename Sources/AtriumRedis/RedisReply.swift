/// A reply of the Redis protocol (RESP2, what Debian's hiredis 0.14 and redis-server 7 speak), decoded
/// once from hiredis's `redisReply` into a value that owns its bytes.
public enum RedisReply: Equatable, Sendable {
    /// A simple string such as `OK` or `PONG`.
    case status(String)
    /// An error reply (`ERR ...`, `WRONGTYPE ...`): the server refused the command, the connection is fine.
    case error(String)
    case integer(Int64)
    /// A bulk string: binary safe.
    case bulk([UInt8])
    /// The null bulk string or null array (a missing key, a `SET NX` that did not set).
    case null
    case array([RedisReply])

    /// The text of a bulk or status reply; nil for any other kind.
    public var string: String? {
        switch self {
        case .bulk(let b): String(decoding: b, as: UTF8.self)
        case .status(let s): s
        default: nil
        }
    }

    public var integer: Int64? {
        if case .integer(let n) = self { return n }
        return nil
    }

    public var array: [RedisReply]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var isNull: Bool { self == .null }
}

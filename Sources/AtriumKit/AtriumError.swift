import AtriumProtocol

/// A refusal or a failure, with the documented code (docs/protocol.md, "Errors"): the server's own
/// (`share_locked`, `not_allowed`, `share_in_progress`, ...) or the SDK's (`disconnected`,
/// `invalid_url`, `socket_failed`, `timeout`, `bad_message`).
public struct AtriumError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String
    /// The server answered with it (an error message), rather than the SDK finding the connection or
    /// an answer failed. Not compared: two errors with the same code and message are equal.
    var fromServer = false

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    init(_ e: ErrorBody) {
        self.init(code: e.code, message: e.message)
        fromServer = true
    }

    public var description: String { "\(code): \(message)" }

    public static func == (a: AtriumError, b: AtriumError) -> Bool { a.code == b.code && a.message == b.message }

    /// The socket went away before the answer came.
    static let disconnected = AtriumError(code: "disconnected", message: "the connection closed")

    /// The server's answers that mean "try again" (docs/protocol.md, "Errors"): a cluster recovering
    /// or draining, a relay to the room's node not open yet, the room store failing for a moment, a
    /// rate.
    static let tryAgain: Set<String> = [
        "cluster_unavailable", "room_elsewhere", "bad_request", "store_unavailable", "rate_limited",
    ]
}

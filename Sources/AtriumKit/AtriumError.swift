import AtriumProtocol

/// A refusal or a failure, with the documented code (docs/protocol.md, "Errors"): the server's own
/// (`share_locked`, `not_allowed`, `share_in_progress`, ...) or the SDK's (`disconnected`,
/// `invalid_url`, `socket_failed`, `timeout`, `bad_message`).
public struct AtriumError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    init(_ e: ErrorBody) { self.init(code: e.code, message: e.message) }

    public var description: String { "\(code): \(message)" }

    /// The socket went away before the answer came.
    static let disconnected = AtriumError(code: "disconnected", message: "the connection closed")

    /// The SDK's own codes: the connection failed, not the server's judgement.
    static let sdkCodes: Set<String> = [
        "disconnected", "invalid_url", "socket_failed", "timeout", "bad_message", "already_open",
    ]

}

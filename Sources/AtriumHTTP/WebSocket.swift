/// A WebSocket connection as the application sees it. The edge owns the socket; these calls queue work
/// for the edge's service thread and must be made on it.
public protocol WebSocketConnection: AnyObject {
    /// A number unique for the process's lifetime.
    var id: UInt64 { get }
    /// Query parameters of the upgrade request.
    var query: [(name: String, value: String)] { get }
    /// Queues a text message. Returns false when the outbound queue is full (the caller decides
    /// whether to drop the client).
    @discardableResult func send(text: [UInt8]) -> Bool
    /// Sends the queued messages, then a close frame with `code` and `reason` (RFC 6455 section 7.4).
    func close(code: UInt16, reason: String)
    /// Arms (or re-arms) the connection's one timer; `seconds < 0` cancels it.
    func setTimer(seconds: Double)
}

/// Receives WebSocket events for one endpoint path.
public protocol WebSocketHandler: AnyObject {
    /// The request path this handler serves, e.g. "/v1/signal".
    var path: String { get }
    func opened(_ connection: any WebSocketConnection)
    /// A complete (reassembled) text or binary message.
    func received(_ connection: any WebSocketConnection, message: [UInt8], binary: Bool)
    func timerFired(_ connection: any WebSocketConnection)
    func closed(_ connection: any WebSocketConnection)
}

/// Standard and Atrium close codes (RFC 6455 section 7.4.1; 4000-4999 are the application's).
public enum WebSocketCloseCode {
    public static let normal: UInt16 = 1000
    public static let goingAway: UInt16 = 1001
    public static let unsupportedData: UInt16 = 1003
    public static let policyViolation: UInt16 = 1008
    public static let messageTooBig: UInt16 = 1009
    public static let unauthorized: UInt16 = 4001
    public static let forbidden: UInt16 = 4003
    public static let authTimeout: UInt16 = 4008
}

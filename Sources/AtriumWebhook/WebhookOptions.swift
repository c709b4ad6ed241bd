/// How webhooks are delivered. Time is injected (Unix milliseconds) so tests can drive it.
public struct WebhookOptions: Sendable {
    /// Seconds one attempt may take, connect to status line.
    public var timeout: Double
    public var backoff: BackoffPolicy
    public var now: @Sendable () -> Int64

    public init(timeout: Double = 5, backoff: BackoffPolicy = BackoffPolicy(), now: @escaping @Sendable () -> Int64) {
        self.timeout = timeout
        self.backoff = backoff
        self.now = now
    }
}

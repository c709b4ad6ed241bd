import Synchronization

/// The delivery counters (`atrium_webhook_*`), written by the delivery threads and read by a scrape.
public final class WebhookStats: Sendable {
    let deliveredCount = Atomic<Int>(0)
    let retriedCount = Atomic<Int>(0)
    let failedCount = Atomic<Int>(0)

    public init() {}

    /// Events an endpoint acknowledged with a 2xx.
    public var delivered: Int { deliveredCount.load(ordering: .relaxed) }
    /// Attempts that failed (an error status, a timeout, a refused connection) and were rescheduled.
    public var retried: Int { retriedCount.load(ordering: .relaxed) }
    /// Events dropped after their last attempt, or that could not be queued.
    public var failed: Int { failedCount.load(ordering: .relaxed) }

    enum Counter { case delivered, retried, failed }

    func add(_ counter: Counter) {
        switch counter {
        case .delivered: deliveredCount.add(1, ordering: .relaxed)
        case .retried: retriedCount.add(1, ordering: .relaxed)
        case .failed: failedCount.add(1, ordering: .relaxed)
        }
    }
}

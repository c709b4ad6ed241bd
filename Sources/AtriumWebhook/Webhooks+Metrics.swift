public import AtriumMetrics

extension Webhooks {
    /// Deliveries acknowledged, retried and abandoned, and the outbox's length.
    public func registerMetrics(_ metrics: MetricsRegistry) {
        metrics.counter("atrium_webhook_delivered_total", help: "Webhook events acknowledged by an endpoint.") {
            [weak self] in Double(self?.stats.delivered ?? 0)
        }
        metrics.counter("atrium_webhook_retried_total", help: "Webhook attempts that failed and were scheduled again.")
        {
            [weak self] in Double(self?.stats.retried ?? 0)
        }
        metrics.counter(
            "atrium_webhook_failed_total", help: "Webhook events abandoned after their last attempt or not queued."
        ) { [weak self] in Double(self?.stats.failed ?? 0) }
        metrics.gauge("atrium_webhook_queue_length", help: "Webhook deliveries waiting in the outbox.") {
            [weak self] in Double(self?.queueLength ?? 0)
        }
    }
}

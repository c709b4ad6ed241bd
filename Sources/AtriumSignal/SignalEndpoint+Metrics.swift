public import AtriumMetrics

extension SignalEndpoint {
    /// Signaling sessions that authenticated.
    public func registerMetrics(_ metrics: MetricsRegistry) {
        metrics.gauge("atrium_signal_sessions_authenticated", help: "Authenticated signaling sessions.") {
            [weak self] in Double(self?.authenticatedCount ?? 0)
        }
    }
}

public import AtriumMetrics

extension EdgeServer {
    /// Open connections, and those refused or closed for the edge's limits.
    public func registerMetrics(_ metrics: MetricsRegistry) {
        metrics.gauge("atrium_websocket_connections", help: "Open WebSocket connections.") { [weak self] in
            Double(self?.webSocketCount ?? 0)
        }
        metrics.gauge("atrium_http_connections", help: "Open HTTP and WebSocket connections.") { [weak self] in
            Double(self?.connectionCount ?? 0)
        }
        metrics.counter(
            "atrium_http_connections_refused_total", help: "Connections refused at accept for the connection caps."
        ) { [weak self] in Double(self?.refusedConnections ?? 0) }
        metrics.counter(
            "atrium_http_request_timeouts_total", help: "Connections closed because a request missed its deadline."
        ) { [weak self] in Double(self?.deadlineClosures ?? 0) }
    }
}

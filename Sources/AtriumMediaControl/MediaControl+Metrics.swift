public import AtriumMetrics

extension MediaWorkers {
    /// Placement as it stands, per worker: rooms placed there and transports open there. A closed
    /// room, however it closed, returns both to what they were before it.
    public func registerMetrics(_ metrics: MetricsRegistry) {
        metrics.text { [weak self] in self?.placementText() ?? "" }
    }

    func placementText() -> String {
        var out = "# HELP atrium_media_worker_rooms Rooms placed on the media worker (their home worker).\n"
        out += "# TYPE atrium_media_worker_rooms gauge\n"
        for (i, l) in placementLoads.enumerated() { out += "atrium_media_worker_rooms{worker=\"\(i)\"} \(l.rooms)\n" }
        out += "# HELP atrium_media_worker_transports Transports open on the media worker.\n"
        out += "# TYPE atrium_media_worker_transports gauge\n"
        for (i, l) in placementLoads.enumerated() {
            out += "atrium_media_worker_transports{worker=\"\(i)\"} \(l.transports)\n"
        }
        return out
    }
}

extension MediaCoordinator {
    /// Rooms the bandwidth allocator keeps a stage (the shares on screen) for.
    public func registerMetrics(_ metrics: MetricsRegistry) {
        metrics.gauge("atrium_media_allocation_rooms", help: "Rooms the bandwidth allocator keeps a stage for.") {
            [weak self] in Double(self?.stagedRooms ?? 0)
        }
    }

    package var stagedRooms: Int { stage.count }
}

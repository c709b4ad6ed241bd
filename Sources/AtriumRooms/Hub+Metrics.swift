public import AtriumMetrics

extension Hub {
    /// The live rooms of this node, their participants and their shares.
    public func registerMetrics(_ metrics: MetricsRegistry) {
        metrics.gauge("atrium_rooms_live", help: "Rooms with live state on this node.") { [weak self] in
            Double(self?.rooms.count ?? 0)
        }
        metrics.gauge("atrium_participants", help: "Participants in live rooms.") { [weak self] in
            Double(self?.participantCount ?? 0)
        }
        metrics.gauge("atrium_shares_active", help: "Screen shares running or paused.") { [weak self] in
            Double(self?.shareCount ?? 0)
        }
        metrics.gauge(
            "atrium_e2ee_tracks", help: "Tracks published in end-to-end encrypted rooms (ciphertext to the server)."
        ) { [weak self] in
            Double(self?.encryptedTrackCount ?? 0)
        }
    }
}

/// The cluster's clock constants (docs/cluster.md). A node refreshes its record and its rooms'
/// ownership every `heartbeat` seconds; both expire `expiry` seconds after the last refresh, so a node
/// that dies (kill -9, lost machine) is gone from the cluster and its rooms free within `expiry`.
public enum ClusterTiming {
    public static let heartbeat = 5.0
    public static let expiryMillis = 15_000
    /// How long a draining node (SIGTERM) waits for its clients to move before it exits anyway.
    public static let drainGrace = 30.0
}

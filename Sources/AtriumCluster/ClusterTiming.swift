/// The cluster's clock constants (docs/cluster.md). A node refreshes its record and its rooms'
/// ownership every `heartbeat` seconds; both expire `expiry` seconds after the last refresh, so a node
/// that dies (kill -9, lost machine) is gone from the cluster and its rooms free within `expiry`.
public enum ClusterTiming {
    public static let heartbeat = 5.0
    public static let expiryMillis = 15_000
    /// How long a draining node (SIGTERM) waits for its clients to move before it exits anyway.
    public static let drainGrace = 30.0
    /// While Redis is unreachable, a node tries to register again this often (seconds) instead of
    /// every `heartbeat`, so it re-registers and re-asserts its rooms at once when Redis is back.
    public static let retryBeat = 1.0
    /// After this node's Redis connection comes back (an outage, or a Redis that restarted under an
    /// idle connection), it places no room and takes none over for this many seconds: long enough for
    /// every owner to subscribe again and re-assert its rooms (each does so within about a second,
    /// prompted by its subscriber reconnecting), so no node mistakes a live owner for a dead one.
    public static let recoveryHold = 3.0
    /// A peer node whose inbox has no subscriber is taken for gone (its relayed sessions closed with
    /// `moved`) only when that lasted this many seconds with this node's own Redis connection up.
    public static let peerGrace = 1.0
}

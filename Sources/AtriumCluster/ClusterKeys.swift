public import AtriumModel

/// The Redis keys the cluster uses, all under one prefix (`atrium:` by default) so that a Redis may
/// serve other applications or several clusters. Documented in docs/cluster.md.
public struct ClusterKeys: Sendable {
    public let prefix: String

    public init(prefix: String = "atrium:") { self.prefix = prefix }

    /// Room settings: one JSON string per room.
    public func room(_ id: RoomID) -> String { prefix + "room:" + id.rawValue }
    /// A room name's id (the name's uniqueness, claimed with SET NX inside the insert script).
    public func roomName(_ name: String) -> String { prefix + "room-name:" + name }
    /// Every room id, in a sorted set of score 0 ordered by id (creation order): pages with ZRANGEBYLEX.
    public var rooms: String { prefix + "rooms" }
    /// The node owning a live room, with the owner's expiry (refreshed by its heartbeat).
    public func owner(_ id: RoomID) -> String { prefix + "room-owner:" + id.rawValue }
    /// A node's record (JSON) with the heartbeat's expiry.
    public func node(_ id: NodeID) -> String { prefix + "node:" + id.rawValue }
    /// Every node id that registered; ids whose record expired are pruned by whoever lists.
    public var nodes: String { prefix + "nodes" }
    /// The pub/sub channel a node listens on: relayed signaling and admin calls for its rooms.
    public func inbox(_ id: NodeID) -> String { prefix + "inbox:" + id.rawValue }
    /// Webhooks: the sequence every queued delivery takes its `seq` from.
    public var webhookSeq: String { prefix + "webhook-seq" }
    /// Webhooks: every endpoint that has queued deliveries (for the queue length).
    public var webhookEndpoints: String { prefix + "webhook-endpoints" }
    /// Webhooks: an endpoint's queue, a sorted set of `seq`s.
    public func webhookQueue(_ endpoint: String) -> String { prefix + "webhook-queue:" + endpoint }
    /// Webhooks: an endpoint's deliveries (a hash from `seq` to one JSON object).
    public func webhookEntries(_ endpoint: String) -> String { prefix + "webhook-entries:" + endpoint }
    /// Webhooks: the node delivering to an endpoint now, with the lease's expiry.
    public func webhookLease(_ endpoint: String) -> String { prefix + "webhook-lease:" + endpoint }
}

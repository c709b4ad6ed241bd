public import AtriumModel
public import AtriumRedis
public import AtriumRooms

/// This node's part in the cluster, on the service thread: it registers and heartbeats (every
/// `ClusterTiming.heartbeat` seconds, expiring after `expiryMillis`), answers the hub's `claim` for a
/// room (already ours, owned by a live node, or placed now on the least-loaded live node by power of
/// two choices), refreshes the ownership of its live rooms, and gives rooms up when they close.
/// Redis unreachable: a claim is `unavailable`, heartbeats fail quietly and are retried every
/// `ClusterTiming.retryBeat` seconds; when Redis is back the node re-registers and re-asserts its
/// rooms at once, and for `ClusterTiming.recoveryHold` seconds places no room and takes none over, so
/// that an owner that has not re-asserted yet is never taken for dead (docs/cluster.md).
public final class ClusterNode: RoomRouter {
    public let id: NodeID
    public let directory: ClusterDirectory
    public var info: NodeInfo
    let monotonic: () -> Double
    let now: () -> Int64
    let random: (Int) -> Int
    /// The rooms live here and the load to report, supplied by the composition root.
    public var liveRooms: () -> [RoomID] = { [] }
    public var load: () -> NodeLoad = { NodeLoad() }
    /// The rooms of other nodes whose viewers this node runs (its record's `edgeRooms`, and their sum
    /// its load's `edgeViewers`).
    public var edgeRooms: () -> [NodeInfo.EdgeRoom] = { [] }
    /// Told when a heartbeat finds this node's record gone although it beat in time (Redis restarted
    /// empty, or lost it): the owner writes its live rooms' settings back.
    public var onRecordLost: () -> Void = {}
    /// Told of live rooms another node holds now (this node was cut off longer than the expiry).
    public var onRoomsLost: ([RoomID]) -> Void = { _ in }
    /// Sends a command to the node running its room (the relay's `send`, supplied by the composition root).
    public var sendCommand: (RoomCommand, String) -> Result<[RoomEvent], HubError> = { _, node in
        .failure(.clusterUnavailable("no relay to node \(node)"))
    }
    /// The nodes as of the last heartbeat or claim.
    public private(set) var knownNodes: [NodeInfo] = []
    public private(set) var lastError: RedisError?
    private var lastBeat = -Double.infinity
    private var registered = false

    public init(
        id: NodeID, directory: ClusterDirectory, info: NodeInfo, monotonic: @escaping () -> Double,
        now: @escaping () -> Int64, random: @escaping (Int) -> Int
    ) {
        self.id = id
        self.directory = directory
        self.info = info
        self.monotonic = monotonic
        self.now = now
        self.random = random
    }

    /// Whether the last call to Redis succeeded (readiness).
    public var isConnected: Bool { lastError == nil && registered }

    /// Connected, and not within `ClusterTiming.recoveryHold` of this node's Redis connection coming
    /// back: only then may it conclude that a node which does not listen on its inbox is gone.
    public var isSettled: Bool {
        isConnected && monotonic() - directory.redis.recoveredAt >= ClusterTiming.recoveryHold
    }

    /// Draining (SIGTERM): no new rooms are placed here, and the record says so.
    public var draining: Bool {
        get { info.draining }
        set {
            info.draining = newValue
            beat(force: true)
        }
    }

    /// Called on every service tick; beats when the period has passed.
    public func tick() { beat(force: false) }

    /// Writes this node's record and refreshes its rooms' ownership.
    public func beat(force: Bool) {
        let t = monotonic()
        let period = lastError == nil ? ClusterTiming.heartbeat : ClusterTiming.retryBeat
        guard force || t - lastBeat >= period else { return }
        lastBeat = t
        info.load = load()
        let edges = edgeRooms()
        info.load.edgeViewers = edges.reduce(0) { $0 + $1.viewers }
        info.edgeRooms = Array(edges.sorted { $0.viewers > $1.viewers }.prefix(NodeInfo.maxEdgeRooms))
        info.updatedAt = now()
        do throws(RedisError) {
            let existed = try directory.register(info)
            if registered && !existed { onRecordLost() }
            registered = true
            let lost = try directory.refresh(liveRooms(), for: id)
            if !lost.isEmpty { onRoomsLost(lost) }
            knownNodes = try directory.nodes()
            lastError = nil
        } catch {
            lastError = error
        }
    }

    /// Leaves the cluster at a clean shutdown.
    public func leave() {
        try? directory.deregister(id)
        registered = false
    }

    public func claim(_ room: RoomID) -> RoomClaim {
        do throws(RedisError) {
            var dead: NodeID?
            if let owner = try directory.owner(of: room) {
                if owner == id { return .here }
                knownNodes = try directory.nodes()
                if knownNodes.contains(where: { $0.id == owner }), try directory.listening([owner]).contains(owner) {
                    return .elsewhere(node: owner.rawValue)
                }
                dead = owner
            } else {
                knownNodes = try directory.nodes()
            }
            // Just after an outage, an owner that does not listen yet may only be reconnecting, and a
            // room without an owner key may be live on a node that has not re-asserted it yet.
            let held = ClusterTiming.recoveryHold - (monotonic() - directory.redis.recoveredAt)
            if held > 0 {
                return .unavailable("it was away until just now; rooms are placed again in \(Int(held.rounded(.up))) s")
            }
            let candidates = knownNodes.filter { $0.id != dead && ($0.id != id || !info.draining) }
            if let dead {
                // The owner was killed: place the room again, unless another node did so first.
                let target = Placement.choose(among: candidates, random: random) ?? id
                let winner = try directory.takeOver(room, from: dead, for: target) ?? target
                lastError = nil
                if winner == dead { return .unavailable("the room's node \(dead) stopped answering") }
                return winner == id ? .here : .elsewhere(node: winner.rawValue)
            }
            guard let target = Placement.choose(among: candidates, random: random) else {
                if info.draining { return .unavailable("this node is draining and no other node is live") }
                // Not registered yet (or Redis lost our record): run it here.
                let winner = try directory.claim(room, for: id)
                return winner == id ? .here : .elsewhere(node: winner.rawValue)
            }
            let winner = try directory.claim(room, for: target)
            lastError = nil
            return winner == id ? .here : .elsewhere(node: winner.rawValue)
        } catch {
            lastError = error
            return .unavailable(error.description)
        }
    }

    /// The other node running a room, if it still listens: a killed owner is no owner (a resume then
    /// fails as `resume_failed`, and an admin call is answered here).
    public func owner(of room: RoomID) -> String? {
        guard let owner = try? directory.owner(of: room), owner != id,
            (try? directory.listening([owner]))?.contains(owner) == true
        else { return nil }
        return owner.rawValue
    }

    public func send(_ command: RoomCommand, to node: String) -> Result<[RoomEvent], HubError> {
        sendCommand(command, node)
    }

    public func released(_ room: RoomID) {
        try? directory.release(room, by: id)
    }

    /// The URL of a known node (for redirects and logs).
    public func node(_ id: String) -> NodeInfo? { knownNodes.first { $0.id.rawValue == id } }
}

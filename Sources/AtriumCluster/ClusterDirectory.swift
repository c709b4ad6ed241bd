import AtriumJSON
public import AtriumModel
public import AtriumRedis

/// The cluster's shared records in Redis: node registrations and room ownership. Every call is one
/// round trip (or one Lua script, where a read decides a write) on the caller's `RedisClient`.
public final class ClusterDirectory {
    let redis: RedisClient
    public let keys: ClusterKeys

    public init(redis: RedisClient, keys: ClusterKeys) {
        self.redis = redis
        self.keys = keys
    }

    // MARK: - Nodes

    /// Writes this node's record with the heartbeat's expiry; returns whether a record was there
    /// before (false on the first beat, or when Redis lost it).
    @discardableResult
    public func register(_ info: NodeInfo) throws(RedisError) -> Bool {
        let old = try redis.run([
            "SET", keys.node(info.id), info.json.serialized(), "PX", String(ClusterTiming.expiryMillis), "GET",
        ])
        try redis.run(["SADD", keys.nodes, info.id.rawValue])
        return !old.isNull
    }

    /// Removes this node's record at once (a clean shutdown), so nobody places a room on it.
    public func deregister(_ id: NodeID) throws(RedisError) {
        try redis.run(["DEL", keys.node(id)])
        try redis.run(["SREM", keys.nodes, id.rawValue])
    }

    /// The nodes whose heartbeat has not expired, in id order. Ids whose record expired are pruned.
    public func nodes() throws(RedisError) -> [NodeInfo] {
        let ids = (try redis.run(["SMEMBERS", keys.nodes]).array ?? []).compactMap(\.string).filter(NodeID.isValid)
        guard !ids.isEmpty else { return [] }
        let records = try redis.run(["MGET"] + ids.map { keys.node(NodeID($0)) }).array ?? []
        var out: [NodeInfo] = []
        var dead: [String] = []
        for (id, record) in zip(ids, records) {
            guard case .bulk(let bytes) = record, let v = try? JSONParser.parse(bytes), let info = NodeInfo(json: v)
            else {
                dead.append(id)
                continue
            }
            out.append(info)
        }
        if !dead.isEmpty { try redis.run(["SREM", keys.nodes] + dead) }
        return out.sorted { $0.id < $1.id }
    }

    // MARK: - Room ownership

    /// Claims a room for `node` unless a live node owns it; returns the owner after the call. An owner
    /// whose node record expired is replaced in the same script (its rooms are free).
    static let claimScript = """
        local cur = redis.call('GET', KEYS[1])
        if cur and cur ~= ARGV[1] and redis.call('EXISTS', ARGV[3] .. cur) == 1 then return cur end
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        return ARGV[1]
        """

    public func claim(_ room: RoomID, for node: NodeID) throws(RedisError) -> NodeID {
        let reply = try redis.eval(
            Self.claimScript, keys: [keys.owner(room)],
            args: [node.rawValue, String(ClusterTiming.expiryMillis), keys.node(NodeID(""))])
        guard let owner = reply.string, NodeID.isValid(owner) else {
            throw .unexpectedReply("claim answered \(reply)")
        }
        return NodeID(owner)
    }

    /// The node owning a live room, if any.
    public func owner(of room: RoomID) throws(RedisError) -> NodeID? {
        guard let s = try redis.run(["GET", keys.owner(room)]).string, NodeID.isValid(s) else { return nil }
        return NodeID(s)
    }

    /// Refreshes the expiry of the rooms `node` runs, re-claiming any whose key vanished (a Redis that
    /// restarted empty). Returns the rooms another node holds now: this node lost them.
    static let refreshScript = """
        local lost = {}
        for i, key in ipairs(KEYS) do
          local cur = redis.call('GET', key)
          if cur == ARGV[1] then redis.call('PEXPIRE', key, ARGV[2])
          elseif not cur then redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
          else table.insert(lost, i) end
        end
        return lost
        """

    public func refresh(_ rooms: [RoomID], for node: NodeID) throws(RedisError) -> [RoomID] {
        guard !rooms.isEmpty else { return [] }
        let reply = try redis.eval(
            Self.refreshScript, keys: rooms.map(keys.owner), args: [node.rawValue, String(ClusterTiming.expiryMillis)])
        return (reply.array ?? []).compactMap { r in
            guard let i = r.integer, i >= 1, i <= Int64(rooms.count) else { return nil }
            return rooms[Int(i) - 1]
        }
    }

    /// Takes a room over from an owner that stopped listening (killed: its record has not expired yet,
    /// but its inbox has no subscriber), if that owner still holds it.
    static let takeOverScript = """
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.call('GET', KEYS[1]) end
        redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
        return ARGV[2]
        """

    public func takeOver(_ room: RoomID, from dead: NodeID, for node: NodeID) throws(RedisError) -> NodeID? {
        let reply = try redis.eval(
            Self.takeOverScript, keys: [keys.owner(room)],
            args: [dead.rawValue, node.rawValue, String(ClusterTiming.expiryMillis)])
        guard let owner = reply.string, NodeID.isValid(owner) else { return nil }
        return NodeID(owner)
    }

    /// Which of these nodes listen on their inbox now. A node killed with SIGKILL stops listening at
    /// once (Redis sees its connection close), long before its record expires.
    public func listening(_ nodes: [NodeID]) throws(RedisError) -> Set<NodeID> {
        guard !nodes.isEmpty else { return [] }
        let reply = try redis.run(["PUBSUB", "NUMSUB"] + nodes.map { keys.inbox($0) })
        let flat = reply.array ?? []
        var out: Set<NodeID> = []
        for (i, n) in nodes.enumerated() where 2 * i + 1 < flat.count {
            if let count = flat[2 * i + 1].integer, count > 0 { out.insert(n) }
        }
        return out
    }

    /// Gives a room up if `node` still owns it.
    static let releaseScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """

    public func release(_ room: RoomID, by node: NodeID) throws(RedisError) {
        try redis.eval(Self.releaseScript, keys: [keys.owner(room)], args: [node.rawValue])
    }
}

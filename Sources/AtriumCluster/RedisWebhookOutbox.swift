import AtriumJSON
public import AtriumModel
public import AtriumRedis
public import AtriumStore
import AtriumSync

/// The webhook outbox of a cluster, in Redis (docs/webhooks.md, "In a cluster"): every node appends the
/// events of the rooms it runs to one queue per endpoint (a sorted set of `seq`s from one shared
/// sequence, and a hash of the entries), and one node at a time delivers each endpoint's queue: the
/// holder of the endpoint's lease, which it renews every time it reads the queue. When the holder
/// dies (or leaves) its lease expires and the next node to poll takes the queue over, what was in
/// flight included (at least once, as on one node). So no event is lost with a node, none is sent by
/// two nodes, and the order per room holds across nodes. One instance per thread (each has its own
/// Redis connection); the instances of a node share a `WebhookSpill`, where events wait in memory
/// while Redis is unreachable, to be written, in order, by the first delivery thread that polls
/// after it is back.
public final class RedisWebhookOutbox: WebhookOutbox, @unchecked Sendable {
    // @unchecked: each instance is used by one thread; what they share is in `spill`, behind a lock.
    let redis: RedisClient
    let keys: ClusterKeys
    let node: NodeID
    let spill: WebhookSpill
    let leaseMillis: Int
    /// The entries the last `pending` returned, by `seq` (remove and reschedule name only the seq).
    private var known: [Int64: OutboxEntry] = [:]

    public init(
        url: RedisURL, keys: ClusterKeys, node: NodeID, spill: WebhookSpill, leaseMillis: Int,
        monotonic: @escaping () -> Double
    ) {
        self.redis = RedisClient(url: url, monotonic: monotonic)
        self.keys = keys
        self.node = node
        self.spill = spill
        self.leaseMillis = leaseMillis
    }

    /// A node that does not hold an endpoint's lease polls again this often, and so does the holder,
    /// for the events other nodes queue (they cannot wake its thread).
    public var pollSeconds: Double { 1 }

    static let enqueueScript = """
        local p = ARGV[1]
        for i = 2, #ARGV, 2 do
          local seq = redis.call('INCR', p .. 'webhook-seq')
          redis.call('HSET', p .. 'webhook-entries:' .. ARGV[i], seq, ARGV[i + 1])
          redis.call('ZADD', p .. 'webhook-queue:' .. ARGV[i], seq, seq)
          redis.call('SADD', p .. 'webhook-endpoints', ARGV[i])
        end
        return 1
        """

    public func enqueue(_ entries: [OutboxEntry]) throws(StoreError) {
        guard !entries.isEmpty else { return }
        switch spill.queueBehind(entries) {
        case .queued: return
        case .full: throw .unavailable("Redis is unreachable and \(WebhookSpill.capacity) events wait already")
        case .direct: break
        }
        do throws(StoreError) { try write(entries) } catch {
            guard case .unavailable = error else { throw error }
            if !spill.keep(entries) {
                throw .unavailable("Redis is unreachable and \(WebhookSpill.capacity) events wait already")
            }
        }
    }

    func write(_ entries: [OutboxEntry]) throws(StoreError) {
        var args = [keys.prefix]
        for e in entries {
            let json: JSONValue = .object([
                "room": .string(e.room), "id": .string(e.eventID), "body": .string(e.body),
                "attempts": .int(Int64(e.attempts)), "next": .int(e.nextAttemptAt),
            ])
            args += [e.endpoint, json.serialized()]
        }
        try eval(Self.enqueueScript, keys: [], args: args)
    }

    /// Writes what waited in memory during an outage, oldest first.
    func flushSpill() {
        guard let waiting = spill.beginFlush() else { return }
        var ok = true
        do throws(StoreError) { try write(waiting) } catch { ok = false }
        spill.endFlush(waiting, written: ok)
    }

    static let pendingScript = """
        local holder = redis.call('GET', KEYS[1])
        if holder and holder ~= ARGV[1] then return false end
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        local ids = redis.call('ZRANGE', KEYS[2], 0, tonumber(ARGV[3]) - 1)
        if #ids == 0 then return {} end
        local vals = redis.call('HMGET', KEYS[3], unpack(ids))
        local out = {}
        for i, id in ipairs(ids) do
          out[2 * i - 1] = id
          out[2 * i] = vals[i] or ''
        end
        return out
        """

    /// The endpoint's oldest entries if this node holds (or now takes) its lease; none otherwise.
    public func pending(endpoint: String, limit: Int) throws(StoreError) -> [OutboxEntry] {
        flushSpill()
        let reply = try eval(
            Self.pendingScript,
            keys: [keys.webhookLease(endpoint), keys.webhookQueue(endpoint), keys.webhookEntries(endpoint)],
            args: [node.rawValue, String(leaseMillis), String(max(1, limit))])
        let flat = reply.array ?? []
        var out: [OutboxEntry] = []
        known = [:]
        var i = 0
        while i + 1 < flat.count {
            defer { i += 2 }
            guard let seqText = flat[i].string, let seq = Int64(seqText), case .bulk(let bytes) = flat[i + 1],
                let v = try? JSONParser.parse(bytes), let room = v["room"]?.stringValue, let id = v["id"]?.stringValue,
                let body = v["body"]?.stringValue
            else { continue }
            let e = OutboxEntry(
                seq: seq, endpoint: endpoint, room: room, eventID: id, body: body,
                attempts: Int(clamping: v["attempts"]?.int64Value ?? 0), nextAttemptAt: v["next"]?.int64Value ?? 0)
            known[seq] = e
            out.append(e)
        }
        return out
    }

    /// Both scripts after an attempt renew the lease of its holder too, so that a holder working
    /// through many due entries keeps it (each attempt is bounded by the webhook timeout).
    static let removeScript = """
        if redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
        redis.call('ZREM', KEYS[1], ARGV[1])
        return redis.call('HDEL', KEYS[2], ARGV[1])
        """

    public func remove(seq: Int64) throws(StoreError) {
        guard let e = known.removeValue(forKey: seq) else { return }
        try eval(
            Self.removeScript,
            keys: [keys.webhookQueue(e.endpoint), keys.webhookEntries(e.endpoint), keys.webhookLease(e.endpoint)],
            args: [String(seq), node.rawValue, String(leaseMillis)])
    }

    static let rescheduleScript = """
        if redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
        if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
        return redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
        """

    public func reschedule(seq: Int64, attempts: Int, nextAttemptAt: Int64) throws(StoreError) {
        guard var e = known[seq] else { return }
        e.attempts = attempts
        e.nextAttemptAt = nextAttemptAt
        known[seq] = e
        let json: JSONValue = .object([
            "room": .string(e.room), "id": .string(e.eventID), "body": .string(e.body),
            "attempts": .int(Int64(attempts)), "next": .int(nextAttemptAt),
        ])
        try eval(
            Self.rescheduleScript,
            keys: [keys.webhookQueue(e.endpoint), keys.webhookEntries(e.endpoint), keys.webhookLease(e.endpoint)],
            args: [String(seq), node.rawValue, String(leaseMillis), json.serialized()])
    }

    static let releaseScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """

    /// Gives up this node's leases (a clean shutdown, after its delivery threads stopped), so another
    /// node takes the queues over at its next read instead of after the lease's expiry.
    public func release(endpoints: [String]) {
        for e in endpoints {
            _ = try? eval(Self.releaseScript, keys: [keys.webhookLease(e)], args: [node.rawValue])
        }
    }

    /// Deliveries waiting cluster-wide, every endpoint, and what waits here for Redis.
    public func count() throws(StoreError) -> Int {
        let endpoints = (try run(["SMEMBERS", keys.webhookEndpoints]).array ?? []).compactMap(\.string)
        var n = spill.count
        for e in endpoints { n += Int(clamping: try run(["ZCARD", keys.webhookQueue(e)]).integer ?? 0) }
        return n
    }

    @discardableResult
    func run(_ args: [String]) throws(StoreError) -> RedisReply {
        do throws(RedisError) { return try redis.run(args) } catch { throw RedisRoomStore.map(error) }
    }

    @discardableResult
    func eval(_ script: String, keys: [String], args: [String]) throws(StoreError) -> RedisReply {
        do throws(RedisError) { return try redis.eval(script, keys: keys, args: args) } catch {
            throw RedisRoomStore.map(error)
        }
    }
}

/// Webhook events a node could not write to Redis (an outage), shared by the node's outbox instances:
/// the service thread appends, a delivery thread writes them when Redis is back. While any wait (or
/// are being written), new events queue behind them, so the order is kept. At most `capacity` entries.
public final class WebhookSpill: Sendable {
    public static let capacity = 10_000

    enum Admission { case direct, queued, full }

    private let state = Locked<(entries: [OutboxEntry], flushing: Bool)>(([], false))

    public init() {}

    var count: Int { state.withLock { $0.entries.count } }

    /// Queues `entries` behind the ones waiting, or says to write them straight away.
    func queueBehind(_ entries: [OutboxEntry]) -> Admission {
        state.withLock { s in
            guard s.flushing || !s.entries.isEmpty else { return .direct }
            guard s.entries.count + entries.count <= Self.capacity else { return .full }
            s.entries += entries
            return .queued
        }
    }

    /// Keeps entries Redis did not take; false when they do not fit.
    func keep(_ entries: [OutboxEntry]) -> Bool {
        state.withLock { s in
            guard s.entries.count + entries.count <= Self.capacity else { return false }
            s.entries += entries
            return true
        }
    }

    /// Takes what waits for one write (nil when nothing does, or another thread writes now).
    func beginFlush() -> [OutboxEntry]? {
        state.withLock { s in
            guard !s.flushing, !s.entries.isEmpty else { return nil }
            s.flushing = true
            defer { s.entries = [] }
            return s.entries
        }
    }

    /// Ends a write: entries that were not written go back in front of those queued meanwhile.
    func endFlush(_ entries: [OutboxEntry], written: Bool) {
        state.withLock { s in
            if !written { s.entries = entries + s.entries }
            s.flushing = false
        }
    }
}

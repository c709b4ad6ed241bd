import AtriumJSON
public import AtriumModel
public import AtriumRedis

/// Room settings in Redis, shared by every node of a cluster (`--redis`), behind the same `RoomStore`
/// protocol as SQLite. One JSON string per room (`RoomRecord`), a name index, and a sorted set of ids
/// for pages in creation order. Every write that reads first (a name taken, a rename) is one Lua script,
/// so two nodes racing for a name cannot both win. Called from the service thread; a Redis that does
/// not answer is `StoreError.unavailable` (503 `cluster_unavailable`).
public final class RedisRoomStore: RoomStore {
    let redis: RedisClient
    let keys: ClusterKeys
    private var closed = false

    public init(redis: RedisClient, keys: ClusterKeys) {
        self.redis = redis
        self.keys = keys
    }

    static let insertScript = """
        if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
        if ARGV[3] == '1' and not redis.call('SET', KEYS[2], ARGV[2], 'NX') then return 'duplicate' end
        redis.call('SET', KEYS[1], ARGV[1])
        redis.call('ZADD', KEYS[3], 0, ARGV[2])
        return 'ok'
        """

    static let updateScript = """
        local cur = redis.call('GET', KEYS[1])
        if not cur then return 'missing' end
        local old = cjson.decode(cur).name
        if type(old) ~= 'string' then old = nil end
        local new = nil
        if ARGV[3] == '1' then new = ARGV[4] end
        if new ~= old then
          if new then
            local holder = redis.call('GET', ARGV[5] .. new)
            if holder and holder ~= ARGV[2] then return 'duplicate' end
            redis.call('SET', ARGV[5] .. new, ARGV[2])
          end
          if old and redis.call('GET', ARGV[5] .. old) == ARGV[2] then redis.call('DEL', ARGV[5] .. old) end
        end
        redis.call('SET', KEYS[1], ARGV[1])
        return 'ok'
        """

    static let deleteScript = """
        local cur = redis.call('GET', KEYS[1])
        redis.call('ZREM', KEYS[2], ARGV[1])
        if not cur then return 0 end
        local old = cjson.decode(cur).name
        if type(old) == 'string' and redis.call('GET', ARGV[2] .. old) == ARGV[1] then
          redis.call('DEL', ARGV[2] .. old)
        end
        redis.call('DEL', KEYS[1])
        return 1
        """

    public func insert(_ room: Room) throws(StoreError) {
        let json = RoomRecord.encode(room).serialized()
        let result = try eval(
            Self.insertScript, keys: [keys.room(room.id), keys.roomName(room.name ?? ""), keys.rooms],
            args: [json, room.id.rawValue, room.name == nil ? "0" : "1"])
        switch result.string {
        case "ok": return
        case "duplicate": throw .duplicateName(room.name ?? "")
        case "exists": throw .backend("room \(room.id) already exists")
        default: throw .backend("unexpected reply to insert: \(result)")
        }
    }

    public func room(id: RoomID) throws(StoreError) -> Room? {
        let reply = try run(["GET", keys.room(id)])
        return try decode(reply)
    }

    public func room(name: String) throws(StoreError) -> Room? {
        let id = try run(["GET", keys.roomName(name)])
        guard let text = id.string, RoomID.isWellFormed(text) else { return nil }
        guard let room = try room(id: RoomID(text)), room.name == name else { return nil }
        return room
    }

    public func list(after cursor: RoomID?, limit: Int) throws(StoreError) -> [Room] {
        guard limit > 0 else { return [] }
        let start = cursor.map { "(" + $0.rawValue } ?? "-"
        let ids = try run(["ZRANGEBYLEX", keys.rooms, start, "+", "LIMIT", "0", String(limit)])
        let names = (ids.array ?? []).compactMap { $0.string }.filter { RoomID.isWellFormed($0) }.map { RoomID($0) }
        guard !names.isEmpty else { return [] }
        let values = try run(["MGET"] + names.map { keys.room($0) })
        var out: [Room] = []
        for v in values.array ?? [] { if let r = try decode(v) { out.append(r) } }
        return out
    }

    public func update(_ room: Room) throws(StoreError) {
        let json = RoomRecord.encode(room).serialized()
        let result = try eval(
            Self.updateScript, keys: [keys.room(room.id)],
            args: [json, room.id.rawValue, room.name == nil ? "0" : "1", room.name ?? "", keys.roomName("")])
        switch result.string {
        case "ok": return
        case "missing": throw .notFound(room.id)
        case "duplicate": throw .duplicateName(room.name ?? "")
        default: throw .backend("unexpected reply to update: \(result)")
        }
    }

    public func delete(id: RoomID) throws(StoreError) -> Bool {
        let result = try eval(
            Self.deleteScript, keys: [keys.room(id), keys.rooms], args: [id.rawValue, keys.roomName("")])
        return result.integer == 1
    }

    public func count() throws(StoreError) -> Int {
        let n = try run(["ZCARD", keys.rooms])
        return Int(clamping: n.integer ?? 0)
    }

    public func ping() throws(StoreError) {
        _ = try run(["PING"])
    }

    public func close() {
        closed = true
        redis.close()
    }

    private func decode(_ reply: RedisReply) throws(StoreError) -> Room? {
        switch reply {
        case .null: return nil
        case .bulk(let bytes):
            guard let room = RoomRecord.decode(bytes) else { throw .backend("a stored room is not readable") }
            return room
        default: throw .backend("unexpected reply \(reply)")
        }
    }

    /// Runs a command, mapping its failure to the store's errors.
    func run(_ args: [String]) throws(StoreError) -> RedisReply {
        if closed { throw .backend("store is closed") }
        do throws(RedisError) { return try redis.run(args) } catch { throw Self.map(error) }
    }

    func eval(_ script: String, keys: [String], args: [String]) throws(StoreError) -> RedisReply {
        if closed { throw .backend("store is closed") }
        do throws(RedisError) { return try redis.eval(script, keys: keys, args: args) } catch { throw Self.map(error) }
    }

    static func map(_ error: RedisError) -> StoreError {
        error.isConnectionFailure ? .unavailable(error.description) : .backend(error.description)
    }
}

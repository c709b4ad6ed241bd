import AtriumModel
import AtriumStore
import Testing

@testable import AtriumCluster
@testable import AtriumRedis

/// The Redis room store against a real redis-server: the same contract as SQLite and memory, two
/// nodes (two clients) sharing one Redis, and an outage as `unavailable`.
@Suite(.enabled(if: LiveRedis.available, "redis-server is not installed"), .serialized)
struct RedisRoomStoreTests {
    @Test func sameContractAsTheOtherStores() throws {
        let redis = try LiveRedis()
        try StoreTests.roundTrip(
            RedisRoomStore(redis: RedisClient(url: redis.url, monotonic: { 0 }), keys: ClusterKeys()))
    }

    @Test func twoNodesShareRoomsAndNames() throws {
        let redis = try LiveRedis()
        let one = RedisRoomStore(redis: RedisClient(url: redis.url, monotonic: { 0 }), keys: ClusterKeys())
        let two = RedisRoomStore(redis: RedisClient(url: redis.url, monotonic: { 0 }), keys: ClusterKeys())
        let a = sampleRoom(1, name: "standup")
        try one.insert(a)
        #expect(try two.room(name: "standup") == a)
        #expect(try two.list(after: nil, limit: 5) == [a])
        #expect(throws: StoreError.duplicateName("standup")) { try two.insert(sampleRoom(2, name: "standup")) }
        var renamed = a
        renamed.name = "retro"
        try two.update(renamed)
        #expect(try one.room(name: "standup") == nil)
        #expect(try one.room(name: "retro") == renamed)
        // The old name is free again.
        try one.insert(sampleRoom(3, name: "standup"))
        #expect(try two.count() == 2)
    }

    @Test func prefixesSeparateClusters() throws {
        let redis = try LiveRedis()
        let one = RedisRoomStore(redis: RedisClient(url: redis.url, monotonic: { 0 }), keys: ClusterKeys(prefix: "a:"))
        let two = RedisRoomStore(redis: RedisClient(url: redis.url, monotonic: { 0 }), keys: ClusterKeys(prefix: "b:"))
        try one.insert(sampleRoom(1, name: "x"))
        try two.insert(sampleRoom(1, name: "x"))
        #expect(try one.count() == 1 && two.count() == 1)
    }

    @Test func anUnreachableRedisIsUnavailable() throws {
        let redis = try LiveRedis()
        let store = RedisRoomStore(redis: RedisClient(url: redis.url, monotonic: { 0 }), keys: ClusterKeys())
        try store.insert(sampleRoom(1))
        redis.stop()
        #expect { try store.room(id: sampleRoom(1).id) } throws: { e in
            if case .unavailable = e as? StoreError { return true }
            return false
        }
    }

    @Test func anUnreadableRecordIsABackendError() throws {
        let redis = try LiveRedis()
        let client = RedisClient(url: redis.url, monotonic: { 0 })
        let store = RedisRoomStore(redis: client, keys: ClusterKeys())
        let id = sampleRoom(1).id
        try client.run(["SET", ClusterKeys().room(id), "{not json"])
        #expect { try store.room(id: id) } throws: { e in
            if case .backend = e as? StoreError { return true }
            return false
        }
    }
}

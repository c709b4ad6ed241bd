import AtriumModel
import AtriumStore
import Foundation
import Testing

@testable import AtriumCluster
@testable import AtriumRedis

/// The cluster's webhook outbox against a real `redis-server`: one queue per endpoint shared by the
/// nodes, delivered by the one node holding the endpoint's lease, taken over when that lease expires,
/// and events kept in memory through an outage.
@Suite(.enabled(if: LiveRedis.available, "redis-server is not installed"), .serialized)
struct RedisWebhookOutboxTests {
    static func outbox(_ redis: LiveRedis, _ node: String, lease: Int = 60_000, spill: WebhookSpill = WebhookSpill())
        -> RedisWebhookOutbox
    {
        RedisWebhookOutbox(
            url: redis.url, keys: ClusterKeys(), node: NodeID(node), spill: spill, leaseMillis: lease,
            monotonic: { ProcessInfo.processInfo.systemUptime })
    }

    static func entry(_ room: String, _ id: String, endpoint: String = "http://127.0.0.1:9/h") -> OutboxEntry {
        OutboxEntry(endpoint: endpoint, room: room, eventID: id, body: #"{"id":"\#(id)"}"#)
    }

    @Test func twoNodesQueueOneHolderDeliversInOrder() throws {
        let redis = try LiveRedis()
        let one = Self.outbox(redis, "n1"), two = Self.outbox(redis, "n2")
        let ep = "http://127.0.0.1:9/h"
        try one.enqueue([Self.entry("r1", "e1"), Self.entry("r1", "e1", endpoint: "http://127.0.0.1:9/other")])
        try two.enqueue([Self.entry("r1", "e2")])
        try one.enqueue([Self.entry("r2", "e3")])
        #expect(try one.count() == 4)
        // n1 takes the lease at its first read; n2 delivers nothing meanwhile.
        let got = try one.pending(endpoint: ep, limit: 10)
        #expect(got.map(\.eventID) == ["e1", "e2", "e3"])
        #expect(got.map(\.seq) == got.map(\.seq).sorted())
        #expect(try two.pending(endpoint: ep, limit: 10).isEmpty)
        // The other endpoint has a lease of its own.
        #expect(try two.pending(endpoint: "http://127.0.0.1:9/other", limit: 10).map(\.eventID) == ["e1"])
        try one.reschedule(seq: got[0].seq, attempts: 1, nextAttemptAt: 1234)
        try one.remove(seq: got[1].seq)
        let again = try one.pending(endpoint: ep, limit: 10)
        #expect(again.map(\.eventID) == ["e1", "e3"])
        #expect(again[0].attempts == 1 && again[0].nextAttemptAt == 1234 && again[0].body == #"{"id":"e1"}"#)
        #expect(try two.count() == 3)
        // Each outcome the holder records renews its lease.
        let raw = RedisClient(url: redis.url, monotonic: { 0 })
        let lease = ClusterKeys().webhookLease(ep)
        try raw.run(["PEXPIRE", lease, "5000"])
        try one.remove(seq: again[1].seq)
        #expect((try raw.run(["PTTL", lease]).integer ?? 0) > 5000)
    }

    @Test func aHolderThatStopsPollingLosesTheQueueToTheNextNode() throws {
        let redis = try LiveRedis()
        let one = Self.outbox(redis, "n1", lease: 200), two = Self.outbox(redis, "n2", lease: 200)
        let ep = "http://127.0.0.1:9/h"
        try one.enqueue([Self.entry("r1", "e1"), Self.entry("r1", "e2")])
        #expect(try one.pending(endpoint: ep, limit: 10).count == 2)
        #expect(try two.pending(endpoint: ep, limit: 10).isEmpty)
        // n1 dies with e1 in flight: once its lease expires n2 takes both over.
        try waitFor { (try? two.pending(endpoint: ep, limit: 10))?.map(\.eventID) == ["e1", "e2"] }
        #expect(try one.pending(endpoint: ep, limit: 10).isEmpty)
    }

    @Test func aHolderThatReleasesItsLeaseHandsTheQueueOverAtOnce() throws {
        let redis = try LiveRedis()
        let one = Self.outbox(redis, "n1"), two = Self.outbox(redis, "n2")
        let ep = "http://127.0.0.1:9/h"
        try one.enqueue([Self.entry("r1", "e1")])
        #expect(try one.pending(endpoint: ep, limit: 10).count == 1)
        #expect(try two.pending(endpoint: ep, limit: 10).isEmpty)
        two.release(endpoints: [ep])  // not its lease: nothing changes
        #expect(try two.pending(endpoint: ep, limit: 10).isEmpty)
        one.release(endpoints: [ep])
        #expect(try two.pending(endpoint: ep, limit: 10).map(\.eventID) == ["e1"])
    }

    @Test func eventsQueuedInAnOutageWaitInMemoryAndAreWrittenInOrderAfter() throws {
        let redis = try LiveRedis()
        let spill = WebhookSpill()
        let service = Self.outbox(redis, "n1", spill: spill), delivery = Self.outbox(redis, "n1", spill: spill)
        let ep = "http://127.0.0.1:9/h"
        try service.enqueue([Self.entry("r1", "e1")])
        redis.stop()
        try service.enqueue([Self.entry("r1", "e2")])
        try service.enqueue([Self.entry("r1", "e3")])
        #expect(spill.count == 2)
        #expect(throws: StoreError.self) { try delivery.pending(endpoint: ep, limit: 10) }
        #expect(spill.count == 2)
        try redis.start()
        // Redis came back empty (no persistence): what waited in memory is written first, in order.
        try waitFor { (try? delivery.pending(endpoint: ep, limit: 10))?.map(\.eventID) == ["e2", "e3"] }
        #expect(spill.count == 0)
        try service.enqueue([Self.entry("r1", "e4")])
        #expect(try delivery.pending(endpoint: ep, limit: 10).map(\.eventID) == ["e2", "e3", "e4"])
    }

    @Test func theSpillRefusesPastItsCapacity() {
        let spill = WebhookSpill()
        let many = Array(repeating: Self.entry("r", "e"), count: WebhookSpill.capacity)
        #expect(spill.keep(many))
        #expect(!spill.keep([Self.entry("r", "e")]))
        #expect(spill.queueBehind([Self.entry("r", "e")]) == .full)
    }
}

import Foundation
import Testing

@testable import AtriumRedis

@Suite struct RedisURLTests {
    @Test(arguments: [
        ("redis://127.0.0.1:6379", RedisURL(host: "127.0.0.1", port: 6379)),
        ("redis://localhost", RedisURL(host: "localhost")),
        ("redis://:s3cret@127.0.0.1:7000/2", RedisURL(host: "127.0.0.1", port: 7000, password: "s3cret", database: 2)),
        ("redis://user:pw@10.0.0.1:6380/", RedisURL(host: "10.0.0.1", port: 6380, password: "pw")),
        ("redis://[::1]:6390", RedisURL(host: "::1", port: 6390)),
        (
            "rediss://:pw@redis.internal:6380/1",
            RedisURL(host: "redis.internal", port: 6380, password: "pw", database: 1, tls: true)
        ),
        ("rediss://127.0.0.1", RedisURL(host: "127.0.0.1", tls: true)),
    ])
    func parses(text: String, expected: RedisURL) throws {
        #expect(try RedisURL(parsing: text) == expected)
    }

    @Test(arguments: [
        "http://127.0.0.1:6379", "redis+tls://127.0.0.1", "rediss://", "redis://", "redis://h:0", "redis://h:70000",
        "redis://h:x",
        "redis://h/16", "redis://[::1", "redis://:pw@",
    ])
    func refuses(text: String) {
        #expect(throws: RedisError.self) { try RedisURL(parsing: text) }
    }

    @Test func descriptionHidesThePassword() throws {
        #expect(try RedisURL(parsing: "redis://:pw@127.0.0.1:7000/3").description == "redis://127.0.0.1:7000/3")
        #expect(try RedisURL(parsing: "rediss://:pw@r.internal:6380").description == "rediss://r.internal:6380")
    }
}

/// Against a real redis-server on 127.0.0.1 (LiveRedis).
@Suite(.enabled(if: LiveRedis.available, "redis-server is not installed"), .serialized)
struct RedisClientTests {
    @Test func typedReplies() throws {
        let redis = try LiveRedis()
        let c = RedisClient(url: redis.url, monotonic: { 0 })
        #expect(try c.run(["PING"]) == .status("PONG"))
        #expect(try c.run(["SET", "k", "v"]) == .status("OK"))
        #expect(try c.run(["GET", "k"]).string == "v")
        #expect(try c.run(["GET", "missing"]) == .null)
        #expect(try c.run(["INCRBY", "n", "41"]) == .integer(41))
        #expect(try c.run(["SET", "k", "w", "NX"]) == .null)
        #expect(try c.run(["RPUSH", "l", "a", "b"]) == .integer(2))
        #expect(try c.run(["LRANGE", "l", "0", "-1"]) == .array([.bulk(Array("a".utf8)), .bulk(Array("b".utf8))]))
        let binary: [UInt8] = [0, 255, 10, 13, 0]
        try c.run(bytes: [Array("SET".utf8), Array("b".utf8), binary])
        #expect(try c.run(["GET", "b"]) == .bulk(binary))
        #expect(try c.run(["GET", "empty"]) == .null)
        try c.run(["SET", "empty", ""])
        #expect(try c.run(["GET", "empty"]) == .bulk([]))
    }

    @Test func errorRepliesAreValuesAndKeepTheConnection() throws {
        let redis = try LiveRedis()
        let c = RedisClient(url: redis.url, monotonic: { 0 })
        try c.run(["SET", "k", "v"])
        #expect {
            try c.run(["INCR", "k"])
        } throws: { e in
            guard case .server(let m) = e as? RedisError else { return false }
            return m.hasPrefix("ERR")
        }
        #expect { try c.run(["NOSUCHCOMMAND"]) } throws: { ($0 as? RedisError)?.isConnectionFailure == false }
        #expect(c.isAvailable)
        #expect(try c.run(["GET", "k"]).string == "v")
    }

    @Test func scriptsLoadOnceAndSurviveAFlush() throws {
        let redis = try LiveRedis()
        let c = RedisClient(url: redis.url, monotonic: { 0 })
        let script = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
        #expect(try c.eval(script, keys: ["n"], args: ["2"]) == .integer(2))
        try c.run(["SCRIPT", "FLUSH"])
        #expect(try c.eval(script, keys: ["n"], args: ["3"]) == .integer(5))
    }

    @Test func aCommandPastItsTimeoutFailsAndTheClientReconnects() throws {
        let redis = try LiveRedis()
        var timeouts = RedisClient.Timeouts()
        timeouts.commandMillis = 200
        timeouts.retryAfter = 0
        let c = RedisClient(url: redis.url, timeouts: timeouts, monotonic: { 0 })
        #expect(throws: RedisError.timeout) { try c.run(["BLPOP", "nothing", "2"]) }
        #expect(!c.isAvailable)
        #expect(try c.run(["PING"]) == .status("PONG"))
        #expect(c.isAvailable)
    }

    @Test func anOutageFailsFastDuringTheBackoffAndRecovers() throws {
        let redis = try LiveRedis()
        var clock = 0.0
        let c = RedisClient(url: redis.url, monotonic: { clock })
        try c.run(["SET", "k", "v"])
        redis.stop()
        #expect { try c.run(["GET", "k"]) } throws: { ($0 as? RedisError)?.isConnectionFailure == true }
        // Within the retry period the client does not try again.
        #expect { try c.run(["GET", "k"]) } throws: { e in
            if case .unavailable = e as? RedisError { return true }
            return false
        }
        clock = 2
        #expect { try c.run(["GET", "k"]) } throws: { e in
            if case .connect = e as? RedisError { return true }
            return false
        }
        try redis.start()
        clock = 4
        #expect(try c.run(["PING"]) == .status("PONG"))
        #expect(c.isAvailable)
    }

    @Test func connectingToNothingIsAConnectError() throws {
        let url = RedisURL(host: "127.0.0.1", port: try LiveRedis.freePort())
        #expect { try RedisConnection(url: url, connectTimeoutMillis: 200, commandTimeoutMillis: 200) } throws: { e in
            if case .connect = e as? RedisError { return true }
            return false
        }
    }

    @Test func theSubscriberQueuesMessagesAndComesBackAfterAnOutage() throws {
        let redis = try LiveRedis()
        let woken = Counter()
        let sub = RedisSubscriber(url: redis.url, channels: ["a", "b"]) { woken.add() }
        #expect(sub.start())
        defer { sub.stop() }
        try waitFor { sub.connected }
        let pub = RedisClient(url: redis.url, monotonic: { 0 })
        #expect(try pub.run(["PUBLISH", "a", "one"]) == .integer(1))
        try pub.run(bytes: [Array("PUBLISH".utf8), Array("b".utf8), [0, 1, 2]])
        var got: [RedisMessage] = []
        try waitFor {
            got += sub.drain()
            return got.count == 2
        }
        #expect(
            got == [
                RedisMessage(channel: "a", payload: Array("one".utf8)), RedisMessage(channel: "b", payload: [0, 1, 2]),
            ])
        #expect(woken.value >= 2)
        redis.stop()
        try waitFor { !sub.connected }
        try redis.start()
        try waitFor { sub.connected }
        try pub.run(["PUBLISH", "a", "two"])
        try waitFor { sub.drain() == [RedisMessage(channel: "a", payload: Array("two".utf8))] }
    }
}

/// Polls a condition every 20 ms for up to 10 s (events from another thread or process).
func waitFor(_ condition: () throws -> Bool) throws {
    for _ in 0..<500 {
        if try condition() { return }
        usleep(20_000)
    }
    throw LiveRedisError.notAnswering
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    var value: Int { lock.withLock { n } }
    func add() { lock.withLock { n += 1 } }
}

@Suite(.enabled(if: LiveRedis.available, "redis-server is not installed"), .serialized)
struct RedisRestartTests {
    @Test func aRestartWhileIdleCostsNoFailedCall() throws {
        let redis = try LiveRedis()
        let c = RedisClient(url: redis.url, monotonic: { 0 })
        #expect(try c.run(["PING"]) == .status("PONG"))
        redis.stop()
        try redis.start()
        #expect(try c.run(["PING"]) == .status("PONG"))
        #expect(c.isAvailable)
    }

    @Test func aConnectionOpenedAfterAFailureOrABreakMarksTheRecovery() throws {
        let redis = try LiveRedis()
        var clock = 1.0
        let c = RedisClient(url: redis.url, monotonic: { clock })
        try c.run(["PING"])
        #expect(c.recoveredAt == -.infinity)  // the first connection is no recovery
        // A restart under an idle connection: the next call reconnects and marks it.
        redis.stop()
        try redis.start()
        clock = 5
        try c.run(["PING"])
        #expect(c.recoveredAt == 5)
        // An outage: failed calls, then the first connection after them.
        redis.stop()
        clock = 6
        #expect(throws: RedisError.self) { try c.run(["PING"]) }
        #expect(c.recoveredAt == 5)
        try redis.start()
        clock = 9
        try c.run(["PING"])
        #expect(c.recoveredAt == 9)
    }

    @Test func theSubscriberCountsEverySubscription() throws {
        let redis = try LiveRedis()
        let sub = RedisSubscriber(url: redis.url, channels: ["a"]) {}
        #expect(sub.start())
        defer { sub.stop() }
        try waitFor { sub.subscriptions == 1 }
        redis.stop()
        try waitFor { !sub.connected }
        try redis.start()
        try waitFor { sub.subscriptions == 2 && sub.connected }
    }
}

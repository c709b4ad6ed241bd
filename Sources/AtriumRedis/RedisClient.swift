/// A Redis client for one thread (the service thread): connects on first use, retries a command once
/// on a fresh connection when an idle connection turns out broken (I/O error), and after a failure
/// stays down for `retryAfter` seconds, failing at once with `unavailable` instead of blocking every
/// call on a dead server; the next call after that tries to connect again. So an outage costs the
/// caller at most one connect timeout per retry period, and recovery needs no operator.
public final class RedisClient {
    public struct Timeouts: Sendable {
        public var connectMillis = 300
        public var commandMillis = 500
        /// Seconds between reconnect attempts after a failure.
        public var retryAfter = 1.0

        public init() {}
    }

    public let url: RedisURL
    let timeouts: Timeouts
    let monotonic: () -> Double
    private var connection: RedisConnection?
    private var retryAt = 0.0
    /// The failure that took the connection down, nil while it works.
    public private(set) var lastError: RedisError?
    /// Scripts loaded on the current connection (EVALSHA), by source text.
    private var loaded: [String: String] = [:]
    /// When a connection last opened after a failure or after an idle connection broke (Redis went
    /// away, perhaps restarted empty), on `monotonic`'s clock; minus infinity if it never did. The
    /// cluster holds back decisions that assume everyone else is connected for a while after it.
    public private(set) var recoveredAt = -Double.infinity
    private var broke = false

    public init(url: RedisURL, timeouts: Timeouts = Timeouts(), monotonic: @escaping () -> Double) {
        self.url = url
        self.timeouts = timeouts
        self.monotonic = monotonic
    }

    /// Whether the last call reached Redis.
    public var isAvailable: Bool { lastError == nil }

    /// Runs one command. An error reply throws `.server`; a broken connection throws and is replaced on
    /// a later call.
    @discardableResult
    public func run(_ args: [String]) throws(RedisError) -> RedisReply {
        try run(bytes: args.map { Array($0.utf8) })
    }

    @discardableResult
    public func run(bytes args: [[UInt8]]) throws(RedisError) -> RedisReply {
        var c = try connected()
        let reply: RedisReply
        do throws(RedisError) { reply = try c.command(bytes: args) } catch {
            // A connection that worked before and broke while idle (Redis restarted) fails its next
            // write or read with an I/O error: try once more on a fresh connection before giving up.
            guard case .io = error else {
                fail(error)
                throw error
            }
            connection = nil
            broke = true
            c = try connected()
            do throws(RedisError) { reply = try c.command(bytes: args) } catch {
                fail(error)
                throw error
            }
        }
        if case .error(let message) = reply { throw .server(message) }
        return reply
    }

    /// Runs a Lua script (EVALSHA, loading it on first use per connection). Scripts are how Atrium makes
    /// a read-check-write atomic (a name claimed with its room, an owner refreshed only by itself).
    @discardableResult
    public func eval(_ script: String, keys: [String], args: [String]) throws(RedisError) -> RedisReply {
        let tail = [String(keys.count)] + keys + args
        if let sha = loaded[script] {
            do throws(RedisError) {
                return try run(["EVALSHA", sha] + tail)
            } catch {
                guard case .server(let m) = error, m.hasPrefix("NOSCRIPT") else { throw error }
            }
        }
        guard let sha = try run(["SCRIPT", "LOAD", script]).string else {
            throw .unexpectedReply("SCRIPT LOAD gave no digest")
        }
        loaded[script] = sha
        return try run(["EVALSHA", sha] + tail)
    }

    /// Drops the connection (tests; shutdown).
    public func close() {
        connection = nil
        loaded = [:]
    }

    private func connected() throws(RedisError) -> RedisConnection {
        if let c = connection, !c.isBroken { return c }
        let now = monotonic()
        if let lastError, now < retryAt { throw .unavailable(lastError.description) }
        do throws(RedisError) {
            let c = try RedisConnection(
                url: url, connectTimeoutMillis: timeouts.connectMillis, commandTimeoutMillis: timeouts.commandMillis)
            connection = c
            loaded = [:]
            if lastError != nil || broke { recoveredAt = now }
            lastError = nil
            broke = false
            return c
        } catch {
            fail(error)
            throw error
        }
    }

    private func fail(_ error: RedisError) {
        connection = nil
        loaded = [:]
        lastError = error
        retryAt = monotonic() + timeouts.retryAfter
    }
}

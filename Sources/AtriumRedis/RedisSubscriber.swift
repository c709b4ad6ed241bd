import AtriumSync

#if canImport(Glibc)
    import Glibc
#endif

/// A message published on a channel this node subscribes to.
public struct RedisMessage: Sendable, Equatable {
    public var channel: String
    public var payload: [UInt8]

    public init(channel: String, payload: [UInt8]) {
        self.channel = channel
        self.payload = payload
    }
}

/// Listens on a fixed set of pub/sub channels on its own connection and thread (a subscribed
/// connection can do nothing else), queueing what arrives for the owner, whom it wakes with `notify`;
/// the owner takes the queue with `drain` on its own thread. Reconnects by itself every half second
/// while Redis is away; `connected` says whether it is subscribed now.
public final class RedisSubscriber: @unchecked Sendable {
    public let url: RedisURL
    public let channels: [String]
    private let notify: @Sendable () -> Void
    private let queue = MessageQueue()
    private let state = Locked<(stopping: Bool, connected: Bool, connection: RedisConnection?, subscriptions: Int)>(
        (false, false, nil, 0))
    private let thread = Locked<JoinableThread?>(nil)

    public init(url: RedisURL, channels: [String], notify: @escaping @Sendable () -> Void) {
        self.url = url
        self.channels = channels
        self.notify = notify
    }

    public var connected: Bool { state.withLock { $0.connected } }

    /// How many times the subscription was made (it is made again after every reconnect): a change
    /// tells the owner that Redis came back and may have lost what it held.
    public var subscriptions: Int { state.withLock { $0.subscriptions } }

    /// Takes the messages queued since the last call, oldest first.
    public func drain() -> [RedisMessage] { queue.drain() }

    /// Waits up to `millis` for a message `match` accepts and takes it out of the queue (a reply to a
    /// call this thread sent); nil at the deadline.
    public func take(within millis: Int, where match: (RedisMessage) -> Bool) -> RedisMessage? {
        queue.take(within: millis, where: match)
    }

    public func start() -> Bool {
        guard let started = try? JoinableThread.start({ self.run() }) else { return false }
        thread.withLock { $0 = started }
        return true
    }

    /// Stops the thread (interrupting a blocked read) and waits for it.
    public func stop() {
        state.withLock { s in
            s.stopping = true
            s.connection?.interrupt()
        }
        thread.withLock { t in
            defer { t = nil }
            return t
        }?.join()
    }

    private func run() {
        while !state.withLock({ $0.stopping }) {
            listen()
            state.withLock {
                $0.connected = false
                $0.connection = nil
            }
            notify()
            for _ in 0..<5 where !state.withLock({ $0.stopping }) { usleep(100_000) }
        }
    }

    /// One connection's life: subscribe, then queue messages until the connection fails or is interrupted.
    private func listen() {
        let c: RedisConnection
        do throws(RedisError) {
            c = try RedisConnection(url: url, connectTimeoutMillis: 500, commandTimeoutMillis: 0)
            try c.append(["SUBSCRIBE"] + channels)
        } catch {
            return
        }
        let go = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            s.connection = c
            return true
        }
        guard go else { return }
        var confirmed = 0
        while true {
            let reply: RedisReply
            do throws(RedisError) { reply = try c.nextReply() } catch { return }
            guard let parts = reply.array, parts.count == 3, let kind = parts[0].string else { continue }
            if kind == "subscribe" {
                confirmed += 1
                if confirmed == channels.count {
                    state.withLock {
                        $0.connected = true
                        $0.subscriptions += 1
                    }
                    notify()
                }
            } else if kind == "message", let channel = parts[1].string, case .bulk(let payload) = parts[2] {
                queue.append(RedisMessage(channel: channel, payload: payload))
                notify()
            }
        }
    }
}

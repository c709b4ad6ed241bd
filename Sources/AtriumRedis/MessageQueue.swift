import AtriumSync

/// The subscriber's inbox: messages appended by its thread, drained by the owner, or waited for one
/// by one (a relayed call waiting for its reply) with a deadline.
final class MessageQueue: Sendable {
    private let items = Monitor<[RedisMessage]>([])

    func append(_ m: RedisMessage) {
        items.update { $0.append(m) }
    }

    func drain() -> [RedisMessage] {
        items.withLock { queued in
            let out = queued
            queued.removeAll(keepingCapacity: true)
            return out
        }
    }

    /// Removes and returns the first message `match` accepts, waiting up to `millis` for it; the others
    /// stay queued in order.
    func take(within millis: Int, where match: (RedisMessage) -> Bool) -> RedisMessage? {
        items.wait(seconds: Double(millis) / 1000) { queued in
            queued.firstIndex(where: match).map { queued.remove(at: $0) }
        }
    }
}

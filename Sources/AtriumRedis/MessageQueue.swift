#if canImport(Glibc)
    import Glibc
#endif

/// The subscriber's inbox: messages appended by its thread, drained by the owner, or waited for one
/// by one (a relayed call waiting for its reply) with a deadline. A pthread mutex and condition.
final class MessageQueue: @unchecked Sendable {
    private var items: [RedisMessage] = []
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func append(_ m: RedisMessage) {
        pthread_mutex_lock(mutex)
        items.append(m)
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }

    func drain() -> [RedisMessage] {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let out = items
        items.removeAll(keepingCapacity: true)
        return out
    }

    /// Removes and returns the first message `match` accepts, waiting up to `millis` for it; the others
    /// stay queued in order.
    func take(within millis: Int, where match: (RedisMessage) -> Bool) -> RedisMessage? {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanos = Int(deadline.tv_nsec) + (millis % 1000) * 1_000_000
        deadline.tv_sec += millis / 1000 + nanos / 1_000_000_000
        deadline.tv_nsec = nanos % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let i = items.firstIndex(where: match) { return items.remove(at: i) }
            if pthread_cond_timedwait(cond, mutex, &deadline) == ETIMEDOUT {
                if let i = items.firstIndex(where: match) { return items.remove(at: i) }
                return nil
            }
        }
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// A value shared between two threads behind a pthread mutex: the media worker's command queue, events
/// and stats snapshot; the Redis subscriber's queue. Taken a few times per batch or per second, never
/// per packet. (pthread rather than Synchronization's `Mutex`, whose futex path ThreadSanitizer does
/// not see, so `make tsan` checks these hand-offs too.)
public final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

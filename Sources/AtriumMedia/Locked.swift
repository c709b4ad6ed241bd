#if canImport(Glibc)
    import Glibc
#endif

/// A value shared between the worker thread and the service thread, behind a pthread mutex. Used for the
/// command queue, the reported events and the stats snapshot: a few times per batch or per second,
/// never per packet. (pthread rather than Synchronization's `Mutex`, whose futex path
/// ThreadSanitizer does not see, so `make tsan` checks these hand-offs too.)
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

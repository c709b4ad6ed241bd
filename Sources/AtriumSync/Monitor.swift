#if canImport(Glibc)
    import Glibc
#endif

/// A value behind a pthread mutex with a condition on the monotonic clock: one thread changes the value
/// and wakes the waiters, another sleeps until the value gives it something or a timeout passes. The
/// Redis subscriber's inbox and a webhook delivery thread's wake-up. (pthread rather than
/// Synchronization's `Mutex`, so ThreadSanitizer sees the hand-off.)
public final class Monitor<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    public init(_ value: Value) {
        self.value = value
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

    /// Runs `body` on the value under the lock, without waking anyone.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` on the value under the lock, then wakes every waiter.
    public func update(_ body: (inout Value) -> Void) {
        pthread_mutex_lock(mutex)
        body(&value)
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Waits up to `seconds` (0 to 3600) for `take` to find something in the value: `take` runs under
    /// the lock at once, after every wake-up and once more at the timeout; nil if it never found any.
    public func wait<R>(seconds: Double, _ take: (inout Value) -> R?) -> R? {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let s = seconds.isFinite ? max(0, min(seconds, 3600)) : 0
        let whole = Int(s)
        deadline.tv_sec += whole
        deadline.tv_nsec += Int((s - Double(whole)) * 1e9)
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let r = take(&value) { return r }
            if pthread_cond_timedwait(cond, mutex, &deadline) == ETIMEDOUT { return take(&value) }
        }
    }
}

internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// A pthread condition a delivery thread sleeps on until there is work or its next retry is due.
/// (pthread rather than Synchronization's `Mutex`, so ThreadSanitizer sees the hand-off.)
final class WakeSignal: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var signalled = false

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

    func signal() {
        pthread_mutex_lock(mutex)
        signalled = true
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Sleeps until signalled or `seconds` pass; a signal sent before the call is not lost.
    func wait(seconds: Double) {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let s = max(0, min(seconds, 3600))
        let whole = Int(s)
        ts.tv_sec += whole
        ts.tv_nsec += Int((s - Double(whole)) * 1e9)
        if ts.tv_nsec >= 1_000_000_000 {
            ts.tv_sec += 1
            ts.tv_nsec -= 1_000_000_000
        }
        pthread_mutex_lock(mutex)
        while !signalled {
            if pthread_cond_timedwait(cond, mutex, &ts) == ETIMEDOUT { break }
        }
        signalled = false
        pthread_mutex_unlock(mutex)
    }
}

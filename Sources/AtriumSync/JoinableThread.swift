#if canImport(Glibc)
    import Glibc
#endif

/// A thread of our own (a media worker's, a webhook endpoint's delivery, the Redis subscriber's),
/// started with `start` and waited for once with `join`. The closure it runs, and what that captures,
/// stays alive until it returns.
public struct JoinableThread: Sendable {
    private let handle: pthread_t

    /// Starts a thread (default attributes) that runs `body`; a failed `pthread_create` throws its
    /// error number.
    public static func start(_ body: @escaping @Sendable () -> Void) throws(ThreadStartError) -> JoinableThread {
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var handle = pthread_t()
        let rc = pthread_create(
            &handle, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, context)
        guard rc == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            throw ThreadStartError(errno: rc)
        }
        return JoinableThread(handle: handle)
    }

    /// Waits for the thread to end.
    public func join() {
        pthread_join(handle, nil)
    }
}

/// `pthread_create` refused a thread (EAGAIN: a limit on threads or memory).
public struct ThreadStartError: Error, Equatable {
    public let errno: Int32
}

/// The closure a new thread runs, handed to it through `pthread_create`'s context pointer.
private final class ThreadBody {
    let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

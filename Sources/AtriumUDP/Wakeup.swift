internal import CAtriumUDP

/// An eventfd that interrupts a poller's wait from any thread: how another thread (signaling, a timer)
/// tells a media worker to look at its command queue.
///
/// It holds only an immutable descriptor, and eventfd writes are thread-safe, so it is `Sendable`.
/// Several `wake()` calls before the worker drains it coalesce into one wakeup.
public final class Wakeup: Sendable {
    let fileDescriptor: Int32

    public init() throws(UDPError) {
        let fd = atrium_eventfd_create()
        guard fd >= 0 else { throw .poll(errno: -fd) }
        fileDescriptor = fd
    }

    deinit { _ = atrium_close(fileDescriptor) }

    /// Makes the poller's current or next wait return. Safe from any thread.
    public func wake() { _ = atrium_eventfd_signal(fileDescriptor) }

    /// Resets the counter, so the next wait blocks again.
    func drain() { _ = atrium_eventfd_drain(fileDescriptor) }
}

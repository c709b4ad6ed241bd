internal import CAtriumUDP

/// An epoll instance watching sockets for readability, with a `Wakeup` already registered so another
/// thread can interrupt a wait.
///
/// Each registered socket reports the token the owner chose (a socket or transport index), so the
/// worker loop maps readiness to its state without a lookup by descriptor. Level-triggered: a socket
/// that still has datagrams after one batch is reported again on the next wait. The poller belongs to one
/// thread; only its `wakeup` is shared.
public final class EpollPoller {
    /// The token reserved for the wakeup; `register` refuses it.
    public static let wakeupToken = UInt64.max
    /// The most ready sockets one wait reports.
    public static let maxEvents = 64

    /// Hand this to other threads; `wake()` makes `wait` return with `woken == true`.
    public let wakeup: Wakeup
    private let fileDescriptor: Int32
    private let tokens: UnsafeMutablePointer<UInt64>

    public init() throws(UDPError) {
        let fd = atrium_epoll_create()
        guard fd >= 0 else { throw .poll(errno: -fd) }
        let w: Wakeup
        do {
            w = try Wakeup()
        } catch {
            _ = atrium_close(fd)
            throw error
        }
        let rc = atrium_epoll_add(fd, w.fileDescriptor, Self.wakeupToken)
        guard rc == 0 else {
            _ = atrium_close(fd)
            throw .poll(errno: -rc)
        }
        fileDescriptor = fd
        wakeup = w
        tokens = .allocate(capacity: Self.maxEvents)
    }

    deinit {
        _ = atrium_close(fileDescriptor)
        tokens.deallocate()
    }

    /// Reports `token` whenever `socket` has datagrams waiting. The poller does not keep the socket
    /// alive: deregister it (or let closing it remove it from the set) before dropping it.
    public func register(_ socket: UDPSocket, token: UInt64) throws(UDPError) {
        guard token != Self.wakeupToken else { throw .reservedToken }
        let rc = atrium_epoll_add(fileDescriptor, socket.fileDescriptor, token)
        guard rc == 0 else { throw .poll(errno: -rc) }
    }

    /// Reports `token` whenever the listener has connections waiting.
    public func register(_ listener: TCPListener, token: UInt64) throws(UDPError) {
        try add(listener.fileDescriptor, token: token)
    }

    /// Stops reporting the listener (the owner pauses accepting, e.g. out of descriptors).
    public func deregister(_ listener: TCPListener) {
        _ = atrium_epoll_remove(fileDescriptor, listener.fileDescriptor)
    }

    /// Reports `token` whenever `stream` has bytes (or its end) waiting, and, after
    /// `watchWritable(_:token:true)`, whenever it can take more.
    public func register(_ stream: TCPStream, token: UInt64) throws(UDPError) {
        try add(stream.fileDescriptor, token: token)
    }

    /// Also reports `stream` when writable (`writable`), or again only when readable.
    public func watchWritable(_ stream: TCPStream, token: UInt64, _ writable: Bool) throws(UDPError) {
        let rc = atrium_epoll_modify(fileDescriptor, stream.fileDescriptor, token, writable ? 1 : 0)
        guard rc == 0 else { throw .poll(errno: -rc) }
    }

    /// Closing a stream's descriptor removes it from the set; this does it before.
    public func deregister(_ stream: TCPStream) {
        _ = atrium_epoll_remove(fileDescriptor, stream.fileDescriptor)
    }

    private func add(_ fd: Int32, token: UInt64) throws(UDPError) {
        guard token != Self.wakeupToken else { throw .reservedToken }
        let rc = atrium_epoll_add(fileDescriptor, fd, token)
        guard rc == 0 else { throw .poll(errno: -rc) }
    }

    public func deregister(_ socket: UDPSocket) throws(UDPError) {
        let rc = atrium_epoll_remove(fileDescriptor, socket.fileDescriptor)
        guard rc == 0 else { throw .poll(errno: -rc) }
    }

    /// Blocks until a registered socket is readable, the wakeup fires, or `timeout` passes (nil: no
    /// timeout). Replaces `ready` with the tokens of readable sockets (keeping its capacity) and returns
    /// whether the wakeup fired, which it also resets. A signal interrupting the wait counts as a timeout.
    public func wait(timeout: Duration?, ready: inout [UInt64]) throws(UDPError) -> Bool {
        ready.removeAll(keepingCapacity: true)
        let n = atrium_epoll_wait(fileDescriptor, tokens, Int32(Self.maxEvents), Self.milliseconds(timeout))
        guard n >= 0 else { throw .poll(errno: -n) }
        var woken = false
        for i in 0..<Int(n) {
            if tokens[i] == Self.wakeupToken {
                woken = true
                wakeup.drain()
            } else {
                ready.append(tokens[i])
            }
        }
        return woken
    }

    /// Rounds up so a short positive timeout does not become a busy poll.
    static func milliseconds(_ timeout: Duration?) -> Int32 {
        guard let timeout else { return -1 }
        guard timeout > .zero else { return 0 }
        let (seconds, attoseconds) = timeout.components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: ms)
    }
}

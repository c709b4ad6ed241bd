#if canImport(Glibc)
    import Glibc
#endif

/// Why a UDP, epoll or eventfd call failed. System failures carry the `errno` value the kernel gave, so
/// the owner can count them by cause; none of them traps.
public enum UDPError: Error, Equatable, Sendable {
    /// The text is not an `a.b.c.d:port` or `[v6]:port` socket address.
    case invalidAddress(String)
    /// socket(2), bind(2) or getsockname(2) failed.
    case open(errno: Int32)
    /// setsockopt(2) or getsockopt(2) failed.
    case socketOption(errno: Int32)
    /// accept4(2) failed with something other than "nothing waiting".
    case accept(errno: Int32)
    /// recvmmsg(2) failed with something other than "nothing waiting".
    case receive(errno: Int32)
    /// sendmmsg(2) failed with something other than "socket buffer full".
    case send(errno: Int32)
    /// A datagram is larger than the socket's preallocated slot.
    case datagramTooLarge(size: Int, limit: Int)
    /// epoll_create1(2), epoll_ctl(2), epoll_wait(2) or eventfd(2) failed.
    case poll(errno: Int32)
    /// The token is reserved for the poller's own wakeup.
    case reservedToken
    /// The kernel reported an address family other than IPv4 or IPv6.
    case unsupportedAddressFamily
}

extension UDPError {
    /// A stream read or write failed because the kernel gave up on a peer that acknowledged nothing
    /// for the connection's TCP_USER_TIMEOUT (ETIMEDOUT).
    public var timedOut: Bool {
        switch self {
        case .receive(let e), .send(let e): e == ETIMEDOUT
        default: false
        }
    }
}

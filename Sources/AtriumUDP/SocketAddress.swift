/// An IPv4 or IPv6 address and UDP port, as a plain value: hashable and copyable without allocating, so
/// the packet path can key tables by it.
///
/// IPv4 addresses are held in host byte order (`127.0.0.1` is `0x7F00_0001`); IPv6 addresses as two
/// 64-bit halves, most significant first, as `AtriumSTUN`'s `STUNIPAddress` holds them.
public enum SocketAddress: Hashable, Sendable {
    case v4(address: UInt32, port: UInt16)
    case v6(high: UInt64, low: UInt64, port: UInt16, scopeID: UInt32)

    /// `a.b.c.d:port`.
    public static func ipv4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, port: UInt16) -> SocketAddress {
        .v4(address: UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d), port: port)
    }

    /// `127.0.0.1:port`: the only address tests and `--dev` runs may send to.
    public static func loopbackV4(port: UInt16) -> SocketAddress { .ipv4(127, 0, 0, 1, port: port) }

    /// `[::1]:port`.
    public static func loopbackV6(port: UInt16) -> SocketAddress { .v6(high: 0, low: 1, port: port, scopeID: 0) }

    public var port: UInt16 {
        switch self {
        case .v4(_, let port): port
        case .v6(_, _, let port, _): port
        }
    }

    /// The same address with another port.
    public func withPort(_ port: UInt16) -> SocketAddress {
        switch self {
        case .v4(let a, _): .v4(address: a, port: port)
        case .v6(let h, let l, _, let s): .v6(high: h, low: l, port: port, scopeID: s)
        }
    }

    public var isIPv6: Bool {
        if case .v6 = self { return true }
        return false
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// Checks before start-up that an address and port can be bound, so that a wrong `--bind` or a port
/// in use is refused with what to do instead of a banner over a server that does not listen (lws
/// retries a failed listen quietly). The probe binds a socket with `SO_REUSEADDR`, as lws does, and
/// closes it at once: nothing is sent.
public enum ListenProbe {
    /// Why an address cannot be bound.
    public enum Problem: Equatable, Sendable {
        /// The port is taken on that address (EADDRINUSE).
        case portInUse
        /// The address is not one of this machine's (EADDRNOTAVAIL).
        case notLocal
        /// Ports below 1024 need privileges (EACCES).
        case privileged
        /// Not an IP address literal.
        case notAnAddress
        /// Another errno.
        case other(Int32)
    }

    /// nil when `address:port` can be bound over `udp` or TCP.
    public static func check(address: String, port: Int, udp: Bool = false) -> Problem? {
        var v4 = in_addr()
        var v6 = in6_addr()
        let isV4 = inet_pton(AF_INET, address, &v4) == 1
        let isV6 = !isV4 && inet_pton(AF_INET6, address, &v6) == 1
        guard isV4 || isV6, (0...65535).contains(port) else { return .notAnAddress }
        let kind = Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue)
        let fd = socket(isV4 ? AF_INET : AF_INET6, kind, 0)
        guard fd >= 0 else { return .other(errno) }
        defer { close(fd) }
        var one: Int32 = 1
        // TCP as lws binds it (a port in TIME_WAIT is free); UDP without, so a taken port is seen.
        if !udp { _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let rc: Int32
        if isV4 {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = UInt16(port).bigEndian
            a.sin_addr = v4
            rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        } else {
            var one6: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one6, socklen_t(MemoryLayout<Int32>.size))
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = UInt16(port).bigEndian
            a.sin6_addr = v6
            rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        guard rc != 0 else { return nil }
        return problem(errno: errno)
    }

    /// The problem an errno of bind(2) stands for.
    public static func problem(errno e: Int32) -> Problem {
        switch e {
        case EADDRINUSE: .portInUse
        case EADDRNOTAVAIL: .notLocal
        case EACCES: .privileged
        default: .other(e)
        }
    }

    /// What to tell the person: the address, the port and the flag that changes them.
    public static func message(
        _ problem: Problem, address: String, port: Int, addressFlag: String, portFlag: String, proto: String
    ) -> String {
        switch problem {
        case .portInUse:
            "\(proto) port \(port) is already in use on \(address) (another atrium running?): stop that process, "
                + "or choose another port with \(portFlag) N (\(portFlag) 0 picks a free one)"
        case .notLocal:
            "\(addressFlag) \(address) is not an address of this machine: use 127.0.0.1 (this machine only), "
                + "0.0.0.0 (every interface) or one of the machine's own addresses"
        case .privileged:
            "\(proto) port \(port) needs root privileges: choose a port above 1023 with \(portFlag), "
                + "or grant the binary CAP_NET_BIND_SERVICE"
        case .notAnAddress:
            "\(addressFlag) \(address) is not an IPv4 or IPv6 address"
        case .other(let e):
            "cannot bind \(proto) \(address):\(port) (\(addressFlag), \(portFlag)): \(String(cString: strerror(e)))"
        }
    }
}

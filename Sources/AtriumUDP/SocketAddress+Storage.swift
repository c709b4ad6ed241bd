internal import CAtriumUDP

/// Conversions to and from the kernel's `sockaddr_storage`; they stay inside this module so no C type
/// appears in its API.
extension SocketAddress {
    init(storage: UnsafePointer<sockaddr_storage>) throws(UDPError) {
        var bytes = (UInt64(0), UInt64(0))
        var port: UInt16 = 0
        var scope: UInt32 = 0
        let family = withUnsafeMutableBytes(of: &bytes) { raw in
            atrium_udp_read_address(storage, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), &port, &scope)
        }
        // The bytes are in network order; read them as big-endian halves.
        let high = UInt64(bigEndian: bytes.0)
        let low = UInt64(bigEndian: bytes.1)
        switch family {
        case 4: self = .v4(address: UInt32(truncatingIfNeeded: high >> 32), port: port)
        case 6: self = .v6(high: high, low: low, port: port, scopeID: scope)
        default: throw .unsupportedAddressFamily
        }
    }

    func write(to storage: UnsafeMutablePointer<sockaddr_storage>) {
        switch self {
        case .v4(let a, let port):
            _ = atrium_udp_make_ipv4(storage, a, port)
        case .v6(let h, let l, let port, let scope):
            var bytes = (h.bigEndian, l.bigEndian)
            withUnsafeBytes(of: &bytes) { raw in
                _ = atrium_udp_make_ipv6(storage, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), port, scope)
            }
        }
    }
}

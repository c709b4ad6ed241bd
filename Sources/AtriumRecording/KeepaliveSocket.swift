#if canImport(Glibc)
    import Glibc
#endif

/// A UDP socket on 127.0.0.1 (one fd, closed in `deinit`) the service thread sends recording
/// keepalives from: an empty RTCP receiver report (RFC 3550 section 6.4.2) to each stream's RTCP port
/// every tick. ffmpeg ends its input once no datagram came for `-listen_timeout` seconds; the
/// keepalives hold it open through a sharer's pause, and when they stop (the recording was stopped,
/// or the server died) ffmpeg finishes the file by itself.
final class KeepaliveSocket {
    private let fd: Int32

    init?() {
        fd = socket(
            AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
    }

    deinit { close(fd) }

    /// `V=2, RC=0, PT=201 (RR), length 1`, then the sender's SSRC.
    static func receiverReport(ssrc: UInt32) -> [UInt8] {
        [
            0x80, 201, 0x00, 0x01, UInt8(truncatingIfNeeded: ssrc >> 24), UInt8(truncatingIfNeeded: ssrc >> 16),
            UInt8(truncatingIfNeeded: ssrc >> 8), UInt8(truncatingIfNeeded: ssrc),
        ]
    }

    func send(_ bytes: [UInt8], toLoopbackPort port: Int) {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
        addr.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        _ = withUnsafePointer(to: &addr) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { b in
                    sendto(
                        fd, b.baseAddress, b.count, Int32(MSG_DONTWAIT), sa, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }
}
